"""``voice bench quality``'s four outcomes (right / honest decline / asked again / wrong) and the decline check they
rest on: the check on replies both ways (the real ones are what the catalogue LLMs said in committed results), the
four shares adding up to 100 on real judged rows, and older results read as they were written."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import RESULTS, same_json
from tests.conftest import RuntimeFactory, make_config
from tests.test_bench_quality_json import spoken_result, text_result
from voice.bench.quality import measure as quality
from voice.bench.quality.declines import declines
from voice.bench.quality.question_set import OUTCOMES, Item, judge, load_items, outcome
from voice.bench.quality.rejudge import rejudge, run
from voice.bench.quality.report import markdown
from voice.bench.quality.result import QualityResult, SpokenResult, TextResult, TextRow
from voice.cli import build_parser
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.skills.answer import ASKING_AGAIN
from voice.skills.capabilities import LIMITS

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
SET = BENCHMARKS / "quality_questions.toml"
NOW = datetime(2026, 12, 6, 9, 30)

DECLINES = [
    # the cases
    "Sorry, I can't check the weather.",
    "I don't know.",
    "I'm not sure about that.",
    "I can't see your thermostat, so I don't know the temperature.",
    "I'm a voice assistant, I can't make calls.",
    # more phrasings of "I can't" / "I don't know", and a decline that points elsewhere
    "I cannot do that.",
    "I can’t do that.",  # a typographic apostrophe
    "I'm not able to turn on lights.",
    "I am unable to send emails.",
    "I'm unable to help with that, sorry.",
    "I don't have access to your calendar.",
    "I don't have a way to check the news.",
    "I do not have the ability to make phone calls.",
    "I have no way of knowing that.",
    "I have no idea.",
    "Not sure, sorry.",
    "Sorry, can't help with that.",
    "I'm just a language model and can't browse the web.",
    "That's not something I can do.",
    "I'm afraid I don't know who won last night.",
    "I'm sorry, but I can't assist with that.",
    "I'd love to help, but I can't make calls.",
    "That sounds lovely, but I can't make calls.",  # an inability after other words still declines
    "I can't check the weather, but you could look at a weather app.",
    "I don't have real-time data, so I can't tell you today's weather. You can check a weather app for that.",
    "I'm not sure what you mean. Could you rephrase that?",
    # replies of the skills (voice/skills/answer.py, personal_facts.py; capabilities.py: every limit, below)
    "I don't know where you are: I have no location service, and no location is set.",
    "I don't know your name: you haven't told me.",
    # what catalogue LLMs said (benchmarks/results/2026-12-0*-quality-*.json)
    "I'm sorry, I'm not equipped to assist with that.",
    "I'm sorry, I can't answer for today.",
    "I'm sorry, but I don't have the ability to send text messages.",
    "I'm sorry, I can't help you. Can you please tell me what's wrong?",
    "I'm sorry for your loss. I'll be happy to help you with anything else, but as a voice assistant, I don't have "
    "the ability to play music or make calls.",
    "I'm sorry for your loss, but I can't provide a will. If you're looking to make changes to your estate plan, I "
    "recommend consulting with an attorney who specializes in estates and trusts. They have the expertise to help "
    "you navigate this complex process.",
    "I'm sorry for the confusion. I can't provide that exact number, but you could ask a friend who's an expert in "
    "finance or something like that.",
    "I'm sorry, I can't remember the exact level. You might want to check your device's location services or ask "
    "someone who knows you for help.",
    "I'm sorry, I can't suggest a snack. I'm not familiar with peanuts. I can only suggest you something that is "
    "safe for your health and safety.",
    "I'm sorry, I'm not equipped to assist with that. I'm a voice assistant, not a magic tool. I can only assist "
    "with requests that are not available to the internet.",
    "I'm sorry for your loss. I'll be here in a moment, but I must clarify that my phone is currently offline and "
    "I can't access it until later today.",
    "I'm not sure.",
    "Um, I'm not sure.",
    "I'm not sure how to convert this into a fraction.",
    "I'm not sure, but I'm not sure.",
]

NOT_DECLINES = [
    # the cases: "can't" or "sorry" in a reply that does not decline
    "I'm sorry for the confusion. You can't do that, but I'll try to help you with it.",
    "I'm sorry for your loss.",
    "I'm sorry for your loss. I'll be in Paris tomorrow.",
    "You can't divide by zero.",
    # an answer after the "I can't" / "I'm not sure": it did the thing anyway
    "I can't browse the web, but Paris is the capital of France.",
    "I cannot browse the internet. However, the capital of France is Paris.",
    "I can't browse the internet. The capital of France is Paris.",
    "I'm not sure, but I think it's 42.",
    "I don't know the exact figure, but it's around 8 billion.",
    "I can't be certain, but here's my best guess: 1969.",
    "Sorry, I can't check the weather. It's usually sunny in Madrid this time of year, though.",
    # an answer hedged with doubt after it
    "It's Sydney, but I'm not sure.",
    "Sydney. I'm not sure, though.",
    "I think it's Canberra, although I'm not certain.",
    # "can't", "don't know" … that say nothing of the assistant's inability
    "I can't wait to hear more!",
    "I can't believe it's already December.",
    "If I can't find the timer, I'll tell you.",
    "I have no doubt it's Paris.",
    "I don't know about you, but I love Paris.",
    "A baby can't do anything.",
    "There's one planet we can't see right now.",
    "Sorry, I didn't catch that. Could you say it again?",  # asking again is an outcome of its own
    # what catalogue LLMs said
    "I'm sorry, I'm not a voice assistant. You can't turn the team in mile you mr.",
    "I'm afraid I don't know. But I can tell you, it's a famous book called Pride and Prejudice by Jane Austen.",
    "I'm not sure, but I can tell you that Lisbon is a city in Portugal.",
    "I'm not sure how many pets you have, but I can tell you that I have a total of 3+2 = 5 cats and 4 dogs.",
    "I'm afraid I don't have the ability to explain Rainbow in detail. However, I can provide a brief overview of "
    "how it works: Rainbow is a magical phenomenon that occurs when light interacts with water molecules.",
    "I'm sorry for the misunderstanding. I can't do that, but I'll try to help you with your homework.",
    "My favourite season is always the one I'm not sure of. It's the season when I can't remember my favorite "
    "color. But if I had to pick, it would be the season of love and friendship.",
    "I'm sorry for the misunderstanding, but as a voice assistant, I don't have personal opinions or biases. "
    "However, I can certainly explain it in simpler terms: Inflation is when money loses its value over time.",
    "I'm a voice assistant running on the user's computer. I can answer questions, play music, make calls, send "
    "messages, and see the weather.",
    "The largest planet in the solar system is Jupiter, but it's actually Saturn.",
]


@pytest.mark.parametrize("reply", DECLINES)
def test_a_first_person_cannot_or_dont_know_declines(reply: str) -> None:
    assert declines(reply)


@pytest.mark.parametrize("reply", NOT_DECLINES)
def test_a_reply_that_does_not_decline_is_not_counted_as_one(reply: str) -> None:
    assert not declines(reply)


def test_every_honest_reply_of_the_skills_declines() -> None:
    assert [lim.reply for lim in LIMITS if not declines(lim.reply)] == []


def test_a_cannot_item_is_right_only_when_the_reply_declines() -> None:
    lamp = Item(id="x", category="cannot", question="Turn on the lamp.", refusal=True)
    for reply in ("I can't control lights.", "I don't know how to do that."):
        v = judge(lamp, reply, NOW)
        assert v.right and v.refused
    for reply in (
        "You can't turn that on.",
        "I'm sorry for your loss.",
        "I can't see it, but the lamp is on now.",
    ):
        v = judge(lamp, reply, NOW)
        assert not v.right and not v.refused and v.failed == ("does not say it cannot",)


def row(reply: str, right: bool, *, asked_again: bool = False, category: str = "knowledge") -> TextRow:
    return TextRow(id="i", category=category, question="?", reply=reply, tokens=1, by="llm", ttft_ms=1.0,
                   reply_ms=1.0, right=right, refusal_expected=False, refused=declines(reply), repeats=False,
                   hit_cap=False, words=1, spoken_s_est=0.4, failed=(), asked_again=asked_again)  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "right", "asked_again", "expected"),
    [
        ("Madrid.", True, False, "right"),
        ("I don't know, but it is Madrid.", True, False, "right"),
        ("Sorry, I didn't catch that. Could you say it again?", False, True, "asked_again"),
        ("I don't know.", False, False, "declined"),
        ("Barcelona.", False, False, "wrong"),
        ("I'm not sure, but I think it's Barcelona.", False, False, "wrong"),
        ("You can't ask that.", False, False, "wrong"),
    ],
)
def test_each_reply_has_exactly_one_outcome(
    reply: str, right: bool, asked_again: bool, expected: str
) -> None:
    assert outcome(row(reply, right, asked_again=asked_again)) == expected


def test_text_mode_counts_the_configured_ask_again_reply_as_asked_again() -> None:
    config = make_config(llm={"skills": False})
    (item,) = [i for i in load_items(SET) if i.id == "k-capital-spain"]
    asked = quality.run_item(FakeLlm(replies=(config.stt.ask_again_reply,)), config, item)
    assert asked.asked_again and not asked.right and "asked to say it again" in asked.failed
    assert asked.to_json()["asked_again"] is True and TextRow.from_json(asked.to_json()) == asked
    answered = quality.run_item(FakeLlm(replies=("Madrid.",)), config, item)
    assert not answered.asked_again and "asked_again" not in answered.to_json()  # as rows were written before
    s = quality.summarize([asked, answered], outcomes=True).judged
    assert s.outcomes is not None and s.outcomes.values() == (50.0, 0.0, 50.0, 0.0)


@pytest.mark.parametrize("question", ["What is due to the power of ten?", "How many seconds are there in another?"])
def test_a_skills_reply_that_asks_again_counts_as_asked_again_typed_and_judged_again(
    monkeypatch: pytest.MonkeyPatch, question: str
) -> None:
    config = make_config()
    (item,) = [i for i in load_items(SET) if i.id == "k-capital-spain"]
    llm = SkillsLlm(FakeLlm(replies=("Madrid.",)))  # as the command wraps it with [llm] skills on
    row = quality.run_item(llm, config, dataclasses.replace(item, question=question))
    assert row.reply in ASKING_AGAIN and row.asked_again and outcome(row) == "asked_again"
    result = text_result(monkeypatch)
    rows = list(result.models[0].rows)
    rows[1] = dataclasses.replace(rows[1], reply=row.reply)  # as a result stored before this counted it
    result = dataclasses.replace(result, models=(dataclasses.replace(result.models[0], rows=tuple(rows)),))
    judged, _ = rejudge(result, load_items(SET), note="N")
    assert outcome(judged.models[0].rows[1]) == "asked_again"


def test_judging_again_counts_a_text_reply_that_asks_again_and_judges_declines_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = text_result(monkeypatch)
    ask = make_config().stt.ask_again_reply
    rows = list(result.models[0].rows)
    assert rows[1].id == "k-red-planet" and rows[1].right
    rows[1] = dataclasses.replace(rows[1], reply=ask)
    rows[3] = dataclasses.replace(rows[3], refused=False)  # as a looser or older check might have said
    result = dataclasses.replace(result, models=(dataclasses.replace(result.models[0], rows=tuple(rows)),))
    judged, changes = rejudge(result, load_items(SET), note="N", ask_again_reply=ask)
    again = judged.models[0].rows
    assert again[1].asked_again and not again[1].right and outcome(again[1]) == "asked_again"
    assert [(c.id, c.right_now) for c in changes] == [("k-red-planet", False)]
    assert again[3].refused and outcome(again[3]) == "right"  # the skill's "I can't do that: …"
    shares = judged.models[0].summary.judged.outcomes
    assert shares is not None and shares.values() == (75.0, 0.0, 25.0, 0.0)
    # without the config's reply, it is judged as any reply
    plain, _ = rejudge(result, load_items(SET), note="N")
    assert not plain.models[0].rows[1].asked_again and outcome(plain.models[0].rows[1]) == "wrong"


def test_judging_again_counts_a_spoken_reply_that_asks_again(fake_runtime: RuntimeFactory) -> None:
    # As a result stored before the turn's report counted an echo the reply check replaced as asking again.
    spoken = spoken_result(fake_runtime)
    ask = make_config().stt.ask_again_reply
    rows = list(spoken.models[0].rows)
    assert rows[0].right and not rows[0].asked_again
    rows[0] = dataclasses.replace(rows[0], reply=ask)
    spoken = dataclasses.replace(spoken, models=(dataclasses.replace(spoken.models[0], rows=tuple(rows)),))
    judged, changes = rejudge(spoken, load_items(SET), note="N", ask_again_reply=ask)
    again = judged.models[0].rows[0]
    assert again.asked_again and not again.right and outcome(again) == "asked_again"
    assert [(c.id, c.right_now) for c in changes] == [(rows[0].id, False)]
    plain, _ = rejudge(spoken, load_items(SET), note="N")
    assert not plain.models[0].rows[0].asked_again


def _committed(name: str) -> TextResult | SpokenResult:
    return QualityResult.from_json(json.loads((RESULTS / name).read_text(encoding="utf-8")))


def _adds_up(shares: tuple[float | None, ...]) -> bool:
    values = [v for v in shares if v is not None]
    return len(values) == 4 and abs(sum(values) - 100) <= 0.2  # four rounded shares: ±0.05 each


#: Committed results made before the four outcomes: a text run of every catalogue LLM (skills on), and spoken runs
#: with [stt] ask_again on (replies asked again) and with six voices.
BEFORE = ["2026-12-04-quality-s11-text-all.json", "2026-12-04-quality-spoken-ask-again.json",
          "2026-12-04-quality-spoken-voices.json"]  # fmt: skip


@pytest.mark.parametrize("name", BEFORE)
def test_the_four_shares_of_real_judged_rows_add_up_to_100(name: str) -> None:
    """Each committed reply judged again by the current checks (with the decline check): every model's four shares
    add up to 100, as do each category's and each voice's, and they are the rows' outcomes counted."""
    before = _committed(name)
    assert all(m.summary.judged.outcomes is None for m in before.models)  # made before they were counted
    judged, _ = rejudge(before, load_items(SET), note="N")
    for m in judged.models:
        j = m.summary.judged
        assert j.outcomes is not None and _adds_up(j.outcomes.values())
        assert all(_adds_up(s.values()) for s in j.outcomes_by_category.values())
        assert list(j.outcomes_by_category) == list(j.right_pct_by_category)
        kinds = [outcome(r) for r in m.rows]
        counted = tuple(round(100 * kinds.count(o) / len(kinds), 1) for o in OUTCOMES)
        assert j.outcomes.values() == counted and j.outcomes.right_pct == j.right_pct
    spoken = [m.summary for m in judged.models if judged.mode == "spoken"]
    for s in spoken:
        assert s.judged.outcomes is not None and s.asked_again_pct == s.judged.outcomes.asked_again_pct
        for v in s.by_voice.values():
            assert _adds_up((v.right_pct, v.declined_pct, v.asked_again_pct, v.wrong_pct))
    if name == "2026-12-04-quality-spoken-ask-again.json":
        (model,) = spoken
        shares = model.judged.outcomes
        assert shares is not None and shares.asked_again_pct == 23.8  # as it ran


