"""``[turn] words_model`` without a model: the words as the language model reads them (words_end), the window
its probability chooses beside Smart Turn's score (end_window), and the endpointer and the listener handing it on
(the config refusing thresholds that contradict each other: test_end_of_turn_evidence.py). The model itself:
test_turn_words_real.py."""

from __future__ import annotations

import dataclasses
import math

import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_end_of_turn_evidence import VAD, feed
from voice.clock import FakeClock
from voice.config.config import TurnConfig, load_config
from voice.turn.end_window import window_ms
from voice.turn.endpoint import Endpointer, SpeechEnded, SpeechPaused
from voice.turn.listener import Listener
from voice.turn.words_end import ends_p, is_ending, normalize, user_prefix


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What's the time, Sam-bot?", "what's the time sam bot"),
        ("  Set a timer for 10 minutes.  ", "set a timer for 10 minutes"),
        ("What is the cap?", "what is the cap"),  # Whisper's "?" on a cut question is not read
        ("...", ""),
        ("Café au lait!", "café au lait"),
    ],
)
def test_the_words_are_read_without_case_or_punctuation(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("piece", "ends"),
    [(".", True), (" ?", True), ("!", True), ("...", True), ("\n", True), ("?!", True),
     ("\n    ", False), (" ", False), ("the", False), (",", False), ("", False), (" .\n", False)],
)  # fmt: skip
def test_the_tokens_that_end_a_sentence(piece: str, ends: bool) -> None:
    assert is_ending(piece) is ends


def test_the_prompt_is_cut_right_after_the_users_words() -> None:
    rendered = "<|im_start|>system\nBe brief<|im_end|>\n<|im_start|>user\nturn it on<|im_end|>\n"
    assert user_prefix(rendered, "turn it on") == "<|im_start|>system\nBe brief<|im_end|>\n<|im_start|>user\nturn it on"
    with pytest.raises(ValueError, match="turn it off"):
        user_prefix(rendered, "turn it off")


def test_the_ending_probability_is_the_sum_of_the_ending_tokens() -> None:
    assert ends_p([math.log(0.25), math.log(0.5)]) == pytest.approx(0.75)
    assert ends_p([]) == 0.0
    assert ends_p([0.0, 0.0]) == 1.0  # rounding never makes it more than certain


TURN = TurnConfig(complete_silence_ms=320, incomplete_silence_ms=960, text_evidence=True)
WORDS = dataclasses.replace(TURN, words_model="smollm2-135m", words_unfinished_below=0.02, words_finished_at=0.2)
SURE = dataclasses.replace(WORDS, sure_silence_ms=200, sure_threshold=0.9)

# (config, score, words verdict, words_p, window): the probability vetoes a complete score and grants an
# unfinished one; the grammar's veto still holds; no probability (no words): as before.
WINDOWS = [
    (WORDS, 0.95, "unknown", 0.01, 960),  # "what is the capital": sounds finished, reads unfinished
    (WORDS, 0.95, "unknown", 0.05, 320),
    (WORDS, 0.2, "unknown", 0.3, 320),  # "cancel all timers" said flatly: reads finished
    (WORDS, 0.2, "unknown", 0.1, 960),
    (WORDS, 0.2, "unfinished", 0.9, 960),  # the grammar's veto stands
    (WORDS, 0.95, "unknown", None, 320),
    (WORDS, 0.2, "finished", None, 960),
    (SURE, 0.95, "unknown", 0.5, 200),
    (SURE, 0.95, "unknown", 0.01, 960),  # no sure window against the words
    (SURE, 0.2, "unknown", 0.5, 320),  # granted the complete window, not the sure one
    (dataclasses.replace(WORDS, words_finished_at=1.0), 0.2, "unknown", 0.99, 960),  # veto only
    (dataclasses.replace(WORDS, words_unfinished_below=0.0), 0.95, "unknown", 0.0, 320),  # grant only
]


@pytest.mark.parametrize(("turn", "score", "words", "words_p", "expected"), WINDOWS)
def test_the_window_from_score_words_and_their_probability(
    turn: TurnConfig, score: float, words: str, words_p: float | None, expected: int
) -> None:
    assert window_ms(turn, score, words, words_p) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("turn", "ended_at_ms"), [(WORDS, 320.0), (dataclasses.replace(WORDS, words_model=""), 960.0)])
