"""``voice bench pauses`` makes a pause of the length it names: the speaker's own gap at the splice point counts.

A read sentence often has a breath pause where the bench splices; splicing the whole length there would make the
silence the endpointer hears that much longer than the table says (a "250 ms" pause in the LJ Speech clip was
470 ms of silence). Synthetic clips with known gaps; no models.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import tone
from voice.audio import analyse_speech
from voice.bench.clips import Clip
from voice.bench.pauses.measure import natural_gap, splice_point, with_pause
from voice.bench.pauses.variants import load_variants, variant_strategies
from voice.turn.speech_end import SpeechEnd

RATE = 16_000


def clip_with_gap(gap_s: float, seed: int = 5) -> Clip:
    """0.3 s of room noise, 0.6 s of 'speech', a gap of ``gap_s`` (room noise), 0.6 s of speech, 0.3 s noise."""
    rng = np.random.default_rng(seed)
    room = lambda s: (0.001 * rng.standard_normal(int(s * RATE))).astype(np.float32)  # noqa: E731
    audio = np.concatenate([room(0.3), tone(0.6), room(gap_s), tone(0.6), room(0.3)])
    analysis = analyse_speech(audio, RATE, min_segment_ms=100.0)
    end = SpeechEnd(end_s=len(audio) / RATE - 0.3, vad_end_s=None, background_db=-60.0, peak_db=-10.0)
    return Clip("gap.wav", Path("gap.wav"), audio, RATE, analysis, end, None, RATE, 1)


def silence_ms_around(audio: np.ndarray, at: int) -> float:
    """The run of 5 ms blocks under -40 dBFS around sample ``at``, in ms."""
    block = RATE // 200
    loud = np.sqrt(np.mean(audio[: len(audio) // block * block].reshape(-1, block) ** 2, axis=1)) > 0.01
    k = at // block
    a, b = k, k
    while a > 0 and not loud[a - 1]:
        a -= 1
    while b + 1 < len(loud) and not loud[b + 1]:
        b += 1
    return (b - a + 1) * 5.0


@pytest.mark.parametrize("gap_s", [0.2, 0.1])
def test_a_pause_is_as_long_as_named_counting_the_speakers_own_gap(gap_s: float) -> None:
    clip = clip_with_gap(gap_s)
    at = splice_point(clip)
    start, end = natural_gap(clip, at)
    assert abs((end - start) / RATE - gap_s) <= 0.015
    for pause_ms in (250, 450):
        paused = with_pause(clip, pause_ms)
        assert paused is not None
        audio, p0, p1 = paused
        assert abs((p1 - p0) * 1000 / RATE - pause_ms) <= 1
        assert abs(silence_ms_around(audio, (p0 + p1) // 2) - pause_ms) <= 15


def test_a_pause_shorter_than_the_speakers_own_gap_is_not_made() -> None:
    clip = clip_with_gap(0.3)
    assert with_pause(clip, 150) is None
    assert with_pause(clip, 250) is None
    assert with_pause(clip, 450) is not None


def test_without_a_gap_the_whole_pause_is_spliced_in() -> None:
    clip = clip_with_gap(0.0)
    paused = with_pause(clip, 250)
    assert paused is not None
    audio, p0, p1 = paused
    assert len(audio) - len(clip.audio) == pytest.approx(250 * RATE / 1000, abs=10 * RATE / 1000)
    assert abs(silence_ms_around(audio, (p0 + p1) // 2) - 250) <= 15


def test_variants_that_name_different_end_of_turn_models_each_score_with_their_own(tmp_path: Path) -> None:
    """Each end-of-turn model named is loaded once and scores only its own variants; none scores silence alone."""
    path = tmp_path / "v.toml"
    path.write_text(
        '[[variant]]\nname = "v3.2"\nturn = { text_evidence = false }\n'
        '[[variant]]\nname = "v3.1"\nturn = { end_of_turn_model = "smart-turn-v3.1", text_evidence = false }\n'
        '[[variant]]\nname = "v3.2 again"\nturn = { complete_silence_ms = 240, text_evidence = false }\n'
        '[[variant]]\nname = "silence"\nturn = { end_of_turn_model = "", text_evidence = false }\n',
        encoding="utf-8",
    )
    loaded: list[str] = []

    def load(name: str) -> Callable[[np.ndarray], float]:
        loaded.append(name)
        score = {"smart-turn-v3.2": 0.9, "smart-turn-v3.1": 0.2}[name]
        return lambda audio: score

    strategies = variant_strategies(load_variants(path, None), 200.0, load)
    assert loaded == ["smart-turn-v3.2", "smart-turn-v3.1"]
    quiet = np.zeros(RATE, np.float32)
    assert [s.scorer(quiet) if s.scorer else None for s in strategies] == [0.9, 0.2, 0.9, None]
