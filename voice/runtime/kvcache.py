"""Saved KV states of the in-process LLM, one per conversation, in an LRU within a stated memory bound.

llama.cpp's context holds one token sequence at a time. When two sessions alternate, each turn would
re-evaluate its whole history, because the context holds the other session's. So after every generation the
context's KV state is saved here, keyed by its tokens; before the next generation, the saved state sharing
the longest token prefix with the new prompt is restored when it holds more of it than the live context.

Keyed by token prefix, as llama-cpp-python's ``LlamaRAMCache`` does, not by session: no session id has to
reach the LLM (its interface stays the same for every backend), two sessions that said the same things
share a state, and a speculative reply's state serves the committed turn that follows it. Unlike
``LlamaRAMCache`` (which keeps whole-context states with logits, ~50 MB each here), a state is one
sequence's KV cells only, and a state made redundant by a newer one (the same conversation one turn on) is
dropped at once, so the cache holds about one state per live conversation.

When the states' size would pass ``limit_bytes``, the least recently used ones are evicted. Their keys are
remembered (not their data), so that the turn that would have used one can report what eviction cost it:
the tokens it evaluated again.

Pure bookkeeping: the states are opaque (bytes for llama.cpp, anything for fakes). Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

S = TypeVar("S")

REDUNDANT_TAIL_TOKENS = 16
"""When a generation's state is saved, the state it started from is dropped if it holds at most this many
tokens beyond what the new one shares with it, and the two share more than the prefix every conversation
starts with: the same conversation one turn on (the last reply tokens differ, as the chat template renders
them slightly differently in the next prompt). States that are a prefix of the new one are always dropped."""

MIN_RESTORE_GAIN_TOKENS = 8
"""Restore a saved state only if it holds at least this many more prompt tokens than the live context:
copying a state in costs about as much as evaluating a few tokens."""

REMEMBER_EVICTED = 64
"""Keys of evicted states remembered (tokens only), to report what an eviction cost a later turn."""


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two int token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


@dataclass(frozen=True)
class KvStats:
    """The cache's size and counters since start (for the turn report and ``/metrics``)."""

    limit_bytes: int
    bytes_in_use: int
    states: int
    saves: int
    restores: int
    evictions: int
    """States evicted to stay within ``limit_bytes``."""
    reevaluated_tokens: int
    """Prompt tokens evaluated again because the state holding them had been evicted."""
    save_ms_total: float
    restore_ms_total: float


@dataclass(frozen=True)
class KvPlan:
    """What to do before evaluating a prompt."""

    restore: tuple[int, ...] | None
    """Key of the saved state to restore first; None: keep the live context."""
    cached_tokens: int
    """Prompt tokens held by what will be in the context (the restored state or the live context)."""
    reevaluated_tokens: int
    """Prompt tokens that an evicted state held beyond ``cached_tokens``: evaluated again because of eviction."""


class KvCache(Generic[S]):
    """LRU of saved states keyed by token sequence, at most ``limit_bytes`` in total (0 disables it)."""

    def __init__(self, limit_bytes: int) -> None:
        if limit_bytes < 0:
            raise ValueError(f"limit_bytes must be 0 (off) or positive, got {limit_bytes}")
        self.limit_bytes = limit_bytes
        self._lock = threading.Lock()
        self._states: OrderedDict[tuple[int, ...], tuple[np.ndarray, S, int]] = OrderedDict()
        self._evicted: deque[np.ndarray] = deque(maxlen=REMEMBER_EVICTED)
        self._bytes = 0
        self._last_put: tuple[int, ...] | None = None
        self._source: tuple[int, ...] | None = None
        self._saves = self._restores = self._evictions = self._reevaluated = 0
        self._save_ms = self._restore_ms = 0.0

    @property
    def enabled(self) -> bool:
        return self.limit_bytes > 0

    def plan(self, tokens: Sequence[int], live_tokens: int) -> KvPlan:
        """Where the prompt ``tokens`` should start from, given that the live context holds its first
        ``live_tokens`` (the live context is the state saved last). Marks a chosen state as recently used;
        counts re-evaluated tokens (an evicted state is charged once, to the first prompt it would serve)."""
        if not self.enabled:
            return KvPlan(None, live_tokens, 0)
        query = np.asarray(tokens, dtype=np.int64)
        with self._lock:
            best_key, best = None, 0
            for key, (arr, _, _) in self._states.items():
                n = common_prefix(arr, query)
                if n > best:
                    best_key, best = key, n
            restore = best_key if best_key is not None and best - live_tokens >= MIN_RESTORE_GAIN_TOKENS else None
            cached = best if restore is not None else live_tokens
            lost, lost_i = 0, -1
            for i, arr in enumerate(self._evicted):
                if (n := common_prefix(arr, query)) > lost:
                    lost, lost_i = n, i
            reevaluated = max(0, min(lost, len(query) - 1) - cached)
            if reevaluated:
                del self._evicted[lost_i]
            if restore is not None:
                self._states.move_to_end(restore)
                self._restores += 1
            self._source = restore if restore is not None else self._last_put
            self._reevaluated += reevaluated
            return KvPlan(restore, cached, reevaluated)

    def get(self, key: tuple[int, ...]) -> S:
        with self._lock:
            return self._states[key][1]

    def put(self, tokens: Sequence[int], state: S, size_bytes: int, *, common_tokens: int = 0) -> int:
        """Save ``state`` (the KV of ``tokens``); drops states it makes redundant, then evicts least recently
        used states until the total fits. Returns how many were evicted. A state larger than the whole
        limit is not kept (and counts as evicted). ``common_tokens``: how many tokens every conversation
        starts with (the system prompt): sharing no more than that, two states are different conversations."""
        if not self.enabled or not tokens:
            return 0
        key = tuple(tokens)
        arr = np.asarray(tokens, dtype=np.int64)
        evicted = 0
        with self._lock:
            self._saves += 1
            for k, (other, _, size) in list(self._states.items()):
                shared = common_prefix(other, arr)
                same = k == self._source and shared > common_tokens
                if shared == len(other) or (same and len(other) - shared <= REDUNDANT_TAIL_TOKENS):
                    del self._states[k]
                    self._bytes -= size
            self._states[key] = (arr, state, size_bytes)
            self._last_put, self._source = key, None
            self._bytes += size_bytes
            while self._bytes > self.limit_bytes and self._states:
                _, (old, _, size) = self._states.popitem(last=False)
                self._bytes -= size
                self._evicted.append(old)
                self._evictions += 1
                evicted += 1
        return evicted

    def timed_save(self, ms: float) -> None:
        with self._lock:
            self._save_ms += ms

    def timed_restore(self, ms: float) -> None:
        with self._lock:
            self._restore_ms += ms

    def clear(self) -> None:
        """Forget every state (and the evicted keys): the next prompts start from the live context."""
        with self._lock:
            self._states.clear()
            self._evicted.clear()
            self._bytes = 0
            self._last_put = self._source = None

    def stats(self) -> KvStats:
        with self._lock:
            return KvStats(
                limit_bytes=self.limit_bytes,
                bytes_in_use=self._bytes,
                states=len(self._states),
                saves=self._saves,
                restores=self._restores,
                evictions=self._evictions,
                reevaluated_tokens=self._reevaluated,
                save_ms_total=round(self._save_ms, 3),
                restore_ms_total=round(self._restore_ms, 3),
            )
