"""One time unit for the tests that run on a real clock (python-websockets' ``tests/utils.py`` idea).

Every sleep, short deadline and fake model time in the socket tests is a multiple of :data:`MS`. On a slow
or busy machine set ``VOICE_TESTS_TIMING_FACTOR`` (e.g. ``2``) to stretch them all at once. Generous
safety timeouts (seconds to wait for an event that normally comes in milliseconds) stay as they are.
"""

from __future__ import annotations

import os

TIMING_FACTOR = float(os.environ.get("VOICE_TESTS_TIMING_FACTOR", "1"))

MS: float = 0.001 * TIMING_FACTOR
"""One millisecond of test time, in seconds."""

FAKE_MS: float = 1000 * MS
"""The ``scale`` of the fakes' :class:`~voice.runtime.fakes.Delay` at which a nominal fake millisecond lasts one MS:
``tagged_runtime(0.1 * FAKE_MS)`` runs the fakes at a tenth of their nominal times."""
