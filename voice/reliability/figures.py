"""What a soak measured (:mod:`voice.reliability.soak`): the process figures before and after, the turns, the
disconnect trials, and the verdicts on them; rendered as text and JSON."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import platform
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from voice.wire.report import percentile

MIB = 1024 * 1024


@dataclass
class Process:
    rss_mib: float
    fds: int
    threads: int
    """OS threads of the process (Python's and the native libraries')."""
    tasks: int
    thread_names: Counter[str] = field(default_factory=Counter, repr=False)

    @classmethod
    def now(cls) -> Process:
        import psutil

        p = psutil.Process()
        names: Counter[str] = Counter()
        for t in p.threads():
            with contextlib.suppress(OSError), open(f"/proc/self/task/{t.id}/comm", encoding="utf-8") as f:
                names[f.read().strip()] += 1
        import threading

        for thread in threading.enumerate():  # Python threads by their Python name
            names["py:" + thread.name.split("_")[0]] += 1
        return cls(
            rss_mib=round(p.memory_info().rss / MIB, 1),
            fds=p.num_fds(),
            threads=p.num_threads(),
            tasks=len(asyncio.all_tasks()),
            thread_names=names,
        )


@dataclass
class StopTrial:
    mode: str  # "close" or "reset"
    point: str  # the event after which the connection was dropped
    delay_ms: float
    in_flight: bool  # the turn had not finished when the connection was dropped
    busy_at_drop: bool  # a model worker was running for it at that moment
    stop_ms: float  # drop → last model worker let go of its model (0 if none was busy)
    last_model: str  # the model let go of last ("" if none was busy)
    cleanup_ms: float  # drop → the session was gone from the server
    next_ok: bool  # the next session's turn succeeded
    next_outcome: str = ""  # that turn's outcome and what it heard (why it failed, when it did)


@dataclass
class SoakFigures:
    mode: str
    sessions: int
    turns_planned: int
    turns_ok: int = 0
    dropped: int = 0
    duplicated: int = 0
    misrouted: int = 0
    misheard: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    client_errors: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    total_ms_p50: float | None = None
    total_ms_p95: float | None = None
    baseline: Process | None = None
    after: Process | None = None
    rss_peak_mib: float = 0.0
    rss_timeline: list[float] = field(default_factory=list)
    """RSS (MiB) after each tenth of the turns."""
    server_sessions_after: int = 0
    stop_trials: list[StopTrial] = field(default_factory=list)
    kv_mib_baseline: float = 0.0
    """The LLM's saved KV states (``[llm] kv_cache_mb`` bounds them) when the baseline was taken, MiB."""
    kv_mib_after: float = 0.0
    retries_per_turn: Counter[int] = field(default_factory=Counter)
    """Answered turns by how many ``busy`` replies they were retried after (0: answered at once)."""
    machine: str = ""

    @property
    def busy_retries(self) -> int:
        """``busy`` replies the clients waited out and asked again."""
        return sum(n * count for n, count in self.retries_per_turn.items())

    def tries_summary(self) -> str:
        return ", ".join(f"{n + 1}: {c}" for n, c in sorted(self.retries_per_turn.items())) or "none"

    @property
    def rss_growth_mib(self) -> float:
        assert self.baseline is not None and self.after is not None
        return round(self.after.rss_mib - self.baseline.rss_mib, 1)

    @property
    def rss_growth_beyond_kv_mib(self) -> float:
        """RSS growth less what the saved KV states grew by: those are a cache with a configured bound (each
        conversation's state, kept for its next turn), not a leak; they are reported on their own line."""
        return round(self.rss_growth_mib - (self.kv_mib_after - self.kv_mib_baseline), 1)

    def verdicts(self, *, max_growth_mib: float = 50.0, max_stop_ms: float = 250.0) -> list[tuple[str, bool]]:
        b, a = self.baseline, self.after
        assert b is not None and a is not None
        out = [
            (f"zero dropped turns ({self.dropped})", self.dropped == 0),
            (f"zero duplicated turns ({self.duplicated})", self.duplicated == 0),
            (f"zero mis-routed turns ({self.misrouted})", self.misrouted == 0),
            (f"every planned turn ok ({self.turns_ok}/{self.turns_planned})", self.turns_ok == self.turns_planned),
            (f"RSS growth after warm-up, beyond the saved KV states, <= {max_growth_mib:g} MiB "
             f"({self.rss_growth_beyond_kv_mib:+.1f} MiB)", self.rss_growth_beyond_kv_mib <= max_growth_mib),
            (f"open files back to baseline ({b.fds} -> {a.fds})", a.fds <= b.fds),
            (f"threads back to baseline ({b.threads} -> {a.threads})", a.threads <= b.threads),
            (f"asyncio tasks back to baseline ({b.tasks} -> {a.tasks})", a.tasks <= b.tasks),
            (f"no session left on the server ({self.server_sessions_after})", self.server_sessions_after == 0),
        ]
        if self.stop_trials:
            n = len(self.stop_trials)
            worst = max(t.stop_ms for t in self.stop_trials)
            ok = sum(t.next_ok for t in self.stop_trials)
            out.append((f"models free within {max_stop_ms:g} ms of a disconnect (max {worst:.1f} ms)",
                        worst <= max_stop_ms))
            out.append((f"next turn succeeds after a disconnect ({ok}/{n})", ok == n))
        return out

    def passed(self, **limits: float) -> bool:
        return all(ok for _, ok in self.verdicts(**limits))

    def to_dict(self) -> dict[str, Any]:
        """Every figure and verdict as plain JSON types (counters as objects with string keys)."""
        d: dict[str, Any] = _plain(self)
        d["rss_growth_mib"] = self.rss_growth_mib
        d["rss_growth_beyond_kv_mib"] = self.rss_growth_beyond_kv_mib
        d["verdicts"] = [{"check": name, "pass": ok} for name, ok in self.verdicts()]
        return d

    def render(self) -> str:
        b, a = self.baseline, self.after
        assert b is not None and a is not None
        lines = [
            f"soak ({self.mode} models): {self.turns_planned} turns over {self.sessions} concurrent sessions "
            f"in {self.duration_s:.1f} s ({self.turns_planned / max(self.duration_s, 1e-9):.1f} turns/s)",
            f"  turns ok {self.turns_ok} / {self.turns_planned}; dropped {self.dropped}, duplicated "
            f"{self.duplicated}, mis-routed {self.misrouted}; outcomes {dict(self.outcomes)}"
            + (f"; keyword misheard by the STT {self.misheard}" if self.mode == "real" else ""),
            f"  error events seen by clients: {dict(self.client_errors) or 'none'}",
            f"  busy replies retried after retry_after_ms: {self.busy_retries} "
            f"(answered turns by tries needed: {self.tries_summary()})",
        ]
        if self.total_ms_p50 is not None:
            lines.append(
                f"  server turn latency (speech end -> first audio sent): p50 {self.total_ms_p50:.1f} ms, "
                f"p95 {self.total_ms_p95:.1f} ms"
            )
        lines += [
            f"  RSS: {b.rss_mib:.1f} MiB after warm-up -> {a.rss_mib:.1f} MiB after the clients left "
            f"(growth {self.rss_growth_mib:+.1f} MiB, peak {self.rss_peak_mib:.1f} MiB)",
            f"  RSS after each tenth of the turns (MiB): {', '.join(f'{v:.0f}' for v in self.rss_timeline)}",
            f"  saved KV states of the LLM ([llm] kv_cache_mb): {self.kv_mib_baseline:.1f} -> "
            f"{self.kv_mib_after:.1f} MiB (RSS growth beyond them {self.rss_growth_beyond_kv_mib:+.1f} MiB)",
            f"  open files {b.fds} -> {a.fds}; threads {b.threads} -> {a.threads}; "
            f"asyncio tasks {b.tasks} -> {a.tasks}; sessions left on the server {self.server_sessions_after}",
        ]
        if self.stop_trials:
            trials = self.stop_trials
            stops = [t.stop_ms for t in trials]
            lines.append(
                f"  disconnect trials: {len(trials)} ({sum(t.mode == 'reset' for t in trials)} TCP resets, "
                f"{sum(t.mode == 'close' for t in trials)} clean closes; {sum(t.in_flight for t in trials)} "
                f"mid-reply, {sum(t.busy_at_drop for t in trials)} with a model working at that moment)"
            )
            lines.append(
                f"    drop -> models free: p50 {statistics.median(stops):.1f} ms, p95 {percentile(stops, 95):.1f} ms, "
                f"max {max(stops):.1f} ms; drop -> session cleaned up: max "
                f"{max(t.cleanup_ms for t in trials):.1f} ms; next turn ok {sum(t.next_ok for t in trials)}"
                f"/{len(trials)}"
            )
            by_model: dict[str, list[float]] = {}
            for t in trials:
                by_model.setdefault(t.last_model or "none busy", []).append(t.stop_ms)
            lines.append(
                "    last model to let go: "
                + ", ".join(
                    f"{m} {len(v)}x (max {max(v):.1f} ms)" for m, v in sorted(by_model.items())
                )
            )
        for name, ok in self.verdicts():
            lines.append(f"  [{'PASS' if ok else 'FAIL'}] {name}")
        for p in self.problems[:20]:
            lines.append(f"  problem: {p}")
        return "\n".join(lines)


def machine() -> str:
    import os

    cpu = platform.processor() or ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {system}"


def _plain(value: Any) -> Any:
    """``value`` as JSON types. (``dataclasses.asdict`` rebuilds a Counter from its items, which makes its keys
    tuples: ``json.dumps`` then fails.)"""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def figures_json(figures: SoakFigures) -> str:
    """One JSON object: every figure, with ``verdicts`` and ``passed``."""
    d = figures.to_dict()
    d["passed"] = figures.passed()
    return json.dumps(d)
