"""Counters and latency histograms a person can scrape (Prometheus text format at ``GET /metrics``)."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from voice.budget import TurnReport

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
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.turns: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.stages: dict[str, _Histogram] = {}
        self.sessions_active = 0
        self.queue_depth = 0

    def turn(self, report: TurnReport) -> None:
        with self._lock:
            self.turns[report.outcome] += 1
            if report.cancelled:
                return  # cancelled turns are left out of the latency statistics
            values = dict(report.stages_ms)
            if report.total_ms is not None:
                values["total"] = report.total_ms
            for name, ms in values.items():
                self.stages.setdefault(name, _Histogram()).observe(ms)

    def error(self, code: str) -> None:
        with self._lock:
            self.errors[code] += 1

    def render(self) -> str:
        with self._lock:
            lines = ["# TYPE voice_turns_total counter"]
            lines += [f'voice_turns_total{{outcome="{k}"}} {v}' for k, v in sorted(self.turns.items())]
            lines.append("# TYPE voice_errors_total counter")
            lines += [f'voice_errors_total{{code="{k}"}} {v}' for k, v in sorted(self.errors.items())]
            lines.append("# TYPE voice_sessions_active gauge")
            lines.append(f"voice_sessions_active {self.sessions_active}")
            lines.append("# TYPE voice_queue_depth gauge")
            lines.append(f"voice_queue_depth {self.queue_depth}")
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
