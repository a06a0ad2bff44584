"""The machine record every results file carries (:func:`voice.bench.machine.machine_info`, completed by
:func:`voice.bench.machine.finish`) and the guard's summary in it (:meth:`voice.bench.machine.Guard.summary`),
typed, with the JSON each is written as (``to_json``: the keys and their order as they were when the records
were dicts) and read back from (``from_json``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from voice.bench.markdown import fields_json


@dataclass(frozen=True)
class GuardSummary:
    """How much other processes disturbed a run's timed samples, and how many were measured again."""

    enabled: bool
    """Whether disturbed samples were measured again (``--max-load`` given); False: the shares only recorded."""
    max_other_percent: float
    """Other processes' share of the machine's CPU time above which a sample was measured again (%)."""
    samples: int
    """Samples kept."""
    redone_samples: int
    """Samples measured again because other processes disturbed them."""
    other_cpu_percent_p50: float | None
    """Median share of the machine's CPU time other processes used during a kept sample (%; None: no sample)."""
    other_cpu_percent_max: float | None
    """Largest such share (%; None: no sample)."""

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuardSummary:
        return cls(**data)


@dataclass(frozen=True)
class Machine:
    """Machine, software and circumstances of a run: recorded at its start, completed at its end.

    In the JSON an optional field's key is left out while it is None (the dicts this record replaces did not
    have it then; a read ``null`` is written so too); keys this class does not know are kept in :attr:`extra`
    and written after the others."""

    date: str
    """The day the run started (ISO 8601, local time)."""
    started_at: str
    """When the run started: local time with its UTC offset, to the second (ISO 8601)."""
    cpu_model: str
    """The CPU's model name (``/proc/cpuinfo``)."""
    cores_logical: int
    """Logical CPUs of the machine (0: unknown)."""
    cores_physical: int
    """Physical cores of the machine (0: unknown)."""
    cores_usable: int
    """Logical CPUs this process may run on (its CPU affinity)."""
    ram_total_gb: float
    """The machine's RAM, in GiB (1 decimal)."""
    os: str
    """System and kernel release, e.g. ``Linux 6.1.0``."""
    python: str
    """The Python version."""
    load_average_at_start: tuple[float, ...]
    """The 1-, 5- and 15-minute load averages at the start (2 decimals)."""
    git_commit: str
    """HEAD's short sha, with ``+dirty`` when tracked files differed from it; ``unknown`` outside git."""
    command: str
    """The command line of the run (``voice …``)."""
    cwd: str
    """The working directory of the run."""
    libraries: dict[str, str]
    """The versions of the libraries that set the speed (``not installed`` for a missing one)."""
    env: dict[str, str]
    """The thread settings found in the environment (``OMP_WAIT_POLICY``, ``GOMP_SPINCOUNT``,
    ``OMP_NUM_THREADS``), only those set."""
    cpu_at_start: dict[str, float] | None = None
    """The CPU-time snapshot at the start (:func:`~voice.bench.machine.cpu_snapshot`; seconds) that ``finish``
    turns into the other processes' share; None once finished (it is not in a written result)."""
    guard: GuardSummary | None = None
    """The guard's summary, for a run that timed its samples through a guard (None: no guard)."""
    finished_at: str | None = None
    """When the run ended, as :attr:`started_at` (None: not finished)."""
    load_average_at_end: tuple[float, ...] | None = None
    """The 1-, 5- and 15-minute load averages at the end (2 decimals; None: not finished)."""
    other_processes_cpu_percent: float | None = None
    """Share of the machine's CPU time other processes used from start to end (%, 1 decimal; None: not
    finished, or no start snapshot)."""
    steal_cpu_percent: float | None = None
    """Share of the machine's CPU time the hypervisor stole from start to end (%, 1 decimal; None as for
    :attr:`other_processes_cpu_percent`)."""
    config_changes: tuple[str, ...] | None = None
    """How the run's ``--config`` file differed from the repo's ``config.toml``, key by key
    (:func:`voice.bench.config_diff.config_changes`; empty: in nothing); None: no ``--config`` given."""
    cpu_features: tuple[str, ...] | None = None
    """The CPU's vector instruction sets that pick the libraries' kernels (``avx2``, ``avx512f``, ``avx_vnni``,
    …; ``/proc/cpuinfo``): two machines of one model name may differ in them, and so in timings and, through
    rounding, in Whisper's transcripts. None: not recorded (results before 2026-12-05)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of a read record this class does not know, with their values, in their order."""

    def to_json(self) -> dict[str, Any]:
        out = fields_json(self)
        del out["extra"]
        if self.guard is not None:
            out["guard"] = self.guard.to_json()
        return {k: v for k, v in out.items() if v is not None or k not in _OPTIONAL} | self.extra

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Machine:
        own = {k: v for k, v in data.items() if k in _KNOWN}
        guard, end, changes = own.get("guard"), own.get("load_average_at_end"), own.get("config_changes")
        features = own.get("cpu_features")
        return cls(
            **{
                **own,
                "load_average_at_start": tuple(own["load_average_at_start"]),
                "guard": None if guard is None else GuardSummary.from_json(guard),
                "load_average_at_end": None if end is None else tuple(end),
                "config_changes": None if changes is None else tuple(changes),
                "cpu_features": None if features is None else tuple(features),
            },
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )


_OPTIONAL = frozenset(f.name for f in dataclasses.fields(Machine) if f.default is None)
"""The keys written only when set."""
_KNOWN = frozenset(f.name for f in dataclasses.fields(Machine)) - {"extra"}
"""The keys read into fields, not into :attr:`Machine.extra`."""
