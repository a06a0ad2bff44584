"""The latency budgeter: monotonic marks at every hand-over of a turn, turned into stage durations.

A turn is timed by a :class:`TurnTimer` that records named marks on an injected :class:`Clock`.
Stages are the intervals between consecutive marks in :data:`~voice.wire.report.MARKS`, so the stage durations
of a complete turn add up exactly to its total (speech end → first audio sent). A speculative turn does work
before the endpoint (its ``stt_start`` can precede ``endpoint``): each mark counts from the later of its
own time and the previous mark's, so such work shows as 0 ms stages after the endpoint — time saved —
never as a negative stage, and the stages still add up to the total the user waited. The user's speech end is
backdated by the VAD silence window, which makes that window a stage of its own (``endpoint_silence``).
Because speculative work shows as 0 ms stages, the report also says how long the reply's work took from its
start (the pause, for a speculative reply) to its first audio, from the raw marks
(:meth:`TurnTimer.work_to_first_audio_ms`): what a shorter decision window would reveal.

What it makes, :class:`~voice.wire.report.TurnReport`, is a wire type: the server sends it as the
``turn_report`` event.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voice.clock import Clock
from voice.config.sections import BudgetConfig
from voice.wire.report import MARKS, STAGES, LlmMetrics, TurnReport, ns_to_ms


@dataclass
class TurnTimer:
    """Collects monotonic marks of one turn. Thread-safe: stages in worker threads may mark too.

    The first mark of a name wins (later ones are ignored), so a mark placed on every clause records the
    first occurrence only.
    """

    clock: Clock
    session_id: str
    turn_id: int
    marks_ns: dict[str, int] = field(default_factory=dict)
    token_ns: list[int] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def mark(self, name: str, at_ns: int | None = None) -> int:
        """Record mark ``name`` now (or at ``at_ns``); returns the recorded time."""
        if name not in MARKS:
            raise ValueError(f"unknown mark {name!r}; marks are {MARKS}")
        t = self.clock.now_ns() if at_ns is None else at_ns
        with self._lock:
            return self.marks_ns.setdefault(name, t)

    def correct(self, name: str, at_ns: int) -> None:
        """Move mark ``name`` to ``at_ns`` (a speculative turn learns at the endpoint where speech ended)."""
        if name not in MARKS:
            raise ValueError(f"unknown mark {name!r}; marks are {MARKS}")
        with self._lock:
            self.marks_ns[name] = at_ns

    def token(self, at_ns: int | None = None) -> int:
        """Record the arrival of one generated token now (or at ``at_ns``), for TTFT / ITL; returns its time."""
        t = self.clock.now_ns() if at_ns is None else at_ns
        with self._lock:
            self.token_ns.append(t)
            self.marks_ns.setdefault("first_token", t)
        return t

    def has(self, name: str) -> bool:
        with self._lock:
            return name in self.marks_ns

    def stages_ms(self) -> dict[str, float]:
        """Stage durations for every consecutive pair of marks that were both recorded."""
        with self._lock:
            marks = dict(self.marks_ns)
        # Work done before the endpoint (speculation) counts from the previous mark: 0, never negative.
        latest = None
        for name in MARKS:
            if name in marks:
                latest = marks[name] = marks[name] if latest is None else max(marks[name], latest)
        out: dict[str, float] = {}
        for stage, a, b in zip(STAGES, MARKS, MARKS[1:], strict=False):
            if a in marks and b in marks:
                out[stage] = ns_to_ms(marks[b] - marks[a])
        return out

    def total_ms(self) -> float | None:
        with self._lock:
            if "speech_end" in self.marks_ns and "first_audio_sent" in self.marks_ns:
                return ns_to_ms(self.marks_ns["first_audio_sent"] - self.marks_ns["speech_end"])
        return None

    def work_to_first_audio_ms(self, started_ns: int | None = None) -> float | None:
        """From the reply's start to its first audio being ready (the raw ``tts_first_audio`` mark, not clipped
        to the endpoint as the stages are), whether that came before the endpoint or after it.

        The start is ``started_ns`` when given (a speculative reply: the pause it started at), else the
        ``endpoint`` mark (a reply started at the end of the turn: all its work is after the endpoint). None when
        the turn made no audio (or has no start)."""
        with self._lock:
            start = self.marks_ns.get("endpoint") if started_ns is None else started_ns
            ready = self.marks_ns.get("tts_first_audio")
        return None if start is None or ready is None else ns_to_ms(ready - start)

    def llm_metrics(self) -> LlmMetrics | None:
        with self._lock:
            start = self.marks_ns.get("llm_start")
            tokens = list(self.token_ns)
        return None if start is None else LlmMetrics.from_marks(start, tokens)


def build_report(
    timer: TurnTimer,
    budget: BudgetConfig,
    *,
    cancelled: bool = False,
    outcome: str | None = None,
    **extra: Any,
) -> TurnReport:
    """Turn a timer into a report, checking each stage against its allocation.

    ``extra`` holds more of the report's fields; without ``work_to_first_audio_ms`` (a speculative reply gives
    its own, from its start) the work counts from the endpoint."""
    extra.setdefault("work_to_first_audio_ms", timer.work_to_first_audio_ms())
    stages = timer.stages_ms()
    alloc = budget.allocations_ms()
    over = tuple(name for name, v in stages.items() if v > alloc.get(name, 0))
    llm = timer.llm_metrics()
    offsets, at_ms = {}, 0.0
    for name in STAGES:  # stages telescope: each starts where the previous ended (up to the first gap)
        if name not in stages:
            break
        offsets[name] = round(at_ms, 3)
        at_ms += stages[name]
    return TurnReport(
        session_id=timer.session_id,
        turn_id=timer.turn_id,
        stages_ms=stages,
        total_ms=timer.total_ms(),
        target_ms=budget.target_ms,
        over_budget=over,
        cancelled=cancelled,
        llm=llm,
        generated_tokens=llm.n_tokens if llm else 0,
        outcome=outcome or ("cancelled" if cancelled else "ok"),
        stage_budgets_ms={name: float(alloc[name]) for name in STAGES if name in alloc},
        stage_offsets_ms=offsets,
        **extra,
    )


class JsonlSink:
    """Appends one JSON object per turn to a file (directories are created). Thread-safe."""

    def __init__(self, path: Path, *, include_text: bool = False) -> None:
        self.path = path
        self.include_text = include_text
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, report: TurnReport) -> None:
        line = json.dumps(report.to_dict(include_text=self.include_text), separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


@dataclass
class TurnStats:
    """Running statistics of completed (not cancelled) turns, for metrics and summaries."""

    totals_ms: list[float] = field(default_factory=list)
    stages_ms: dict[str, list[float]] = field(default_factory=dict)
    cancelled: int = 0

    def add(self, report: TurnReport) -> None:
        if report.cancelled:
            self.cancelled += 1
            return
        if report.total_ms is not None:
            self.totals_ms.append(report.total_ms)
        for k, v in report.stages_ms.items():
            self.stages_ms.setdefault(k, []).append(v)
