"""Which models the runtime's worker threads are using, for whoever needs to know: an observer of
:class:`~voice.runtime.runtime.ModelRuntime`, attached by the tools that measure how fast a cancelled turn
lets go of the models (the soak, tests) or wait until the models are idle (the spoken quality bench). The server
itself attaches none: nothing in the serving path reads it.

Thread-safe: the runtime calls it from their worker threads.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable


class ModelActivity:
    """How many jobs use each model now, and when each model was last let go (``time.perf_counter_ns``)."""

    def __init__(self, models: Iterable[str]) -> None:
        self._lock = threading.Lock()
        self.active: dict[str, int] = dict.fromkeys(models, 0)
        self.released_ns: dict[str, int] = dict.fromkeys(self.active, 0)

    def acquired(self, model: str) -> None:
        with self._lock:
            self.active[model] = self.active.get(model, 0) + 1

    def released(self, model: str) -> None:
        with self._lock:
            self.active[model] -= 1
            self.released_ns[model] = time.perf_counter_ns()

    def idle(self) -> bool:
        """True when no worker thread is using any model."""
        with self._lock:
            return not any(self.active.values())
