"""How sure the LLM was of its answer (voice.conversation.answer_confidence): the first sentence's token
log-probabilities, and "I'm not sure" instead of an answer it was unsure of, on the server's path and in the
quality bench."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_turn import ListSink, start_timer
from voice.backends.llm_llama import token_logprob
from voice.bench.quality import not_sure
from voice.bench.quality.measure import ask
from voice.bench.quality.question_set import Item, OutcomeShares, load_items
from voice.bench.quality.result import SpokenRow, TextRow
from voice.cli import build_parser
from voice.clock import FakeClock
from voice.config.config import Config, ConfigError
from voice.conversation.answer_confidence import (
    Confidence,
    NotSureRule,
    UnsureGate,
    confidence_of,
    first_sentence_confidence,
    first_sentence_tokens,
    not_sure_rule,
)
from voice.conversation.history import History
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.runtime.model_api import ChatMessage
from voice.turn.pipeline import Utterance, run_turn

RULE = NotSureRule(-1.0, "I'm not sure.")


def on(config: Config, below: float = -1.0) -> Config:
    """``config`` with the gate on at ``below``, for spoken and typed text alike."""
    llm = dataclasses.replace(
        config.llm, not_sure=True, not_sure_below_logprob=below, not_sure_typed_below_logprob=below
    )
    return dataclasses.replace(config, llm=llm)


@pytest.mark.parametrize(
    ("pieces", "final", "n"),
    [
        (["The", " capital", " is", " Paris", ".", " It"], False, 5),
        (["The", " capital", " is", " Paris", "."], False, None),  # "." may still become "3.5"
        (["The", " capital", " is", " Paris", "."], True, 5),
        (["It", " is", " 3", ".", "5", " km", ".", " Far"], False, 7),  # a decimal point ends nothing
        (["Yes", "!", " It", " is"], False, 2),
        (["Hello", " there"], False, None),
        (["Hello", " there"], True, 2),  # the whole reply is its first sentence
        (["Paris", ".\n", "Lovely"], False, 2),
        ([], True, None),
    ],
)
def test_the_first_sentence_ends_where_a_terminator_is_followed_by_a_space(
    pieces: list[str], final: bool, n: int | None
) -> None:
    assert first_sentence_tokens(pieces, final=final) == n


def test_the_score_leaves_out_the_first_token_and_needs_every_other() -> None:
    assert confidence_of([-5.0, -0.5, -1.5]) == Confidence(tokens=2, mean_logprob=-1.0, min_logprob=-1.5)
    assert confidence_of([-5.0]) is None  # nothing left to score
    assert confidence_of([-5.0, None, -0.1]) is None  # a backend that gives none
    # Only the first sentence counts: a wild second sentence changes nothing.
    pieces = ["The", " answer", " is", " 12", ".", " Maybe", " more"]
    assert first_sentence_confidence(pieces, [-3, -0.2, -0.2, -0.2, -0.2, -9, -9]) == Confidence(4, -0.2, -0.2)


def test_the_log_probability_is_the_log_softmax_of_the_raw_logits() -> None:
    logits = np.array([2.0, 1.0, 0.1, -3.0], np.float32)
    want = np.log(np.exp(logits) / np.exp(logits).sum())
    for token in range(4):
        assert token_logprob(logits, token) == pytest.approx(want[token], abs=1e-6)
    assert token_logprob(np.array([1000.0, 0.0], np.float32), 0) == pytest.approx(0.0)  # no overflow


def test_the_gate_holds_the_first_sentence_then_lets_it_through_or_replaces_it() -> None:
    sure = UnsureGate(RULE)
    for piece, lp in [("The", -2.0), (" capital", -0.1), (" of", -0.1), (" France", -0.1)]:
        sure.token(piece, lp)
    assert sure.release(["The capital of France"]) == ()  # cut for length: the sentence has not ended
    for piece, lp in [(" is", -0.1), (" Paris", -0.1), (".", -0.3), (" It", -2.0)]:
        sure.token(piece, lp)
    assert sure.release(["is Paris."]) == ("The capital of France", "is Paris.")
    assert sure.release(["It is lovely."]) == ("It is lovely.",) and not sure.replaced
    unsure = UnsureGate(RULE)
    for piece, lp in [("The", -0.1), (" liver", -1.9), (".", -0.9)]:
        unsure.token(piece, lp)
    assert unsure.release(["The liver."], final=True) == ("I'm not sure.",) and unsure.replaced
    off = UnsureGate(None)
    off.token("The", -9.0)
    assert off.release(["The"]) == ("The",)


async def test_the_first_chunk_waits_for_the_end_of_the_sentence_only_when_the_backend_scores_it(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """The gate's cost: "Sure, the capital of France is" (cut for length) goes when " Paris." confirms it, 6 tokens
    after the first (60 ms), or, held, when " It" ends the sentence (70 ms). Without log-probabilities: not held."""
    reply = "Sure, the capital of France is Paris. It is lovely."
    for logprobs, first_clause_ms, spoken in [
        (None, 60.0, ["Sure, the capital of France is", "Paris.", "It is lovely."]),
        ({}, 70.0, ["Sure, the capital of France is", "Paris.", "It is lovely."]),
    ]:
        runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(reply,), delay=Delay(clock), word_logprobs=logprobs))
        report = await run_turn(runtime, on(make_config()), History(), UTT, start_timer(clock, 1), ListSink())
        assert report.stages_ms["first_clause"] == first_clause_ms
        assert runtime.tts.texts == spoken  # type: ignore[attr-defined]


def test_a_threshold_of_zero_or_above_is_refused_naming_the_keys() -> None:
    with pytest.raises(ConfigError, match="not_sure_below_logprob"):
        on(make_config(), below=0.0)
    with pytest.raises(ConfigError, match="not_sure_reply"):
        dataclasses.replace(on(make_config()), llm=dataclasses.replace(on(make_config()).llm, not_sure_reply=" "))
    assert on(make_config(), below=-0.5).llm.not_sure_below_logprob == -0.5
    llm = on(make_config()).llm
    with pytest.raises(ConfigError, match="not_sure_typed_below_logprob"):
        dataclasses.replace(make_config(), llm=dataclasses.replace(llm, not_sure_typed_below_logprob=0.0))
    untyped = dataclasses.replace(llm, not_sure_typed=False, not_sure_typed_below_logprob=0.0)
    assert dataclasses.replace(make_config(), llm=untyped).llm.not_sure_typed_below_logprob == 0.0  # unused: fine


UTT = Utterance(np.zeros(16000, np.float32), 320.0, False)


async def spoken_by_sure_llm(
    fake_runtime: RuntimeFactory,
    clock: FakeClock,
    reply: str,
    *,
    not_sure: bool = True,
    heard: str | None = None,
    history: History | None = None,
) -> list[str]:
    """What the TTS speaks in one turn whose LLM writes ``reply`` with every token at log-probability 0 (sure of
    it), after the STT heard ``heard`` (the fake's default when None), with ``[llm] not_sure`` as given."""
    stt = FakeStt(texts=(heard,)) if heard is not None else None
    runtime = fake_runtime(clock=clock, stt=stt, llm=FakeLlm(replies=(reply,), word_logprobs={}))
    config = make_config(llm={"not_sure": not_sure})
    await run_turn(runtime, config, history or History(), UTT, start_timer(clock, 1), ListSink())
    return list(runtime.tts.texts)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("reply", "logprobs", "not_sure", "said"),
    [
        # Ten words: without the gate, [tts] max_first_chunk_words would speak its first six before "liver".
        ("The largest organ of the human body is the liver. It is big.", {"liver.": -2.5}, True, "I'm not sure."),
        ("The largest organ is the skin. It is big.", {"It": -2.5}, True, "The largest organ is the skin. It is big."),
        ("The largest organ is the liver. It is big.", {"liver.": -2.5}, False,
         "The largest organ is the liver. It is big."),
        ("The largest organ is the liver.", None, True, "The largest organ is the liver."),  # no log-probabilities
    ],
)  # fmt: skip
async def test_the_turn_says_it_is_not_sure_instead_of_an_answer_the_model_was_unsure_of(
    clock: FakeClock,
    fake_runtime: RuntimeFactory,
    reply: str,
    logprobs: dict[str, float] | None,
    not_sure: bool,
    said: str,
) -> None:
    llm = FakeLlm(replies=(reply,), delay=Delay(clock), word_logprobs=logprobs)
    config = on(make_config(), below=-0.2) if not_sure else make_config()
    runtime = fake_runtime(clock=clock, llm=llm)
    history = History()
    report = await run_turn(runtime, config, history, UTT, start_timer(clock, 1), ListSink())
    assert report.reply_text == said and history.messages[-1].content == said
    if said == "I'm not sure.":  # nothing of the model's answer was spoken, not even a first chunk
        assert runtime.tts.texts == [said]  # type: ignore[attr-defined]
    if logprobs is None:
        assert report.answer_logprob_mean is None
    else:  # first sentence's words after the first; the bench reads these to fit the threshold
        first = reply.split(". ")[0].split()[1:]
        want = [logprobs.get(w, logprobs.get(w + ".", 0.0)) for w in first]
        assert report.answer_logprob_mean == pytest.approx(sum(want) / len(want), abs=1e-3)