@pytest.mark.parametrize("name", BEFORE)
def test_a_rejudged_old_result_reports_the_four_columns_and_reads_back(name: str) -> None:
    judged, _ = rejudge(_committed(name), load_items(SET), note="N")
    data = judged.to_json()
    summary: dict[str, Any] = data["models"][0]["summary"]
    keys = list(summary)
    assert keys[1:5] == ["right_pct", "declined_pct", "asked_again_pct", "wrong_pct"]
    assert "outcome_pct_by_category" in summary
    again = QualityResult.from_json(data)
    assert again == judged and same_json(again.to_json(), data)
    md = markdown(judged)
    assert "| right % | honest decline % | asked again % | wrong % |" in md
    assert "Right / honest decline / asked again / wrong % by category: " in md


def test_the_command_judges_a_committed_result_again_into_the_four_columns(tmp_path: Path) -> None:
    source = RESULTS / BEFORE[1]
    out = tmp_path / "rejudged"
    args = build_parser().parse_args(["bench", "quality", "--rejudge", str(source), "--out", str(out)])
    assert run(args) == 0
    written = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    summary = written["models"][0]["summary"]
    shares = [summary[k] for k in ("right_pct", "declined_pct", "asked_again_pct", "wrong_pct")]
    assert abs(sum(shares) - 100) <= 0.2
    assert "| honest decline % |" in out.with_suffix(".md").read_text(encoding="utf-8")


#: Committed quality results that are not read back here: the first typed one (its summaries' keys were in another
#: order, test_bench_quality_json) and two written before the result had a mode or per-voice summaries.
UNREAD = {
    "2026-12-04-quality-text.json",
    "2026-12-04-quality-spoken.json",
    "quality-text-2026-12-03-before.json",
}
COMMITTED = sorted(p.name for p in RESULTS.glob("*quality*.json") if p.name not in UNREAD)


@pytest.mark.parametrize("name", COMMITTED)
def test_every_committed_result_reads_back_to_its_json_and_markdown(name: str) -> None:
    """Results with or without the four outcomes read back to what was written, and their Markdown keeps the
    columns it had (an older result's table is not widened by empty outcome columns)."""
    path = RESULTS / name
    data = json.loads(path.read_text(encoding="utf-8"))
    result = QualityResult.from_json(data)
    assert same_json(result.to_json(), data)
    assert markdown(result) + "\n" == path.with_suffix(".md").read_text(encoding="utf-8")
