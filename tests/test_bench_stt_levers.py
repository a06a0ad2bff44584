"""voice bench stt --variants: variant files read over the config, and the per-variant summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voice.bench.clips import BenchError
from voice.bench.machine import machine_info
from voice.bench.stt.levers import LeverClip, load_variants, markdown, summarize
from voice.bench.stt.levers_result import LeverClipRow, LeversResult, LeverVariant
from voice.config.config import load_config


def test_variants_override_the_configs_stt_keys_and_nothing_else(tmp_path: Path) -> None:
    f = tmp_path / "v.toml"
    f.write_text('[[variant]]\nname = "b5"\nbeam_size = 5\n\n[[variant]]\ninitial_prompt = "Hello."\n')
    (a, ca), (b, cb) = load_variants(f, None)
    assert (a, ca.stt.beam_size, ca.stt.initial_prompt, ca.stt.model) == ("b5", 5, "", "tiny.en")
    repo_beam = load_config(None).stt.beam_size  # the variant that names no beam keeps config.toml's
    assert repo_beam != 5 and (b, cb.stt.beam_size, cb.stt.initial_prompt) == ("variant 2", repo_beam, "Hello.")


@pytest.mark.parametrize(
    ("text", "message"),
    [('[[variant]]\nname = "x"\nbeam_sise = 3\n', "beam_sise"), ("", r"no \[\[variant\]\] tables")],
)
def test_a_bad_variants_file_is_an_error_that_says_why(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "v.toml"
    f.write_text(text)
    with pytest.raises(BenchError, match=message):
        load_variants(f, None)


def test_summary_splits_time_and_wer_by_voice_and_recordings() -> None:
    audio = np.zeros(160, np.float32)
    clips = [
        LeverClip("a.wav", "recordings", "Play the Beatles.", audio),
        LeverClip("t-cancel", "espeak-ng:en-gb+f3", "Cancel the timer.", audio),
        LeverClip("c-time", "espeak-ng:en-us", "What time is it?", audio),
    ]
    s = summarize(clips, ["play the beatles", "Council the timer.", "What time is it?"], [50.0, 70.0, 90.0], 1)
    assert s.wer_by_group == {"recordings": 0.0, "espeak-ng:en-gb+f3": 0.333, "espeak-ng:en-us": 0.0}
    assert s.wer_spoken_set == round(1 / 7, 3)
    assert (s.recordings_p50_ms, s.spoken_set_p50_ms, s.fallbacks) == (50.0, 80.0, 1)
    result = LeversResult(
        machine=machine_info(),
        repeats=1,
        variants=(LeverVariant("v", {"model": "tiny.en", "beam_size": 1, "initial_prompt": "", "pad_silence": True},
                               s),),
        clips=(LeverClipRow("t-cancel", "espeak-ng:en-gb+f3", "Cancel the timer.", ("Council the timer.",), (70.0,)),),
    )  # fmt: skip
    md = markdown(result)
    assert "| v | tiny.en | 1 | '' | True |" in md and "Council the timer." in md
