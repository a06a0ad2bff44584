"""Helpers for the tests that check a bench's typed result against the JSON and Markdown it writes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from voice.bench import scaffold
from voice.bench.machine_record import Machine
from voice.bench.markdown import JsonResult
from voice.cli import main

RESULTS = Path(__file__).parent.parent / "benchmarks" / "results"
R = TypeVar("R", bound=JsonResult)


def same_json(a: Any, b: Any) -> bool:
    """The same JSON, keys in the same order too (``==`` on dicts ignores their order)."""
    return json.dumps(a) == json.dumps(b)


#: A made-up machine record as a run writes it at its start (every key it must have, none of the optional ones).
FAKE_MACHINE_JSON: dict[str, Any] = {
    "date": "2026-12-01",
    "started_at": "2026-12-01T09:00:00+00:00",
    "cpu_model": "Test CPU",
    "cores_logical": 2,
    "cores_physical": 2,
    "cores_usable": 2,
    "ram_total_gb": 7.5,
    "os": "Linux 6.1.0",
    "python": "3.11.7",
    "load_average_at_start": [0.5, 0.25, 0.125],
    "git_commit": "0123456789ab",
    "command": "voice bench",
    "cwd": "/work",
    "libraries": {"numpy": "2.4.6"},
    "env": {},
}
FAKE_MACHINE = Machine.from_json(FAKE_MACHINE_JSON)
#: The fake runs' machine record as completed (``"end": "x"``, a key the record does not know, kept).
FINISHED_MACHINE_JSON: dict[str, Any] = {**FAKE_MACHINE_JSON, "end": "x"}


def ended(machine: Machine) -> Machine:
    """``machine`` completed with ``"end": "x"`` (what the fake runs' ``finish`` does)."""
    return dataclasses.replace(machine, extra={**machine.extra, "end": "x"})


def fake_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bench run's machine record is :data:`FAKE_MACHINE`, completed with ``"end": "x"``."""
    monkeypatch.setattr(scaffold, "machine_info", lambda **_: FAKE_MACHINE)
    monkeypatch.setattr(scaffold, "finish", ended)


def check_committed(
    name: str,
    from_json: Callable[[dict[str, Any]], R],
    markdown: Callable[[R, Path], str],
    *,
    json_too: bool = True,
) -> R:
    """The committed result ``name`` read back writes the same JSON (unless ``json_too`` is False) and the
    committed Markdown (``markdown(result, md_path)``)."""
    path = RESULTS / name
    committed = json.loads(path.read_text(encoding="utf-8"))
    result = from_json(committed)
    if json_too:
        assert same_json(result.to_json(), committed)
    md = path.with_suffix(".md")
    assert markdown(result, md) == md.read_text(encoding="utf-8")
    return result


def committed_record(data: dict[str, Any]) -> dict[str, Any] | None:
    """A result's machine record as written (``machine``, or ``meta.machine``); None when it has none."""
    record = data.get("machine") or (data.get("meta") or {}).get("machine")
    return dict(record) if isinstance(record, dict) else None


def committed_machine(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """A bench run's machine record is the committed result ``name``'s (all the Markdown needs of it), completed
    with ``"end": "x"``."""
    record = committed_record(json.loads((RESULTS / name).read_text(encoding="utf-8")))
    assert record is not None
    monkeypatch.setattr(scaffold, "machine_info", lambda **_: Machine.from_json(record))
    monkeypatch.setattr(scaffold, "finish", ended)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_command(argv: list[str], out: Path) -> tuple[dict[str, Any], str]:
    """``voice bench …`` (``argv``) writing ``--out out``: its JSON and Markdown."""
    assert main([*argv, "--out", str(out)]) == 0
    written: dict[str, Any] = json.loads(out.with_name(out.name + ".json").read_text(encoding="utf-8"))
    return written, out.with_name(out.name + ".md").read_text(encoding="utf-8")


def digests(written: dict[str, Any], md: str) -> tuple[str, str]:
    """sha256 of a run's JSON (``json.dumps``) and Markdown."""
    return sha256(json.dumps(written)), sha256(md)


def check_run(
    written: dict[str, Any], md: str, expected: tuple[str, str], from_json: Callable[[dict[str, Any]], R]
) -> R:
    """A run's JSON and Markdown have the ``expected`` digests, and its JSON reads back to a result that writes
    it again."""
    assert digests(written, md) == expected
    result = from_json(written)
    assert result.to_json() == written and from_json(result.to_json()) == result
    return result
