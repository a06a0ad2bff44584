"""voice bench stt's typed result writes the JSON and the Markdown the dict-based code wrote: the whole command on
a fake Whisper (digests of what that code wrote for the same runs, recordings alone and with espeak-ng questions),
and the committed result, which reads back to the same JSON and Markdown."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import check_committed, check_run, committed_machine, run_command
from voice.bench.stt import window as stt_window
from voice.bench.stt.window_result import SttWindowResult

#: sha256 of the JSON (``json.dumps``) and of the Markdown the dict-based code wrote for the same fake runs.
DIGESTS = {
    "recordings": ("9f61889912d4e9f50d29dc50486d99815db8349b9fbf2d4aa9cf331a60432342",
                   "65adc4f91edefe92c335db086a91bc2fe0f59c4a3dc727aa431a4eab1f53d3a3"),
    "espeak": ("7eb86900df1f6178ae25cddbeecacd042844c6d249f8fd0726bd74b007b6bf3c",
               "2634020a5d3effbf2b258e093b1f39b86b3086c1af81df9f2b20cefeb1f2a67b"),
}  # fmt: skip


class FakeClip:
    def __init__(self, name: str, duration_s: float, reference: str | None) -> None:
        self.name, self.duration_s, self.reference, self.audio = name, duration_s, reference, f"audio of {name}"


RECORDINGS = [
    FakeClip("a.wav", 1.234, "Play the Beatles."),
    FakeClip("b-long.wav", 4.5678, "Turn on the lamp."),
    FakeClip("n.wav", 2.0, None),
]
SPOKEN = [FakeClip("espeak-01.wav", 1.5, "What time is it?"), FakeClip("espeak-02.wav", 1.25, "Cancel the timer.")]


class FakeStt:
    """The full window hears every clip right; the short one mishears the lamp and the timer and falls back to
    the full window on clips named ``*-long*``."""

    def __init__(self) -> None:
        self.fallbacks = 0

    def transcribe_full(self, audio: str) -> str:
        name = audio.removeprefix("audio of ")
        return {"a.wav": "Play the Beatles.", "b-long.wav": "Turn on the lamp.", "n.wav": "Hello there.",
                "espeak-01.wav": "What time is it?", "espeak-02.wav": "Cancel the timer."}[name]  # fmt: skip

    def transcribe(self, audio: str) -> str:
        name = audio.removeprefix("audio of ")
        self.fallbacks += "-long" in name
        return {"b-long.wav": "turn of the lamp", "espeak-02.wav": "Council the timer."}.get(
            name, self.transcribe_full(audio)
        )


def load_clips(folder: Path, names: list[str] | None = None) -> tuple[list[FakeClip], list[str]]:
    if folder.name == "espeak":
        return list(SPOKEN), []
    return list(RECORDINGS), ["n.wav: no transcript"]


def run_stt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    """``voice bench stt`` on a fake Whisper (``[stt] min_window_s = 0``: the bench puts the default back); its
    JSON and Markdown."""
    monkeypatch.setattr(stt_window, "load_clips", load_clips)
    monkeypatch.setattr(stt_window, "espeak_clips", lambda folder: folder / "espeak")
    monkeypatch.setattr(stt_window, "load_stt", lambda config, model: FakeStt())
    ticks = itertools.accumulate(40_000_000 + 1_000_000 * (k * 7919 % 30) for k in itertools.count())
    monkeypatch.setattr(stt_window.time, "perf_counter_ns", lambda: next(ticks))
    committed_machine(monkeypatch, "2026-12-03-stt.json")
    (tmp_path / "c.toml").write_text('[stt]\nmodel = "tiny.en"\nmin_window_s = 0\n', encoding="utf-8")
    argv = ["bench", "stt", "--config", str(tmp_path / "c.toml"), "--speech", "/speech", "--repeats", "3", *extra]
    return run_command(argv, tmp_path / "r")


@pytest.mark.parametrize(("name", "extra"), [("recordings", ()), ("espeak", ("--espeak",))])
def test_the_command_writes_the_json_and_markdown_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, extra: tuple[str, ...]
) -> None:
    check_run(*run_stt(monkeypatch, tmp_path, *extra), DIGESTS[name], SttWindowResult.from_json)


def test_the_committed_result_reads_back_to_the_same_json_and_markdown() -> None:
    check_committed(
        "2026-12-03-stt.json", SttWindowResult.from_json, lambda r, md: stt_window.markdown(r, None, md) + "\n"
    )