def test_words_that_end_the_turn_shorten_the_wait_of_a_turn_scored_unfinished(
    turn: TurnConfig, ended_at_ms: float
) -> None:
    ep = Endpointer(VAD, turn=dataclasses.replace(turn, score_after_ms=96), turn_score=lambda audio: 0.1)
    events = feed(ep, [0.9] * 5 + [0.1] * 4)
    pause = next(e for e in events if isinstance(e, SpeechPaused))
    assert ep.hear_text("unknown", pause.pause_seq, 0.6) == []
    (end,) = [e for e in feed(ep, [0.1] * 40) if isinstance(e, SpeechEnded)]
    assert end.trailing_silence_ms == ended_at_ms and end.turn_score == 0.1
    assert end.words_p == (0.6 if turn.reads_words else None)  # what the turn report says of it


def test_a_new_pause_forgets_the_last_ones_probability() -> None:
    ep = Endpointer(VAD, turn=dataclasses.replace(WORDS, score_after_ms=96), turn_score=lambda audio: 0.9)
    first = next(e for e in feed(ep, [0.9] * 5 + [0.1] * 4) if isinstance(e, SpeechPaused))
    ep.hear_text("unknown", first.pause_seq, 0.001)  # held open: the long window
    assert not any(isinstance(e, SpeechEnded) for e in feed(ep, [0.1] * 8))
    feed(ep, [0.9] * 3)  # speech resumed; the next pause has no words yet
    (end,) = [e for e in feed(ep, [0.1] * 12) if isinstance(e, SpeechEnded)]
    assert end.trailing_silence_ms == 320.0  # scored complete; the first pause's veto is gone


async def test_the_listener_asks_the_words_model_only_when_configured(fake_runtime: RuntimeFactory) -> None:
    asked: list[str] = []
    probabilities = {"cancel all timers.": 0.4, "set a timer for": 0.9}

    def words_end(text: str) -> float | None:
        asked.append(text)
        return probabilities[text.lower()]

    clock = FakeClock()
    runtime = fake_runtime(clock=clock, turn_score=lambda audio: 0.1, words_end=words_end)

    def listener(model: str) -> tuple[Listener, SpeechPaused]:
        config = make_config(turn={"words_model": model, "score_after_ms": 96}, vad={"min_speech_ms": 64})
        it = Listener(runtime, config, clock)
        # 384 ms of silence: past the complete window, under the long one (the score, 0.1, keeps it long)
        pause = next(e for e in feed(it.endpointer, [0.9] * 5 + [0.1] * 12) if isinstance(e, SpeechPaused))
        return it, pause

    on, pause = listener("smollm2-135m")
    assert any(isinstance(e, SpeechEnded) for e in await on.hear_words("Cancel all timers.", pause.pause_seq))
    off, pause = listener("")
    assert await off.hear_words("Cancel all timers.", pause.pause_seq) == []
    assert asked == ["Cancel all timers."]
    on, pause = listener("smollm2-135m")  # words the grammar already calls unfinished are not asked about
    assert await on.hear_words("Set a timer for", pause.pause_seq) == []
    assert asked == ["Cancel all timers."]


@pytest.mark.real  # the other configured models are looked up first, in the models folder
def test_a_words_model_that_is_not_a_language_model_is_refused_naming_the_key() -> None:
    from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, ModelError
    from voice.models.preflight import check_model_files

    c = load_config()
    config = dataclasses.replace(c, turn=dataclasses.replace(c.turn, words_model="joe-medium"))
    with pytest.raises(ModelError, match=r"\[turn\] words_model = 'joe-medium' is a tts model"):
        check_model_files(config, DEFAULT_MODELS_ROOT, Catalogue.load(DEFAULT_CATALOGUE))


@pytest.mark.parametrize(
    ("keys", "reads"),
    [({}, "smollm2-135m"), ({"text_evidence": False}, ""), ({"end_of_turn_model": ""}, ""),
     ({"words_model": ""}, "")],
)  # fmt: skip
def test_the_words_model_is_used_only_beside_the_classifier_and_the_words(keys: dict[str, object], reads: str) -> None:
    assert make_config(turn={"words_model": "smollm2-135m", **keys}).turn.reads_words == reads
