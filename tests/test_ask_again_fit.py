"""``voice bench quality --fit-ask-again``: the stricter STT bar for words only the LLM would answer, replayed on
stored spoken rows (after today's ``not_sure`` gate), and the rule that picks it."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import pytest

from tests.test_bench_quality_json import SET
from voice.bench.quality import ask_again_fit
from voice.bench.quality.question_set import Item, load_items
from voice.bench.quality.result import SpokenRow
from voice.cli import build_parser

REPLY = "Sorry, I didn't catch that. Could you say it again?"
NOW = datetime(2026, 12, 6, 12, 0).astimezone()


def _row(item: Item, reply: str, *, by: str, right: bool, stt: float | None, answer: float | None = None) -> SpokenRow:
    return SpokenRow(
        id=item.id, category=item.category, voice="espeak-ng:en-us", question=item.question,
        transcript=item.question, wer_normalized=0.0, turns=1, outcomes=("ok",), reply=reply, tokens=5, by=by,
        reply_audio_s=1.0, right=right, refusal_expected=item.refusal, refused=False, repeats=False,
        hit_cap=False, failed=() if right else ("wrong",), stt_avg_logprob=stt, answer_logprob_mean=answer,
    )  # fmt: skip


@pytest.fixture
def rows() -> list[tuple[SpokenRow, Item]]:
    """A skill's reply heard unsurely, two LLM replies (right and sure of the words; wrong from words heard less
    surely), and one the not_sure gate already turns into "I'm not sure." (its answer log-probability -2)."""
    items = {i.id: i for i in load_items(SET)}
    spain, planet, add = items["k-capital-spain"], items["k-red-planet"], items["a-add"]
    return [
        (_row(add, "2 plus 2 is 4.", by="skill", right=True, stt=-0.5), add),
        (_row(planet, "Mars is called the red planet.", by="llm", right=True, stt=-0.2, answer=-0.3), planet),
        (_row(spain, "The capital of Spain is Lisbon.", by="llm", right=False, stt=-0.45, answer=-0.3), spain),
        (_row(spain, "The capital of Spain is Rome.", by="llm", right=False, stt=-0.55, answer=-2.0), spain),
    ]


def test_each_bar_asks_again_only_for_the_llms_replies_under_it(rows: list[tuple[SpokenRow, Item]]) -> None:
    fit = ask_again_fit.fit(rows, ["a.json"], reply=REPLY, not_sure_below=-0.9, not_sure_reply="I'm not sure.",
                            now=NOW)  # fmt: skip
    by_bar = {p.below_logprob: p for p in fit.points}
    off = by_bar[None]
    # Today's server: the gate has made the last reply an honest "I'm not sure." (a decline).
    assert (off.replaced, off.shares.right_pct, off.shares.declined_pct, off.shares.wrong_pct) == (0, 50.0, 25.0, 25.0)
    # At -0.5: only the wrong LLM reply heard at -0.55 is under the bar, and it was already declined by the gate.
    assert (by_bar[-0.5].replaced, by_bar[-0.5].wrong_caught, by_bar[-0.5].shares.asked_again_pct) == (1, 0, 25.0)
    # At -0.4: the wrong reply heard at -0.45 is asked again too; the skill's reply heard at -0.5 never is.
    p = by_bar[-0.4]
    assert (p.replaced, p.right_lost, p.wrong_caught) == (2, 0, 1)
    assert (p.shares.right_pct, p.shares.asked_again_pct, p.shares.wrong_pct) == (50.0, 50.0, 0.0)
    # At -0.2 and stricter: the right reply heard at exactly -0.2 is kept (under, not at), so nothing is lost.
    assert by_bar[-0.2].right_lost == 0
    assert fit.scored == 3 and fit.chosen == -0.4  # the least strict bar with no wrong reply left


def test_a_row_asked_again_says_so_and_is_never_right(rows: list[tuple[SpokenRow, Item]]) -> None:
    row = rows[1][0]
    asked = ask_again_fit.asked_again_row(row, -0.1, REPLY)
    assert asked is not None and (asked.asked_again, asked.right, asked.reply) == (True, False, REPLY)
    assert ask_again_fit.asked_again_row(row, None, REPLY) is None
    assert ask_again_fit.asked_again_row(dataclasses.replace(row, stt_avg_logprob=None), -0.1, REPLY) is None


def test_the_command_refuses_text_results(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_bench_quality_json import text_result

    result = dataclasses.replace(text_result(monkeypatch), question_set=str(SET.resolve()))
    stored = tmp_path / "text.json"
    stored.write_text(json.dumps(result.to_json()))
    args = build_parser().parse_args(["bench", "quality", "--fit-ask-again", str(stored)])
    assert args.func(args) == 2
    assert "--fit-ask-again" in capsys.readouterr().err


def test_the_word_fit_replays_todays_mean_bar_first_and_bars_the_least_likely_word(
    rows: list[tuple[SpokenRow, Item]],
) -> None:
    """The least likely word's bar touches only LLM replies today's server answers: with a mean bar of -0.5 the
    reply heard at -0.55 is asked again before any word bar, so a word bar cannot count it."""
    words = [0.9, 0.3, 0.1, 0.05]  # the skill's, the right LLM reply's, the wrong one's, the one asked again
    with_words = [(dataclasses.replace(r, stt_min_word_prob=w), i) for (r, i), w in zip(rows, words, strict=True)]
    fit = ask_again_fit.fit(with_words, ["a.json"], reply=REPLY, not_sure_below=-0.9, not_sure_reply="I'm not sure.",
                            now=NOW, signal=ask_again_fit.WORD_PROB, logprob_below=-0.5)  # fmt: skip
    by_bar = {p.below_logprob: p for p in fit.points}
    off = by_bar[None].shares
    assert (off.right_pct, off.asked_again_pct, off.wrong_pct) == (50.0, 25.0, 25.0)
    # 0.1: the wrong reply's word is at, not under, the bar: nothing changes.
    assert by_bar[0.1].replaced == 0
    # 0.15 … 0.3: the wrong reply is asked again instead; the right one (its least likely word 0.3) is kept.
    assert (by_bar[0.3].replaced, by_bar[0.3].right_lost, by_bar[0.3].wrong_caught) == (1, 0, 1)
    # 0.35 and stricter: the right reply is asked again too.
    assert (by_bar[0.35].replaced, by_bar[0.35].right_lost) == (2, 1)
    assert fit.scored == 2 and fit.signal == "ask_again_llm_below_word_prob"
    assert fit.chosen == 0.15  # of the bars that catch it and lose nothing, the least strict
    assert json.loads(json.dumps(fit.to_json()))["logprob_below"] == -0.5


def test_the_word_fit_refuses_results_that_do_not_record_the_words(tmp_path: Path) -> None:
    """A result from before the word probabilities were recorded cannot be fitted on them: it says so."""
    stored = Path("benchmarks/results/2026-12-06-quality-fit-spoken-main.json")
    with pytest.raises(ask_again_fit.BenchError, match="ask_again_llm_below_word_prob"):
        ask_again_fit.spoken_rows_of(stored, ask_again_fit.WORD_PROB)