def typed_gate(config: Config, gated: bool) -> Config:
    return dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure_typed=gated))


def test_the_quality_bench_scores_and_gates_the_reply_as_the_server_does_typed_text() -> None:
    """Text mode's questions are typed: gated only with ``[llm] not_sure_typed``, as the server gates them."""
    llm = FakeLlm(replies=("The largest organ is the liver. It is big.",), word_logprobs={"liver.": -2.5})
    history: list[ChatMessage] = []
    asked = ask(llm, on(make_config(), below=-0.4), history, "What is the largest organ?")  # the default gates
    assert asked.reply == "I'm not sure." and asked.confidence is not None
    assert asked.confidence.min_logprob == -2.5
    plain = ask(llm, typed_gate(on(make_config(), below=-0.4), False), history, "What is the largest organ?")
    assert plain.reply.startswith("The largest organ is the liver.") and plain.confidence == asked.confidence


@pytest.mark.parametrize(("typed", "gated"), [(False, True), (True, False)])
def test_typed_text_has_its_own_bar(typed: bool, gated: bool) -> None:
    """Heard words meet ``not_sure_below_logprob``, typed ones ``not_sure_typed_below_logprob``: a first sentence
    at a mean of -0.5 is unsure under a bar of -0.4, not under -0.9."""
    config = on(make_config(), below=-0.4)
    config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, not_sure_typed_below_logprob=-0.9))
    rule = not_sure_rule(config.llm, typed=typed)
    assert rule is not None and rule.unsure(Confidence(5, -0.5, -2.5)) == gated


