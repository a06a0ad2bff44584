"""What every results file states about where and how it was measured: machine, date, commit, load, command."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from voice.bench.machine_record import GuardSummary, Machine

_T = TypeVar("_T")

REPO_ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS_DIR = REPO_ROOT / "benchmarks"

_LIBRARIES = ("faster-whisper", "ctranslate2", "llama_cpp_python", "piper-tts", "onnxruntime", "numpy")
_ENV = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


_VECTOR_FLAGS = (
    "sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16", "neon", "asimd", "asimddp", "sve",
)  # fmt: skip


def cpu_features(cpuinfo: str | None = None) -> tuple[str, ...] | None:
    """The vector instruction sets the CPU has, of those the libraries' kernels choose between, in
    :data:`_VECTOR_FLAGS`' order, from ``/proc/cpuinfo``'s flags (``cpuinfo``: its text); None without it."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            have = set(value.split())
            return tuple(f for f in _VECTOR_FLAGS if f in have)
    return None


def git_commit(repo: Path = REPO_ROOT) -> str:
    """``<sha>`` of HEAD, with ``+dirty`` when tracked files differ from it; ``unknown`` outside git."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not sha:
        return "unknown"
    return sha[:12] + ("+dirty" if dirty else "")


def command_line(argv: list[str] | None = None) -> str:
    args = list(sys.argv if argv is None else argv)
    if args and args[0].endswith(("voice", "voice.cli", "cli.py", "__main__.py")):
        args[0] = "voice"
    return shlex.join(args)


def load_average() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # pragma: no cover - not on Linux
        return (0.0, 0.0, 0.0)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def cpu_snapshot() -> dict[str, float]:
    """System-wide busy and steal CPU seconds, this process's CPU seconds (with waited-for children), time."""
    import psutil

    t = psutil.cpu_times()
    busy = sum(getattr(t, k, 0.0) for k in ("user", "nice", "system", "irq", "softirq"))
    p = psutil.Process().cpu_times()
    own = p.user + p.system + getattr(p, "children_user", 0.0) + getattr(p, "children_system", 0.0)
    return {"busy_s": busy, "steal_s": getattr(t, "steal", 0.0), "own_s": own, "wall_s": time.monotonic()}


def other_cpu(start: dict[str, float], end: dict[str, float], cores: int) -> dict[str, float]:
    """Percent of the machine's CPU time that other processes used, and that the hypervisor stole."""
    capacity = max(1e-9, (end["wall_s"] - start["wall_s"]) * max(1, cores))
    others = (end["busy_s"] - start["busy_s"]) - (end["own_s"] - start["own_s"])
    return {
        "other_processes_cpu_percent": round(max(0.0, 100 * others / capacity), 1),
        "steal_cpu_percent": round(100 * (end["steal_s"] - start["steal_s"]) / capacity, 1),
    }


def machine_info(argv: list[str] | None = None, config: Path | None = None) -> Machine:
    """Machine, software and circumstances of a run (call it at the start of the run); ``config``: the run's
    ``--config`` file, whose differences from the repo's ``config.toml`` the record keeps."""
    import psutil

    from voice.bench.config_diff import config_changes
    from voice.config.config import DEFAULT_CONFIG_PATH

    versions: dict[str, str] = {}
    for lib in _LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = "not installed"
    now = datetime.datetime.now().astimezone()
    return Machine(
        date=now.date().isoformat(),
        started_at=now.isoformat(timespec="seconds"),
        cpu_model=cpu_model(),
        cores_logical=os.cpu_count() or 0,
        cores_physical=psutil.cpu_count(logical=False) or 0,
        cores_usable=usable_cores(),
        ram_total_gb=round(psutil.virtual_memory().total / 2**30, 1),
        os=f"{platform.system()} {platform.release()}",
        python=platform.python_version(),
        load_average_at_start=tuple(round(x, 2) for x in load_average()),
        git_commit=git_commit(),
        command=command_line(argv),
        cwd=str(Path.cwd()),
        libraries=versions,
        env={k: os.environ[k] for k in _ENV if k in os.environ},
        cpu_at_start=cpu_snapshot(),
        config_changes=None if config is None else config_changes(config, DEFAULT_CONFIG_PATH),
        cpu_features=cpu_features(),
    )


