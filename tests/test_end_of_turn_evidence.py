"""Issue 30's end-of-turn levers, without models: what the words say (text_evidence), the window they and the
score choose (end_window), the endpointer taking the words of the right pause and re-scoring as silence grows,
and the config refusing windows that contradict each other."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from voice.config.config import ConfigError, TurnConfig, VadConfig, load_config
from voice.turn.end_window import window_ms
from voice.turn.endpoint import Endpointer, SpeechEnded, SpeechPaused
from voice.turn.text_evidence import verdict

FRAME = 512  # 32 ms at 16 kHz

# (transcript so far, verdict): the cuts Whisper makes of real and synthetic clips, and finished turns.
VERDICTS = [
    ("Set a timer for...", "unfinished"),
    ("Turn on the...", "unfinished"),
    ("what is the capital of", "unfinished"),
    ("What is seventeen times", "unfinished"),
    ("and um", "unfinished"),
    ("Remind me to...", "unfinished"),
    ("Unless to be rather cold-hearted and rather selfish, is...", "unfinished"),
    ("What's a weather like and", "unfinished"),
    ("I was going to say,", "unfinished"),
    ("What time is it?", "finished"),
    ("Where is he from?", "finished"),  # a question mark outweighs a last word that needs an object
    ("Set a timer for 10 minutes.", "finished"),  # a command a skill knows whole
    ("Turn off the kitchen lights.", "finished"),  # a request the assistant honestly cannot carry out
    ("What is 17 times 3", "finished"),  # a sum the skill computes
    ("This is a test.", "unknown"),  # a full stop proves nothing: Whisper ends every cut with one
    ("turn it on", "unknown"),  # particles end commands: not a veto
    ("what can you do", "unknown"),
    ("what does it look like", "unknown"),
    ("", "unknown"),
    ("   ", "unknown"),
    ("...", "unknown"),
]


@pytest.mark.parametrize(("text", "expected"), VERDICTS)
def test_the_words_read_as_finished_unfinished_or_unknown(text: str, expected: str) -> None:
    assert verdict(text) == expected


TURN = TurnConfig(complete_silence_ms=320, incomplete_silence_ms=960, text_evidence=True)
SURE = dataclasses.replace(TURN, sure_silence_ms=200, sure_threshold=0.9)
GRADED = dataclasses.replace(TURN, graded_window=True)

# (config, score, words, window): the words veto, the score grades, the words never grant the sure window.
WINDOWS = [
    (TURN, 0.95, None, 320),
    (TURN, 0.95, "unfinished", 960),
    (TURN, 0.95, "finished", 320),
    (
        TURN,
        0.2,
        "finished",
        960,
    ),  # a "?" does not overrule an unfinished score (text_finished_silence_ms off)
    (dataclasses.replace(TURN, text_finished_silence_ms=480), 0.2, "finished", 480),
    (dataclasses.replace(TURN, text_finished_silence_ms=480), 0.2, "unknown", 960),
    (TURN, 0.2, None, 960),
    (SURE, 0.95, None, 320),  # the sure window waits for the words
    (SURE, 0.95, "unknown", 200),
    (SURE, 0.95, "finished", 200),
    (SURE, 0.95, "unfinished", 960),
    (SURE, 0.7, "finished", 320),
    (dataclasses.replace(SURE, text_evidence=False), 0.95, None, 200),  # without the words: the score alone
    # graded under the threshold: 960 at 0, 320 at 0.5, a straight line between; the words still veto
    (GRADED, 0.0, None, 960),
    (GRADED, 0.25, None, 640),
    (GRADED, 0.46, "unknown", 371),
    (GRADED, 0.1, "finished", 832),
    (GRADED, 0.46, "unfinished", 960),
    (GRADED, 0.5, None, 320),
    (GRADED, 0.95, None, 320),
    (dataclasses.replace(GRADED, text_finished_silence_ms=480), 0.1, "finished", 480),  # the words' own window
]


@pytest.mark.parametrize(("turn", "score", "words", "expected"), WINDOWS)
def test_the_window_from_score_and_words(
    turn: TurnConfig, score: float, words: str | None, expected: int
) -> None:
    assert window_ms(turn, score, words) == expected  # type: ignore[arg-type]


VAD = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)


def feed(ep: Endpointer, probs: list[float]) -> list[object]:
    out: list[object] = []
    for p in probs:
        out += ep.feed(np.zeros(FRAME, np.float32), p)
        if ep.score_pending:
            out += ep.score_pause()
    return out


def test_words_that_cannot_end_a_sentence_keep_the_long_window_despite_a_complete_score() -> None:
    turn = dataclasses.replace(TURN, speculate_after_ms=32, score_after_ms=96)
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: 0.9)
    events = feed(ep, [0.9] * 5 + [0.1] * 4)  # 128 ms of silence: paused and scored complete
    pause = next(e for e in events if isinstance(e, SpeechPaused))
    assert ep.hear_text("unfinished", pause.pause_seq) == []
    events = feed(ep, [0.1] * 8)  # 384 ms: past the complete window, under the long one
    assert not any(isinstance(e, SpeechEnded) for e in events) and ep.in_speech
    events = feed(ep, [0.1] * 20)
    (end,) = [e for e in events if isinstance(e, SpeechEnded)]
    assert end.trailing_silence_ms == 960.0


def test_the_sure_window_ends_the_turn_when_the_words_arrive_after_it() -> None:
    turn = dataclasses.replace(SURE, speculate_after_ms=32, score_after_ms=96)
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: 0.97)
    events = feed(ep, [0.9] * 5 + [0.1] * 8)  # 256 ms of silence: past the sure window, words not heard yet
    pause = next(e for e in events if isinstance(e, SpeechPaused))
    assert not any(isinstance(e, SpeechEnded) for e in events)
    (end,) = ep.hear_text("unknown", pause.pause_seq)
    assert isinstance(end, SpeechEnded) and end.trailing_silence_ms == 256.0 and end.turn_scores == (0.97,)


def test_words_of_another_pause_or_after_speech_resumed_are_ignored() -> None:
    turn = dataclasses.replace(SURE, speculate_after_ms=32, score_after_ms=96)
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: 0.97)
    first = next(e for e in feed(ep, [0.9] * 5 + [0.1] * 4) if isinstance(e, SpeechPaused))
    feed(ep, [0.9] * 3)  # speech resumed
    assert ep.hear_text("finished", first.pause_seq) == []
    second = next(e for e in feed(ep, [0.1] * 8) if isinstance(e, SpeechPaused))
    assert second.pause_seq == first.pause_seq + 1
    assert ep.hear_text("finished", first.pause_seq) == []  # stale: the first pause's words
    (end,) = ep.hear_text("finished", second.pause_seq)
    assert isinstance(end, SpeechEnded)


def test_rescoring_as_the_silence_grows_ends_a_turn_first_scored_unfinished() -> None:
    turn = dataclasses.replace(TURN, speculate_after_ms=32, score_after_ms=96, rescore_at_ms=(320, 640))
    scores = iter([0.2, 0.3, 0.8])
    asked: list[int] = []

    def score(audio: np.ndarray) -> float:
        asked.append(len(audio))
        return next(scores)

    ep = Endpointer(VAD, turn=turn, turn_score=score)
    events = feed(ep, [0.9] * 5 + [0.1] * 40)
    (end,) = [e for e in events if isinstance(e, SpeechEnded)]
    assert end.turn_scores == (0.2, 0.3, 0.8) and end.turn_score == 0.8
    assert end.trailing_silence_ms == 640.0  # the third score, at 640 ms, is complete and past its window
    assert asked == sorted(asked) and len(set(asked)) == 3  # each on the audio so far, longer each time


def test_the_graded_window_ends_a_nearly_complete_turn_sooner_than_the_long_one() -> None:
    turn = dataclasses.replace(GRADED, speculate_after_ms=32, score_after_ms=96)
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: 0.4)  # 960 - 640 * 0.8 = 448 ms
    events = feed(ep, [0.9] * 5 + [0.1] * 13)  # 416 ms of silence
    assert not any(isinstance(e, SpeechEnded) for e in events)
    (end,) = [e for e in feed(ep, [0.1] * 2) if isinstance(e, SpeechEnded)]
    assert end.trailing_silence_ms == 448.0 and end.turn_score == 0.4


def test_a_graded_turn_is_scored_again_as_the_silence_grows() -> None:
    turn = dataclasses.replace(GRADED, speculate_after_ms=32, score_after_ms=96, rescore_at_ms=(320,))
    scores = iter([0.1, 0.9])
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: next(scores))
    (end,) = [e for e in feed(ep, [0.9] * 5 + [0.1] * 30) if isinstance(e, SpeechEnded)]
    assert end.turn_scores == (0.1, 0.9) and end.trailing_silence_ms == 320.0


def test_no_rescore_once_the_words_said_unfinished() -> None:
    turn = dataclasses.replace(TURN, speculate_after_ms=32, score_after_ms=96, rescore_at_ms=(320,))
    calls: list[float] = []
    ep = Endpointer(VAD, turn=turn, turn_score=lambda audio: calls.append(0.1) or 0.1)
    pause = next(e for e in feed(ep, [0.9] * 5 + [0.1] * 4) if isinstance(e, SpeechPaused))
    ep.hear_text("unfinished", pause.pause_seq)
    feed(ep, [0.1] * 30)
    assert len(calls) == 1


CONTRADICTIONS = [
    (
        "complete_silence_ms = 1000\nincomplete_silence_ms = 960",
        ["complete_silence_ms", "incomplete_silence_ms"],
    ),
    ("complete_threshold = 1.5", ["complete_threshold"]),
    ("complete_threshold = -0.1", ["complete_threshold"]),
    ("sure_threshold = 1.2", ["sure_threshold"]),
    ("sure_silence_ms = 200\nsure_threshold = 0.3", ["sure_threshold", "complete_threshold"]),
    ("sure_silence_ms = 400", ["sure_silence_ms", "complete_silence_ms"]),
    ("sure_silence_ms = 64", ["sure_silence_ms", "score_after_ms"]),
    ("rescore_at_ms = [600, 300]", ["rescore_at_ms"]),
    ("rescore_at_ms = [300, 1200]", ["rescore_at_ms", "incomplete_silence_ms"]),
    ("rescore_at_ms = [64]", ["rescore_at_ms", "score_after_ms"]),
    ("rescore_at_ms = [true]", ["rescore_at_ms"]),
    ("text_finished_silence_ms = 2000", ["text_finished_silence_ms", "incomplete_silence_ms"]),
    ("text_evidence = false\ntext_finished_silence_ms = 480", ["text_finished_silence_ms", "text_evidence"]),
    ("words_unfinished_below = 0.3\nwords_finished_at = 0.2", ["words_unfinished_below", "words_finished_at"]),
    ("words_finished_at = 1.5", ["words_unfinished_below", "words_finished_at"]),
    ("words_unfinished_below = -0.1", ["words_unfinished_below", "words_finished_at"]),
]


@pytest.mark.parametrize(("lines", "keys"), CONTRADICTIONS)
def test_a_config_whose_windows_contradict_is_refused_naming_the_keys(
    tmp_path: Path, lines: str, keys: list[str]
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f"[turn]\n{lines}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    message = str(refused.value)
    assert all(f"[turn] {k}" in message for k in keys), message


def test_the_repository_config_and_the_variants_file_are_accepted() -> None:
    from voice.bench.pauses.variants import load_variants

    assert load_config().turn.text_evidence
    names = [name for name, _ in load_variants(Path("benchmarks/turn_variants.toml"), None)]
    assert len(names) == len(set(names)) >= 10