def test_the_quality_bench_gates_typed_text_at_the_typed_bar() -> None:
    llm = FakeLlm(replies=("The largest organ is the liver. It is big.",), word_logprobs={"liver.": -2.5})
    config = on(make_config(), below=-0.4)
    for typed_below, said in ((-0.9, "The largest organ is the liver."), (-0.4, "I'm not sure.")):
        llm_config = dataclasses.replace(config.llm, not_sure_typed_below_logprob=typed_below)
        asked = ask(llm, dataclasses.replace(config, llm=llm_config), [], "What is the largest organ?")
        assert asked.reply.startswith(said)


@pytest.mark.parametrize(
    ("typed", "typed_too_on", "gated"), [(False, False, True), (True, False, False), (True, True, True)]
)
def test_the_rule_gates_spoken_questions_and_typed_ones_only_when_asked(
    typed: bool, typed_too_on: bool, gated: bool
) -> None:
    config = typed_gate(on(make_config()), typed_too_on)
    assert (not_sure_rule(config.llm, typed=typed) is not None) == gated


# ---------------------------------------------------------------- fitting the threshold on stored replies
def _rows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[TextRow | SpokenRow, Item]]:
    """The fake text result's four rows, two of them given confidences: a right one the model was unsure of and
    a wrong one it was less unsure of."""
    from tests.test_bench_quality_json import SET, text_result

    items = {i.id: i for i in load_items(SET)}
    rows = list(text_result(monkeypatch).models[0].rows)
    rows[1] = dataclasses.replace(rows[1], answer_logprob_mean=-2.0)  # k-red-planet: right
    rows[3] = dataclasses.replace(rows[3], reply="The lamp is on.", right=False, refused=False,
                                  answer_logprob_mean=-0.5)  # fmt: skip
    return [(r, items[r.id]) for r in rows]


