"""The typed machine record and guard summary: every committed result's record reads back to the same JSON (keys,
order, values) and to the machine block of its Markdown; a record at the start of a run, one with keys the class
does not know, one that lacks a key it must have; finishing a run; the guard's summary."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import FAKE_MACHINE, FAKE_MACHINE_JSON, RESULTS, committed_record, same_json
from voice.bench import machine
from voice.bench.machine import Guard, finish, guard_markdown, machine_info, machine_markdown
from voice.bench.machine_record import GuardSummary, Machine

#: Every committed result that carries a machine record (all of them, so far).
COMMITTED = sorted(p.name for p in RESULTS.glob("*.json") if committed_record(json.loads(p.read_text("utf-8"))))

GUARD_JSON: dict[str, Any] = {
    "enabled": True,
    "max_other_percent": 10.0,
    "samples": 24,
    "redone_samples": 2,
    "other_cpu_percent_p50": 0.3,
    "other_cpu_percent_max": 0.9,
}
FINISH_JSON: dict[str, Any] = {
    "finished_at": "2026-12-01T09:12:00+00:00",
    "load_average_at_end": [1.96, 1.59, 1.61],
    "other_processes_cpu_percent": 24.3,
    "steal_cpu_percent": 1.5,
}


def test_the_committed_results_are_all_there() -> None:
    assert len(COMMITTED) >= 57 and "2026-12-02-prefill.json" in COMMITTED and "2026-12-03-pauses.json" in COMMITTED


@pytest.mark.parametrize("name", COMMITTED)
def test_a_committed_record_reads_back_to_its_json_and_its_markdown_block(name: str) -> None:
    path = RESULTS / name
    record = committed_record(json.loads(path.read_text(encoding="utf-8")))
    assert record is not None
    m = Machine.from_json(record)
    assert same_json(m.to_json(), record) and Machine.from_json(m.to_json()) == m
    assert m.extra == {} and m.cpu_at_start is None and m.finished_at is not None  # all written since finish
    assert machine_markdown(m) in path.with_suffix(".md").read_text(encoding="utf-8")


def test_a_record_at_the_start_lacks_the_optional_keys() -> None:
    m = Machine.from_json(FAKE_MACHINE_JSON)
    assert (m.guard, m.finished_at, m.load_average_at_end, m.other_processes_cpu_percent) == (None, None, None, None)
    assert m.load_average_at_start == (0.5, 0.25, 0.125) and m.libraries == {"numpy": "2.4.6"}
    assert same_json(m.to_json(), FAKE_MACHINE_JSON)
    md = machine_markdown(m)
    assert "| Load average at start (1/5/15 min) | 0.50 / 0.25 / 0.12 |" in md
    assert "Other processes" not in md and "Re-measured" not in md and "→" not in md


def test_a_record_needs_every_key_of_the_start() -> None:
    with pytest.raises(TypeError, match="cpu_model"):
        Machine.from_json({k: v for k, v in FAKE_MACHINE_JSON.items() if k != "cpu_model"})


def test_unknown_keys_are_kept_and_written_after_the_others() -> None:
    data = {**FAKE_MACHINE_JSON, "gpu": "none", "guard": GUARD_JSON, **FINISH_JSON, "extra": [1]}
    m = Machine.from_json(data)
    assert m.extra == {"gpu": "none", "extra": [1]} and m.guard == GuardSummary.from_json(GUARD_JSON)
    assert list(m.to_json()) == [*FAKE_MACHINE_JSON, "guard", *FINISH_JSON, "gpu", "extra"]
    assert m.to_json() == data and Machine.from_json(m.to_json()) == m


def test_the_keys_are_written_in_the_order_the_dicts_had() -> None:
    """A record in progress (with its CPU snapshot) and a finished one with a guard: the keys where the dicts
    had them (``machine_info``'s, the guard's added at the end of the run, then ``finish``'s)."""
    started = dataclasses.replace(FAKE_MACHINE, cpu_at_start={"busy_s": 1.0})
    assert list(started.to_json()) == [*FAKE_MACHINE_JSON, "cpu_at_start"]
    done = Machine.from_json({**FAKE_MACHINE_JSON, **FINISH_JSON, "guard": GUARD_JSON})
    assert list(done.to_json()) == [*FAKE_MACHINE_JSON, "guard", *FINISH_JSON]


def test_finish_returns_a_completed_record_without_the_cpu_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(machine, "cpu_snapshot", lambda: {"busy_s": 2.0})
    monkeypatch.setattr(machine, "load_average", lambda: (1.234, 0.5, 0.25))
    seen: list[tuple[dict[str, float], dict[str, float], int]] = []

    def other_cpu(start: dict[str, float], end: dict[str, float], cores: int) -> dict[str, float]:
        seen.append((start, end, cores))
        return {"other_processes_cpu_percent": 12.5, "steal_cpu_percent": 0.5}

    monkeypatch.setattr(machine, "other_cpu", other_cpu)
    started = dataclasses.replace(
        FAKE_MACHINE, cpu_at_start={"busy_s": 1.0}, guard=GuardSummary.from_json(GUARD_JSON)
    )
    done = finish(started)
    assert started.finished_at is None and started.cpu_at_start == {"busy_s": 1.0}  # the start's record unchanged
    assert seen == [({"busy_s": 1.0}, {"busy_s": 2.0}, 2)]
    assert done.cpu_at_start is None and done.finished_at and done.load_average_at_end == (1.23, 0.5, 0.25)
    assert (done.other_processes_cpu_percent, done.steal_cpu_percent) == (12.5, 0.5)
    written = done.to_json()
    assert list(written) == [*FAKE_MACHINE_JSON, "guard", *FINISH_JSON] and written["load_average_at_end"] == [
        1.23,
        0.5,
        0.25,
    ]
    md = machine_markdown(done)
    assert f"| Date | {done.started_at} → {done.finished_at} |" in md
    assert "| Other processes during the run | 12.5% of the machine's CPU time (hypervisor steal 0.5%) |" in md
    assert "| Re-measured samples | Disturbance: samples during which other processes used over 10%" in md
    # Without a CPU snapshot (a record read back) nothing is measured, and what was is kept.
    again = finish(done)
    assert len(seen) == 1 and (again.other_processes_cpu_percent, again.steal_cpu_percent) == (12.5, 0.5)


def test_machine_info_records_the_start_and_finish_completes_it() -> None:
    m = machine_info(["voice", "bench"])
    assert m.cpu_at_start is not None and m.finished_at is None and len(m.load_average_at_start) == 3
    assert "cpu_at_start" in m.to_json() and m.command == "voice bench"
    done = finish(m)
    assert "cpu_at_start" not in done.to_json() and done.other_processes_cpu_percent is not None
    tail = [*FINISH_JSON, *(["cpu_features"] if done.cpu_features is not None else [])]  # after finish's keys
    assert list(done.to_json())[-len(tail) :] == tail
    assert json.loads(json.dumps(done.to_json())) == done.to_json()  # JSON as it is


def test_the_guard_summary_reads_back_and_says_how_disturbed_the_samples_were() -> None:
    g = GuardSummary.from_json(GUARD_JSON)
    assert same_json(g.to_json(), GUARD_JSON) and g.redone_samples == 2
    assert guard_markdown(g) == (
        "Disturbance: samples during which other processes used over 10% of the CPU were measured again "
        "(2 redone); other processes' share of the CPU during the kept samples: p50 0%, max 1%."
    )
    assert guard_markdown(None) == "" and guard_markdown(dataclasses.replace(g, samples=0)) == ""
    off = dataclasses.replace(g, enabled=False)
    assert "samples were not re-measured when disturbed (no --max-load)" in guard_markdown(off)
    empty = Guard(enabled=False).summary()
    assert same_json(empty.to_json(), {"enabled": False, "max_other_percent": 10.0, "samples": 0,
                                       "redone_samples": 0, "other_cpu_percent_p50": None,
                                       "other_cpu_percent_max": None})  # fmt: skip
    with pytest.raises(TypeError):
        GuardSummary.from_json({**GUARD_JSON, "unknown": 1})


def test_a_json_result_carries_the_record_as_json(tmp_path: Path) -> None:
    """A bench not typed yet keeps its result as a dict: the record in it is written as its JSON."""
    from voice.bench.markdown import write_json

    write_json(tmp_path / "r.json", {"machine": FAKE_MACHINE, "rows": [1]})
    assert same_json(json.loads((tmp_path / "r.json").read_text()), {"machine": FAKE_MACHINE_JSON, "rows": [1]})
    with pytest.raises(TypeError, match="object is not JSON serializable"):
        write_json(tmp_path / "x.json", {"x": object()})


def test_the_cpu_features_are_read_from_cpuinfo_in_a_fixed_order() -> None:
    x86 = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 sse4_2 avx fma avx512f avx512_vnni xsave\n"
    assert machine.cpu_features(x86) == ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni")
    assert machine.cpu_features("processor\t: 0\nFeatures\t: fp asimd asimddp crc32\n") == ("asimd", "asimddp")
    assert machine.cpu_features("flags\t\t: fpu vme\n") == ()
    assert machine.cpu_features("model name\t: something\n") is None


def test_a_record_with_cpu_features_shows_them_beside_the_model_and_reads_back() -> None:
    m = dataclasses.replace(FAKE_MACHINE, cpu_features=("avx", "avx2"))
    assert "| Machine | Test CPU (avx avx2), " in machine_markdown(m)
    assert list(m.to_json())[-1] == "cpu_features" and Machine.from_json(m.to_json()) == m
    assert "| Machine | Test CPU (no vector extensions), " in machine_markdown(dataclasses.replace(m, cpu_features=()))
    assert "| Machine | Test CPU, " in machine_markdown(FAKE_MACHINE)  # not recorded: as before