def finish(info: Machine) -> Machine:
    """``info`` completed: the end time, the load average at the end and, from the start's CPU snapshot
    (dropped), the share of the CPU other processes and the hypervisor took meanwhile."""
    finished_at = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    load_at_end = tuple(round(x, 2) for x in load_average())
    start = info.cpu_at_start
    others = other_cpu(start, cpu_snapshot(), info.cores_logical or 1) if start else {}
    return dataclasses.replace(
        info,
        cpu_at_start=None,
        finished_at=finished_at,
        load_average_at_end=load_at_end,
        other_processes_cpu_percent=others.get("other_processes_cpu_percent", info.other_processes_cpu_percent),
        steal_cpu_percent=others.get("steal_cpu_percent", info.steal_cpu_percent),
    )


def machine_markdown(info: Machine) -> str:
    """The machine block every Markdown report starts with."""
    load = info.load_average_at_start
    end = info.load_average_at_end
    load_text = f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
    if end:
        load_text += f" (at the end: {end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f})"
    date = info.started_at + (f" → {info.finished_at}" if info.finished_at else "")
    disturbance = ""
    if info.other_processes_cpu_percent is not None:
        disturbance = (
            f"| Other processes during the run | {info.other_processes_cpu_percent}% of the machine's CPU time "
            f"(hypervisor steal {info.steal_cpu_percent}%) |"
        )
    libs = ", ".join(f"{k} {v}" for k, v in info.libraries.items())
    env = ", ".join(f"{k}={v}" for k, v in info.env.items()) or "none set"
    features = "" if info.cpu_features is None else f" ({' '.join(info.cpu_features) or 'no vector extensions'})"
    return "\n".join(
        [
            "| | |",
            "|---|---|",
            f"| Date | {date} |",
            f"| Machine | {info.cpu_model}{features}, {info.cores_usable} usable cores "
            f"({info.cores_logical} logical, {info.cores_physical} physical), "
            f"{info.ram_total_gb} GB RAM, no GPU used |",
            f"| OS / Python | {info.os} / Python {info.python} |",
            f"| Load average at start (1/5/15 min) | {load_text} |",
            *([disturbance] if disturbance else []),
            *([f"| Re-measured samples | {guard_markdown(info.guard)} |"] if info.guard else []),
            f"| Git commit | `{info.git_commit}` |",
            f"| Command | `{info.command}` |",
            *([f"| Config | {config_markdown(info.config_changes)} |"] if info.config_changes is not None else []),
            f"| Libraries | {libs} |",
            f"| Thread env | {env} |",
        ]
    )


def config_markdown(changes: tuple[str, ...]) -> str:
    """The Config row of the machine block: how ``--config`` differed from the repo's ``config.toml``."""
    if not changes:
        return "`--config` says the same as the repo's config.toml"
    return "the repo's config.toml except: " + "; ".join(f"`{c}`".replace("|", "\\|") for c in changes)


def others_share(sample_s: float = 10.0) -> float:
    """Percent of the machine's CPU time other processes used over the next ``sample_s`` seconds."""
    a = cpu_snapshot()
    time.sleep(sample_s)
    return other_cpu(a, cpu_snapshot(), usable_cores())["other_processes_cpu_percent"]


QUIET_OTHERS_PERCENT = 10.0