def test_each_threshold_replaces_the_replies_under_it_and_judges_them_again(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(monkeypatch)
    now = datetime.now().astimezone()
    off = not_sure.point(rows, None, "I'm not sure.", now)
    assert (off.replaced, off.shares.right_pct, off.shares.wrong_pct) == (0, 75.0, 25.0)
    strict = not_sure.point(rows, -1.0, "I'm not sure.", now)
    assert (strict.replaced, strict.right_lost, strict.wrong_caught) == (1, 1, 0)
    assert (strict.shares.right_pct, strict.shares.declined_pct) == (50.0, 25.0)  # "I'm not sure." declines
    stricter = not_sure.point(rows, -0.4, "I'm not sure.", now)
    assert (stricter.replaced, stricter.right_lost, stricter.wrong_caught) == (2, 1, 1)
    # x-lamp expects "I can't": an honest "I'm not sure." is judged by the item's own checks, not assumed right.
    # x-lamp expects "I can't": an honest "I'm not sure." passes its checks, so it comes back right.
    assert (stricter.shares.right_pct, stricter.shares.wrong_pct) == (75.0, 0.0)
    fit = not_sure.fit(rows, ["a.json"], "I'm not sure.", now)
    assert fit.points[0] == off and len(fit.points) == 1 + len(not_sure.THRESHOLDS)
    # The least strict threshold that catches the wrong reply (-0.5) without losing right answers overall.
    assert fit.chosen == -0.45


def test_the_rule_picks_the_least_strict_threshold_with_the_lowest_wrong_share_within_three_points() -> None:
    def p(below: float | None, right: float, wrong: float) -> not_sure.Point:
        return not_sure.Point(below, 0, 0, 0, OutcomeShares(right, 100 - right - wrong, 0.0, wrong))

    points = [p(None, 80, 15), p(-0.2, 60, 1), p(-0.5, 77.5, 8), p(-0.8, 78, 8), p(-1.0, 79, 12)]
    assert not_sure.choose(points) == -0.8  # -0.2 costs 20 points; -0.5 and -0.8 tie on wrong: the less strict
    assert not_sure.choose([p(None, 80, 15), p(-0.2, 70, 1)]) is None


def test_the_fit_reads_stored_results_and_writes_its_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_bench_quality_json import text_result

    result = text_result(monkeypatch)
    result = dataclasses.replace(result, question_set=str(Path("benchmarks/quality_questions.toml").resolve()))
    stored = tmp_path / "r.json"
    stored.write_text(json.dumps(result.to_json()))
    args = build_parser().parse_args(
        ["bench", "quality", "--fit-not-sure", str(stored), "--out", str(tmp_path / "fit")]
    )
    assert args.func(args) == 0
    written = json.loads((tmp_path / "fit.json").read_text())
    assert written["rows"] == 4 and written["scored"] == 0 and written["chosen"] is None  # fake LLM: no logprobs
    assert "`[llm] not_sure_typed_below_logprob`" in (tmp_path / "fit.md").read_text()  # text mode: the typed bar
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    args = build_parser().parse_args(["bench", "quality", "--fit-not-sure", str(broken)])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "--fit-not-sure" in err and "broken.json" in err and "can't be read" in err


def test_the_fit_names_the_spoken_bar_and_refuses_spoken_and_typed_results_together(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_runtime: RuntimeFactory
) -> None:
    from tests.test_bench_quality_json import spoken_result, text_result

    here = Path("benchmarks/quality_questions.toml").resolve()
    paths = []
    for name, result in (("spoken", spoken_result(fake_runtime)), ("typed", text_result(monkeypatch))):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(dataclasses.replace(result, question_set=str(here)).to_json()))
        paths.append(str(path))
    args = build_parser().parse_args(["bench", "quality", "--fit-not-sure", paths[0], "--out", str(tmp_path / "s")])
    assert args.func(args) == 0
    assert "`[llm] not_sure_below_logprob`" in (tmp_path / "s.md").read_text()
    args = build_parser().parse_args(["bench", "quality", "--fit-not-sure", *paths])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "spoken.json are spoken results" in err and "fit each kind alone" in err


@pytest.mark.parametrize(
    ("typed_too_on", "said"), [(False, "The largest organ is the liver."), (True, "I'm not sure.")]
)
async def test_a_typed_question_is_gated_only_with_not_sure_typed(
    clock: FakeClock, fake_runtime: RuntimeFactory, typed_too_on: bool, said: str
) -> None:
    """The text box's question (already in the history, no STT): the spoken turn's gate only when asked."""
    llm = FakeLlm(replies=("The largest organ is the liver.",), delay=Delay(clock), word_logprobs={"liver.": -2.5})
    config = typed_gate(on(make_config(), below=-0.2), typed_too_on)
    history = History()
    history.add("user", "What is the largest organ?")
    typed = Utterance(np.zeros(0, np.float32), 0.0, True, text="What is the largest organ?")
    runtime = fake_runtime(clock=clock, llm=llm)
    report = await run_turn(runtime, config, history, typed, start_timer(clock, 1), ListSink())
    assert report.reply_text == said
