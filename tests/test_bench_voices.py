"""The voices that speak the quality set: parsing, and each engine really speaking (skipped where not installed)."""

import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest

from voice.bench.clips import BenchError
from voice.bench.voices import DEFAULT_VOICES, ESPEAK_VOICES, FLITE_VOICES, Voice, parse_voices, synthesize


def test_voices_are_parsed_and_bad_ones_named() -> None:
    assert parse_voices("espeak-ng:en-gb+f3, flite:slt") == (Voice("espeak-ng", "en-gb+f3"), Voice("flite", "slt"))
    assert [str(v) for v in parse_voices(DEFAULT_VOICES)] == list(DEFAULT_VOICES)
    for bad in ("piper:joe", "flite", "flite:", "slt"):
        with pytest.raises(BenchError, match=f"voice '{bad}': write it as <engine>:<voice>"):
            parse_voices(f"espeak-ng:en-us,{bad}")
    with pytest.raises(BenchError, match="no voice given"):
        parse_voices(" , ")


def test_the_default_alternates_the_two_kinds_of_synthesis() -> None:
    assert set(DEFAULT_VOICES) == set(ESPEAK_VOICES) | set(FLITE_VOICES)
    runtime = [v.partition(":")[0] for v in DEFAULT_VOICES]
    assert all(a != b for a, b in itertools.pairwise(runtime))


@pytest.mark.parametrize("voice", [*ESPEAK_VOICES, *FLITE_VOICES])
def test_each_default_voice_speaks(voice: str, tmp_path: Path) -> None:
    engine = voice.partition(":")[0]
    if shutil.which(engine) is None:
        pytest.skip(f"{engine} is not installed")
    audio = synthesize(parse_voices(voice)[0], "What time is it?", tmp_path, "q")
    assert audio.dtype == np.float32 and 0.5 < len(audio) / 16_000 < 3.0
    assert float(np.sqrt(np.mean(audio**2))) > 0.01  # speech, not silence


@pytest.mark.parametrize("voice", ["flite:nobody", "espeak-ng:xx-nobody"])
def test_an_unknown_voice_is_a_clear_error(voice: str, tmp_path: Path) -> None:
    engine = voice.partition(":")[0]
    if shutil.which(engine) is None:
        pytest.skip(f"{engine} is not installed")
    with pytest.raises(BenchError, match=f"{voice.partition(':')[2]}"):
        synthesize(parse_voices(voice)[0], "Hello.", tmp_path, "q")


@pytest.mark.parametrize("flag", [["--voices", "flite:slt"], ["--stt", "base"], ["--speech", "."]])
def test_spoken_options_without_spoken_are_an_error(flag: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from voice.cli import main

    assert main(["bench", "quality", *flag]) == 2
    assert f"{flag[0]}: only for spoken mode (add --spoken)" in capsys.readouterr().err


def test_espeak_clips_writes_the_clips_and_their_transcripts(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    from voice.bench.clips import read_transcripts
    from voice.bench.synth import espeak_clips

    folder = espeak_clips(tmp_path / "q", ("What time is it?", "Launch Firefox."))
    assert read_transcripts(folder / "transcripts.tsv") == {
        "espeak-00.wav": "What time is it?",
        "espeak-01.wav": "Launch Firefox.",
    }
    assert all((folder / name).stat().st_size > 44 * 100 for name in ("espeak-00.wav", "espeak-01.wav"))
    with pytest.raises(BenchError, match="espeak-ng:xx-nobody could not speak"):
        espeak_clips(tmp_path / "bad", ("Hello.",), voice="xx-nobody")
