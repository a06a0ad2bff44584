"""What every ``voice bench`` command does around its measurement, in one place: where it writes (``--out
PREFIX`` or ``--json/--md/--plot``), waiting for a quiet machine (``--max-load``, ``--wait-max``), the record of
the machine and its load from the start to the end, the guard that measures disturbed samples again, and writing
the result as PNG, Markdown and JSON.

    run = BenchRun(args)        # the output paths; nothing measured yet
    machine = run.begin()       # wait for a quiet machine, then record it (the start of the run)
    ... measure, with run.guard() around each timed sample; the result carries ``machine`` ...
    run.end(result, markdown=markdown, plot=plot)   # the end time and load, the guard's record; write

The machine record is a frozen :class:`~voice.bench.machine_record.Machine`: ``end`` writes the result with the
completed record in its place (:meth:`Recorded.with_machine`).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from voice.bench.machine import Guard, finish, machine_info, wait_for_quiet
from voice.bench.machine_record import Machine
from voice.bench.markdown import JsonResult, write_outputs


class Recorded(JsonResult, Protocol):
    """A typed result that carries its run's machine record."""

    def with_machine(self, machine: Machine) -> Self:
        """The same result with ``machine`` as its machine record."""
        ...


Result = TypeVar("Result", bound="dict[str, Any] | Recorded")
"""A bench's result: a typed one, or (for the benches not typed yet) its JSON with the record as ``"machine"``."""


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
        self.config: Path | None = getattr(args, "config", None)
        self.max_load: float | None = getattr(args, "max_load", None)
        self.wait_max_s: float = getattr(args, "wait_max", 600.0)
        self.say = say
        self.machine: Machine | None = None
        self._guard: Guard | None = None

    def begin(self) -> Machine:
        """Wait for a quiet machine (with ``--max-load``), then record the machine and its load: the start of
        the run. Returns that record, which the result should carry (``end`` puts the completed one there)."""
        wait_for_quiet(self.max_load, timeout_s=self.wait_max_s, log=self.say)
        self.machine = machine_info(config=self.config)
        return self.machine

    def guard(self, log: Callable[[str], None] | None = None) -> Guard:
        """The run's guard: with ``--max-load`` it measures again a sample that other processes disturbed
        (saying so through ``log``, default :attr:`say`)."""
        if self._guard is None:
            self._guard = Guard(enabled=self.max_load is not None, wait_s=self.wait_max_s, log=log or self.say)
        return self._guard

    def finish(self) -> Machine:
        """Complete the machine record: the end time and load, and the guard's record if there was one; the
        completed record is :attr:`machine` and returned."""
        if self.machine is None:
            raise RuntimeError("BenchRun.finish before begin: no machine record to complete")
        machine = self.machine
        if self._guard is not None:
            machine = dataclasses.replace(machine, guard=self._guard.summary())
        self.machine = finish(machine)
        return self.machine

    def end(
        self,
        result: Result,
        *,
        markdown: Callable[[Result, Path | None, Path], str],
        plot: Callable[[Result, Path], object] | None = None,
    ) -> None:
        """Complete the machine record (:meth:`finish`) and write the result with it (a JSON result: as its
        ``"machine"``)."""
        machine = self.finish()
        if isinstance(result, dict):
            if "machine" in result:
                result["machine"] = machine
        else:
            result = result.with_machine(machine)
        out = self.outputs
        write_outputs(result, png_path=out.png, md_path=out.md, json_path=out.json, plot=plot, markdown=markdown)
