"""What every ``voice bench`` command does around its measurement, in one place: where it writes (``--out
PREFIX`` or ``--json/--md/--plot``), waiting for a quiet machine (``--max-load``, ``--wait-max``), the record of
the machine and its load from the start to the end, the guard that measures disturbed samples again, and writing
the result as PNG, Markdown and JSON.

    run = BenchRun(args)        # the output paths; nothing measured yet
    machine = run.begin()       # wait for a quiet machine, then record it (the start of the run)
    ... measure, with run.guard() around each timed sample ...
    run.end(result, markdown=markdown, plot=plot)   # the end time and load, the guard's record; write
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voice.bench.machine import Guard, finish, machine_info, wait_for_quiet
from voice.bench.markdown import Result, write_outputs


@dataclass(frozen=True)
class Outputs:
    """Where a bench writes its result; each None when not asked for."""

    json: Path | None
    md: Path | None
    png: Path | None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Outputs:
        """``--json/--md/--plot``, filled in from ``--out PREFIX`` where not given."""
        prefix: Path | None = getattr(args, "out", None)

        def path(given: Path | None, suffix: str) -> Path | None:
            if given is not None:
                return given
            return prefix.with_name(prefix.name + suffix) if prefix is not None else None

        return cls(
            path(getattr(args, "json", None), ".json"),
            path(getattr(args, "md", None), ".md"),
            path(getattr(args, "plot", None), ".png"),
        )


class BenchRun:
    """One run of a ``voice bench`` command (see the module docstring)."""

    def __init__(self, args: argparse.Namespace, *, say: Callable[[str], None] = print) -> None:
        self.outputs = Outputs.from_args(args)
        self.max_load: float | None = getattr(args, "max_load", None)
        self.wait_max_s: float = getattr(args, "wait_max", 600.0)
        self.say = say
        self.machine: dict[str, Any] = {}
        self._guard: Guard | None = None

    def begin(self) -> dict[str, Any]:
        """Wait for a quiet machine (with ``--max-load``), then record the machine and its load: the start of
        the run. Returns that record, which the result should carry (``end`` completes it)."""
        wait_for_quiet(self.max_load, timeout_s=self.wait_max_s, log=self.say)
        self.machine = machine_info()
        return self.machine

    def guard(self, log: Callable[[str], None] | None = None) -> Guard:
        """The run's guard: with ``--max-load`` it measures again a sample that other processes disturbed
        (saying so through ``log``, default :attr:`say`)."""
        if self._guard is None:
            self._guard = Guard(enabled=self.max_load is not None, wait_s=self.wait_max_s, log=log or self.say)
        return self._guard

    def finish(self) -> None:
        """Complete the machine record: the end time and load, and the guard's record if there was one."""
        if self._guard is not None:
            self.machine["guard"] = self._guard.summary().to_json()
        finish(self.machine)

    def end(
        self,
        result: Result,
        *,
        markdown: Callable[[Result, Path | None, Path], str],
        plot: Callable[[Result, Path], object] | None = None,
    ) -> None:
        """Complete the machine record (:meth:`finish`) and write the result."""
        self.finish()
        out = self.outputs
        write_outputs(result, png_path=out.png, md_path=out.md, json_path=out.json, plot=plot, markdown=markdown)
