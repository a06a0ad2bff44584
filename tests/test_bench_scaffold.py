"""The one scaffold of the ``voice bench`` commands: output paths, the machine record, the guard, the writing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from voice.bench.scaffold import BenchRun, Outputs


def args(**given: Any) -> argparse.Namespace:
    base: dict[str, Any] = {"out": None, "json": None, "md": None, "plot": None, "max_load": None, "wait_max": 5.0}
    return argparse.Namespace(**(base | given))


def test_outputs_come_from_out_and_the_explicit_paths_win(tmp_path: Path) -> None:
    assert Outputs.from_args(args()) == Outputs(None, None, None)
    prefix = tmp_path / "results" / "2026-12-04-x"
    assert Outputs.from_args(args(out=prefix)) == Outputs(
        tmp_path / "results" / "2026-12-04-x.json",
        tmp_path / "results" / "2026-12-04-x.md",
        tmp_path / "results" / "2026-12-04-x.png",
    )
    md = tmp_path / "elsewhere.md"
    assert Outputs.from_args(args(out=prefix, md=md)).md == md
    # A bench without --plot (its parser has no such option) still gets its other paths.
    assert Outputs.from_args(argparse.Namespace(out=prefix)).json == prefix.with_name("2026-12-04-x.json")


def test_a_run_records_the_machine_from_start_to_end_and_writes_what_was_asked(tmp_path: Path) -> None:
    said: list[str] = []
    run = BenchRun(args(out=tmp_path / "r"), say=said.append)
    machine = run.begin()
    assert machine.started_at and machine.finished_at is None and machine.cpu_at_start is not None
    guard = run.guard()
    assert run.guard() is guard and not guard.enabled  # one guard per run; off without --max-load
    result = {"tool": "test", "machine": machine, "rows": [1, 2]}
    plotted: list[Path] = []
    run.end(
        result,
        markdown=lambda r, png, md: f"# {r['tool']} ({len(r['rows'])} rows)\n",
        plot=lambda r, p: plotted.append(p),
    )
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["rows"] == [1, 2]
    assert written["machine"]["finished_at"] and "load_average_at_end" in written["machine"]
    assert "guard" in written["machine"]
    assert (tmp_path / "r.md").read_text() == "# test (2 rows)\n"
    assert plotted == [tmp_path / "r.png"]
