"""Counters and latency histograms a person can scrape (Prometheus text format at ``GET /metrics``).

Only turns that completed (outcome ``ok``) feed the latency histograms; cancelled (barge-in, disconnect,
shutdown), busy and failed turns are counted by outcome but left out of the latency statistics.

Written by hand rather than with ``prometheus_client`` on purpose: the exposition is ~40 lines; the library
would add a ``*_created`` series to every counter and histogram unless switched off process-wide, keep its
metrics in a registry that tests and the soak would have to query by sample name instead of reading
``turns``/``errors``/``closes``, and moving to its base units would rename ``voice_stage_latency_ms``, which
scrapers and ``docs/security.md`` rely on.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from voice.runtime.kvcache import KvStats
from voice.wire.report import TurnReport

BUCKETS_MS: tuple[float, ...] = (50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000)


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS_MS) + 1))
    sum_ms: float = 0.0
    count: int = 0

    def observe(self, value_ms: float) -> None:
        i = next((i for i, b in enumerate(BUCKETS_MS) if value_ms <= b), len(BUCKETS_MS))
        self.counts[i] += 1
        self.sum_ms += value_ms
        self.count += 1


class Metrics:
    """The server's counters and gauges (thread-safe); :meth:`render` gives the Prometheus text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.turns: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.closes: Counter[int] = Counter()
        self.stages: dict[str, _Histogram] = {}
        self.sessions_active = 0
        self.queue_depth = 0
        self.ready = False
        self.kv: KvStats | None = None
        """The LLM's saved per-conversation KV states (None: the LLM keeps none)."""

    def turn(self, report: TurnReport) -> None:
        with self._lock:
            self.turns[report.outcome] += 1
            if report.cancelled or report.outcome != "ok":
                return  # cancelled, busy and failed turns are left out of the latency statistics
            values = dict(report.stages_ms)
            if report.total_ms is not None:
                values["total"] = report.total_ms
            for name, ms in values.items():
                self.stages.setdefault(name, _Histogram()).observe(ms)

    def error(self, code: str) -> None:
        with self._lock:
            self.errors[code] += 1

    def closed(self, code: int) -> None:
        """A websocket was closed with this code (1006: without a close frame)."""
        with self._lock:
            self.closes[code] += 1

    def stage_count(self, stage: str) -> int:
        with self._lock:
            h = self.stages.get(stage)
            return h.count if h else 0

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP voice_ready 1 once every model is loaded and warmed", "# TYPE voice_ready gauge"]
            lines.append(f"voice_ready {int(self.ready)}")
            lines.append("# HELP voice_turns_total turns by outcome (ok, cancelled, no_speech, busy, error)")
            lines.append("# TYPE voice_turns_total counter")
            lines += [f'voice_turns_total{{outcome="{k}"}} {v}' for k, v in sorted(self.turns.items())]
            lines.append("# HELP voice_errors_total error events sent and connections refused, by code")
            lines.append("# TYPE voice_errors_total counter")
            lines += [f'voice_errors_total{{code="{k}"}} {v}' for k, v in sorted(self.errors.items())]
            lines.append("# HELP voice_closes_total websocket closes by close code (1006: no close frame)")
            lines.append("# TYPE voice_closes_total counter")
            lines += [f'voice_closes_total{{code="{k}"}} {v}' for k, v in sorted(self.closes.items())]
            lines.append("# HELP voice_sessions_active websocket sessions open now")
            lines.append("# TYPE voice_sessions_active gauge")
            lines.append(f"voice_sessions_active {self.sessions_active}")
            lines.append("# HELP voice_queue_depth turns using or waiting for the shared STT/LLM")
            lines.append("# TYPE voice_queue_depth gauge")
            lines.append(f"voice_queue_depth {self.queue_depth}")
            lines += self._kv_lines()
            lines.append("# HELP voice_stage_latency_ms stage latency of completed turns, milliseconds")
            lines.append("# TYPE voice_stage_latency_ms histogram")
            for name, h in sorted(self.stages.items()):
                cumulative = 0
                for bound, c in zip((*BUCKETS_MS, float("inf")), h.counts, strict=True):
                    cumulative += c
                    le = "+Inf" if bound == float("inf") else f"{bound:g}"
                    lines.append(f'voice_stage_latency_ms_bucket{{stage="{name}",le="{le}"}} {cumulative}')
                lines.append(f'voice_stage_latency_ms_sum{{stage="{name}"}} {h.sum_ms:.3f}')
                lines.append(f'voice_stage_latency_ms_count{{stage="{name}"}} {h.count}')
            return "\n".join(lines) + "\n"

    def _kv_lines(self) -> list[str]:
        kv = self.kv
        if kv is None:
            return []
        rows = (
            ("kv_cache_bytes", "gauge", "saved per-conversation KV states in memory, bytes", kv.bytes_in_use),
            ("kv_cache_limit_bytes", "gauge", "bound of the saved KV states ([llm] kv_cache_mb)", kv.limit_bytes),
            ("kv_cache_states", "gauge", "saved KV states (about one per conversation)", kv.states),
            ("kv_restores_total", "counter", "saved KV states restored before a turn's prompt", kv.restores),
            ("kv_evictions_total", "counter", "saved KV states evicted because the bound was full", kv.evictions),
            (
                "kv_reevaluated_tokens_total",
                "counter",
                "prompt tokens evaluated again because their saved KV state had been evicted",
                kv.reevaluated_tokens,
            ),
            ("kv_save_seconds_total", "counter", "time spent saving KV states", round(kv.save_ms_total / 1000, 6)),
            (
                "kv_restore_seconds_total",
                "counter",
                "time spent restoring KV states",
                round(kv.restore_ms_total / 1000, 6),
            ),
        )
        lines = []
        for name, kind, help_, value in rows:
            lines += [f"# HELP voice_{name} {help_}", f"# TYPE voice_{name} {kind}", f"voice_{name} {value}"]
        return lines
