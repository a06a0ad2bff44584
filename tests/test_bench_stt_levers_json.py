"""voice bench stt --variants' typed result writes the JSON and the Markdown the dict-based code wrote: the whole
command on fake Whisper variants (digests of what that code wrote for the same runs, with and without the spoken
quality set), and the committed results, whose Markdown the typed result reproduces too."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import check_committed, check_run, committed_machine, run_command
from voice.bench.stt import levers as stt_levers
from voice.bench.stt.levers_result import LeversResult

#: sha256 of the JSON (``json.dumps``) and of the Markdown the dict-based code wrote for the same fake runs.
DIGESTS = {
    "recordings": ("b8163db59a00ed72672512745f891da0173a779559b8b95ecb8ea7df87b2177a",
                   "43b501c571429dd500b1752e0e379f012acf24f4c41e5871d9556e3e36d63391"),
    "quality_set": ("65c8be4d409b8a566bd636f36c56d2363251a32bd635a388d2f4f60bcd59520d",
                    "eaa12a63639431003401768f91ccb13e5c88ada3adbd9d1e795d5128c147013e"),
}  # fmt: skip

VARIANTS = """\
[[variant]]
name = "beam 1"
beam_size = 1

[[variant]]
name = "beam 3"
beam_size = 3
initial_prompt = "Lamps and timers."

[[variant]]
pad_silence = true
beam_size = 1
"""


class FakeClip:
    def __init__(self, name: str, reference: str | None) -> None:
        self.name, self.reference, self.audio = name, reference, f"audio of {name}"


class FakeStt:
    """Hears a word wrong on some clips unless its beam is wide; slower the wider its beam; falls back to the
    30 s window on clips named ``*-long``."""

    def __init__(self, config: Any) -> None:
        self.beam, self.pad = config.stt.beam_size, config.stt.pad_silence
        self.fallbacks = 0

    def transcribe(self, audio: str) -> str:
        name = audio.removeprefix("audio of ")
        self.fallbacks += name.endswith("-long")
        if "timer" in name:
            return "Council the timer." if self.beam < 3 else "Cancel the timer."
        if name.startswith("b") and not self.pad:
            return "turn of the lamp"
        return {"a.wav": "Play the Beatles.", "b.wav": "Turn on the lamp."}.get(name, "What time is it?")


class FakeItem:
    def __init__(self, id: str, question: str) -> None:
        self.id, self.question = id, question


class FakeSpoken:
    def __init__(self, id: str, voice: str, question: str) -> None:
        self.item, self.voice, self.audio = FakeItem(id, question), voice, f"audio of {id}"


def spoken_items(items: Any, voices: Any = None) -> list[FakeSpoken]:
    return [
        FakeSpoken("t-cancel-timer", "espeak-ng:en-gb+f3", "Cancel the timer."),
        FakeSpoken("c-time-long", "espeak-ng:en-us", "What time is it?"),
        FakeSpoken("b-lamp", "espeak-ng:en-us", "Turn on the lamp."),
    ]


def run_levers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    """``voice bench stt --variants`` on fake Whisper variants; its JSON and Markdown."""
    clips = [FakeClip("a.wav", "Play the Beatles."), FakeClip("b.wav", "Turn on the lamp."), FakeClip("n.wav", None)]
    monkeypatch.setattr(stt_levers, "load_clips", lambda folder, names: (clips, ["n.wav: no transcript"]))
    monkeypatch.setattr(stt_levers, "load_stt", lambda config, model: FakeStt(config))
    monkeypatch.setattr("voice.bench.quality.spoken.spoken_items", spoken_items)
    ticks = itertools.accumulate(50_000_000 + 1_000_000 * (k * 7919 % 40) for k in itertools.count())
    monkeypatch.setattr(stt_levers.time, "perf_counter_ns", lambda: next(ticks))
    committed_machine(monkeypatch, "2026-12-04-stt-levers.json")
    (tmp_path / "c.toml").write_text('[stt]\nmodel = "tiny.en"\n', encoding="utf-8")
    (tmp_path / "v.toml").write_text(VARIANTS, encoding="utf-8")
    argv = ["bench", "stt", "--config", str(tmp_path / "c.toml"), "--speech", "/speech", "--repeats", "2",
            "--variants", str(tmp_path / "v.toml"), *extra]  # fmt: skip
    written, md = run_command(argv, tmp_path / "r")
    # Each variant's [stt] settings cut to those it changes (the whole section changes with every new option).
    for v in written["variants"]:
        v["stt"] = {k: v["stt"][k] for k in ("model", "beam_size", "initial_prompt", "pad_silence")}
    return written, md


@pytest.mark.parametrize(("name", "extra"), [("recordings", ()), ("quality_set", ("--quality-set",))])
def test_the_command_writes_the_json_and_markdown_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, extra: tuple[str, ...]
) -> None:
    check_run(*run_levers(monkeypatch, tmp_path, *extra), DIGESTS[name], LeversResult.from_json)


@pytest.mark.parametrize(
    "name",
    [
        "2026-12-04-stt-levers.json",
        "2026-12-04-stt-levers-beam2.json",
        "2026-12-04-stt-levers-precision.json",
        "2026-12-06-stt-decode-threads-shared.json",
        "2026-12-06-stt-decode-threads-unseen.json",
    ],
)
def test_the_committed_results_read_back_to_the_same_json_and_markdown(name: str) -> None:
    check_committed(name, LeversResult.from_json, lambda result, md: stt_levers.markdown(result) + "\n")
