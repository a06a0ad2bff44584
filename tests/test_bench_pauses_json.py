"""voice bench pauses' typed result writes the JSON and the Markdown the dict-based code wrote: the whole command
on synthetic clips with a stand-in VAD and end-of-turn model (digests of what that code wrote for the same runs,
with and without the model), and the committed results, which read back to the same JSON and Markdown."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.bench_results import check_committed, check_run, committed_machine, run_command
from tests.test_bench_pauses import RATE, clip_with_gap
from voice.bench.pauses import measure as pauses
from voice.bench.pauses.result import PausesResult

#: sha256 of the JSON (``json.dumps``) and of the Markdown the dict-based code wrote for the same fake runs.
DIGESTS = {
    "smart_turn": ("105b8c255af738a4dce48b09b69010d19665aa43d97cf00cde63e13b84a25e45",
                   "43b90c5012028d76d94852f2115dda0b7961a61fc28ca964c6202939abe062e6"),
    "silence_only": ("58b912b95b2d030c4dd96dc7caa11fbd0a7596cd303b80c0899e9b13f45793c5",
                     "c793263bda4e0bf74caa0c22cdca48b6108b394e18ece4b983a9ef732c1235d8"),
}  # fmt: skip
NEW_KEYS = ("long_waits", "finished_turns")


class FakeStream:
    """Speech where a 512-sample frame's RMS is above 0.01 (the clips' tones), silence elsewhere."""

    def probability(self, frame: np.ndarray) -> float:
        return float(np.sqrt(np.mean(frame.astype(np.float64) ** 2)) > 0.01)

    def reset(self) -> None:
        pass


class FakeVad:
    def stream(self) -> FakeStream:
        return FakeStream()


class FakeSmartTurn:
    """Scores a turn the more complete the longer the audio heard (the clips' mid-sentence pauses come early)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def score(self, audio: np.ndarray) -> float:
        return min(1.0, len(audio) / RATE / 2.5)


def run_pauses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    """``voice bench pauses`` on three synthetic clips (own gaps of 0, 0.2 and 0.3 s); its JSON and Markdown."""
    gaps_s = (0.0, 0.2, 0.3)
    clips = [
        dataclasses.replace(clip_with_gap(g, seed), name=f"gap-{g}.wav") for seed, g in enumerate(gaps_s)
    ]
    monkeypatch.setattr(pauses, "load_clips", lambda folder, names, rate_hz: (clips, ["x.wav: unreadable"]))
    monkeypatch.setattr("voice.backends.vad_silero.SileroVad", FakeVad)
    monkeypatch.setattr("voice.backends.turn_smart.SmartTurn", FakeSmartTurn)
    monkeypatch.setattr("voice.models.locate", lambda root, entry: Path("smart-turn.onnx"))
    committed_machine(monkeypatch, "2026-12-04-pauses-own-gap.json")
    (tmp_path / "c.toml").write_text("[vad]\nsilence_ms = 300\n", encoding="utf-8")
    argv = ["bench", "pauses", "--config", str(tmp_path / "c.toml"), "--speech", "/speech",
            "--pauses", "150,250,450", "--silences", "200,600", *extra]  # fmt: skip
    written, md = run_command(argv, tmp_path / "r")
    # The [vad] and [turn] sections cut to the settings the bench changes (they grow with every new option).
    written["vad"] = {k: written["vad"][k] for k in ("threshold", "silence_ms")}
    turn = (
        "end_of_turn_model",
        "complete_threshold",
        "complete_silence_ms",
        "incomplete_silence_ms",
        "end_on_energy",
    )
    written["turn"] = {k: written["turn"][k] for k in turn}
    return written, md


@pytest.mark.parametrize(
    ("name", "extra"), [("smart_turn", ("--thresholds", "0.3")), ("silence_only", ("--no-smart-turn",))]
)
def test_the_command_writes_the_json_and_markdown_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, extra: tuple[str, ...]
) -> None:
    """Less what was added since (2026-12-06: the finished turns that waited the long window, a JSON key pair
    per strategy and a Markdown column; 2026-12-07: the rule they are counted by, a top-level key), the command
    writes what the dict-based code wrote; with it, the Markdown is the one its JSON reads back to."""
    written, md = run_pauses(monkeypatch, tmp_path, *extra)
    rows = written["strategies"]
    assert all(isinstance(r["long_waits"], int) and r["long_waits"] <= r["finished_turns"] for r in rows)
    assert md == markdown(PausesResult.from_json(written), tmp_path / "r.md")
    assert written["long_waits_rule"] == "window"  # 2026-12-07: the turns that waited the long window of silence
    before = {k: v for k, v in written.items() if k != "long_waits_rule"}
    before["strategies"] = [{k: v for k, v in r.items() if k not in NEW_KEYS} for r in rows]
    legacy = markdown(PausesResult.from_json(before), tmp_path / "r.md")
    check_run(before, legacy, DIGESTS[name], PausesResult.from_json)


def markdown(result: PausesResult, md: Path, *, intro_as_committed: bool = False) -> str:
    """The Markdown the bench writes; with ``intro_as_committed``, its paragraph on how a pause is made (line 3)
    is the committed one (the results made before the speaker's own gap counted say it otherwise)."""
    text = pauses.markdown(result, None, md) + "\n"
    if not intro_as_committed:
        return text
    lines, committed = text.split("\n"), md.read_text(encoding="utf-8").split("\n")
    assert lines[2].startswith("Clips: ") and committed[2].startswith("Clips: ")
    return "\n".join([*lines[:2], committed[2], *lines[3:]])


@pytest.mark.parametrize(
    "name",
    [
        "2026-12-04-pauses-own-gap.json",
        "2026-12-06-pauses-graded-shared.json",
        "2026-12-06-pauses-graded-unseen.json",
        "2026-12-06-pauses-graded-unseen2.json",
    ],
)
def test_the_committed_result_reads_back_to_the_same_json_and_markdown(name: str) -> None:
    check_committed(name, PausesResult.from_json, markdown)


@pytest.mark.parametrize(
    "name", ["2026-12-03-pauses.json", "2026-12-04-pauses.json", "2026-12-04-pauses-thresholds.json"]
)
def test_the_results_made_before_the_own_gap_read_back_to_the_same_json_and_tables(name: str) -> None:
    """Results without ``tested`` (every clip tested at every length): the same JSON, and their Markdown but for
    the paragraph on how a pause is made, reworded since."""
    check_committed(name, PausesResult.from_json, lambda r, md: markdown(r, md, intro_as_committed=True))