def wait_for_quiet(max_load: float | None, *, timeout_s: float = 600.0, log: Any = print) -> None:
    """Wait (up to ``timeout_s``) for a quiet machine: other processes under 10% of the CPU over 10 s, and
    the 1-minute load average at most ``max_load`` — or other processes under 3% (the load average lags a
    minute behind, e.g. after the previous benchmark). Other work inflates every latency; each result
    records the load and the other processes' CPU share either way."""
    if max_load is None:
        load1 = load_average()[0]
        if load1 > 0.5 * usable_cores():
            log(
                f"warning: load average {load1:.2f} on {usable_cores()} cores: other work on this machine "
                "will inflate the numbers (use --max-load to wait for a quieter moment)"
            )
        return
    deadline = time.monotonic() + timeout_s
    while True:
        share = others_share()
        load1 = load_average()[0]
        quiet = share < QUIET_OTHERS_PERCENT and (load1 <= max_load or share < 3.0)
        state = f"load average {load1:.2f}, other processes {share:.0f}% of the CPU over the last 10 s"
        if quiet:
            log(f"machine quiet: {state}")
            return
        if time.monotonic() > deadline:
            log(f"warning: machine still busy after {timeout_s:.0f} s ({state}); measuring anyway")
            return
        log(f"machine busy ({state}); waiting …")
        time.sleep(20)


def wait_for_others_below(percent: float, *, timeout_s: float, log: Callable[[str], None]) -> None:
    """Wait (up to ``timeout_s``) until other processes use under ``percent`` of the CPU over 10 s."""
    deadline = time.monotonic() + timeout_s
    while (share := others_share()) >= percent:
        if time.monotonic() > deadline:
            log(
                f"warning: other processes still use {share:.0f}% of the CPU after {timeout_s:.0f} s; going on"
            )
            return
        log(f"other processes use {share:.0f}% of the CPU; waiting …")
        time.sleep(10)


@dataclass
class Guard:
    """Re-measures samples that other processes disturbed.

    Each sample is timed together with the CPU time other processes used meanwhile; if they used more than
    ``max_other_percent`` of the machine, the guard waits for quiet and the sample is measured again (at most
    ``max_redos`` times; the last attempt is kept whatever it saw). ``enabled=False`` only records the shares.
    """

    enabled: bool = True
    max_other_percent: float = QUIET_OTHERS_PERCENT
    max_redos: int = 5
    wait_s: float = 600.0
    log: Callable[[str], None] = print
    shares: list[float] = field(default_factory=list)
    redone: int = 0

    def start(self) -> dict[str, float]:
        return cpu_snapshot()

    def check(self, start: dict[str, float], attempt: int, what: str) -> bool:
        """True to keep the sample that began at ``start``; False (after waiting for quiet) to redo it."""
        share = other_cpu(start, cpu_snapshot(), usable_cores())["other_processes_cpu_percent"]
        if not self.enabled or share <= self.max_other_percent or attempt >= self.max_redos:
            self.shares.append(share)
            return True
        self.redone += 1
        self.log(f"{what}: other processes used {share:.0f}% of the CPU meanwhile; measuring it again")
        wait_for_others_below(self.max_other_percent, timeout_s=self.wait_s, log=self.log)
        return False

    def run(self, fn: Callable[[], _T], what: str = "sample") -> _T:
        """``fn()``, measured again while other processes disturbed it."""
        attempt = 0
        while True:
            start = self.start()
            out = fn()
            if self.check(start, attempt, what):
                return out
            attempt += 1

    def summary(self) -> GuardSummary:
        s = sorted(self.shares)
        return GuardSummary(
            enabled=self.enabled,
            max_other_percent=self.max_other_percent,
            samples=len(s),
            redone_samples=self.redone,
            other_cpu_percent_p50=s[len(s) // 2] if s else None,
            other_cpu_percent_max=s[-1] if s else None,
        )


def guard_markdown(summary: GuardSummary | None) -> str:
    """One sentence on how disturbed the samples were."""
    if summary is None or not summary.samples:
        return ""
    what = (
        f"samples during which other processes used over {summary.max_other_percent:g}% of the CPU were "
        f"measured again ({summary.redone_samples} redone)"
        if summary.enabled
        else "samples were not re-measured when disturbed (no --max-load)"
    )
    return (
        f"Disturbance: {what}; other processes' share of the CPU during the kept samples: p50 "
        f"{summary.other_cpu_percent_p50:.0f}%, max {summary.other_cpu_percent_max:.0f}%."
    )
