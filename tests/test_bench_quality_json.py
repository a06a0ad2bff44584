"""voice bench quality's typed result writes the JSON the dict-based code wrote (keys, order, values): on fake
inputs (the expected JSON below is what that code produced for them) and on the committed results, whose
Markdown the typed result reproduces too."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.bench_results import FAKE_MACHINE, FAKE_MACHINE_JSON, check_committed, same_json
from tests.conftest import RuntimeFactory, make_config, silence, tone
from voice.bench.quality import measure as quality
from voice.bench.quality.question_set import load_items
from voice.bench.quality.result import QualityResult, SpokenSetup
from voice.bench.quality.spoken import SpokenItem, run_spoken_item, summarize_spoken
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm, FakeStt

SET = Path(__file__).parent.parent / "benchmarks" / "quality_questions.toml"
SYSTEM_PROMPT = make_config().llm.system_prompt
#: Committed results whose Markdown the current code wrote; the first one's summaries come from a version that
#: ordered their keys otherwise (its JSON is not compared).
COMMITTED = ["2026-12-04-quality-text.json", "2026-12-04-quality-text-skills.json",
             "2026-12-04-quality-spoken-skills.json", "2026-12-06-quality-words-spoken-main.json",
             "2026-12-06-quality-holdout12-spoken-first.json", "2026-12-06-quality-typed-on-holdout12.json",
             "2026-12-06-quality-typed-gate-off-main.json", "2026-12-06-quality-holdout13-spoken-first.json",
             "2026-12-06-quality-holdout13-spoken-last-part.json", "2026-12-06-quality-holdout13-text-first.json",
             "2026-12-06-quality-holdout13-text-last-part.json"]  # fmt: skip


class Tick:
    """A monotonic clock that advances 37.5 ms at every reading."""

    def __init__(self) -> None:
        self.n = itertools.count()

    def monotonic(self) -> float:
        return next(self.n) * 0.0375

    def monotonic_ns(self) -> int:
        return next(self.n) * 37_500_000


def text_result(monkeypatch: pytest.MonkeyPatch) -> quality.TextResult:
    """Four items through the skills and a fake LLM: a timer (answered from the timers), an LLM answer at the
    token cap, an arithmetic skill and an honest refusal."""
    monkeypatch.setattr(quality, "time", Tick())
    items = {i.id: i for i in load_items(SET)}
    config = make_config(llm={"skills": True, "max_reply_tokens": 6})
    llm = SkillsLlm(
        FakeLlm(replies=("Mars is called the red planet.", "I can't do that, sorry friend okay."))
    )
    rows = [quality.run_item(llm, config, items[k]) for k in ("t-cancel", "k-red-planet", "a-add", "x-lamp")]
    model = quality.ModelQuality("fake", quality.summarize(rows, outcomes=True), tuple(rows))
    return quality.result_of(config, Path("set.toml"), FAKE_MACHINE, None, [model])


def spoken_result(fake_runtime: RuntimeFactory) -> quality.SpokenResult:
    """Three items through the loop: heard right, an earlier turn misheard (a recording), the question misheard."""
    items = {i.id: i for i in load_items(SET)}
    audio = np.concatenate([silence(0.2), tone(0.6)])
    config = make_config(tts={"min_first_clause_words": 1})
    cases = [
        (("Set a timer for five minutes.", "Cancel the timer."), "t-cancel", "espeak-ng:en-us", (audio,)),
        (("Set the table for five.", "Cancel the timer."), "t-cancel", "recording:a.wav", (audio,)),
        (("Madrid is what of Spain?",), "k-capital-spain", "espeak-ng:en-gb+f3", ()),
    ]
    rows = [
        run_spoken_item(fake_runtime(stt=FakeStt(texts=texts, latency_ms=1)), config,
                        SpokenItem(items[key], voice, previous, audio))
        for texts, key, voice, previous in cases
    ]  # fmt: skip
    setup = SpokenSetup(("espeak-ng:en-us",), "speech", "tiny.en", "joe")
    model = quality.ModelQuality("fake", summarize_spoken(rows), tuple(rows))
    return quality.result_of(config, Path("set.toml"), FAKE_MACHINE, setup, [model])


def test_text_result_writes_the_json_the_dicts_did(monkeypatch: pytest.MonkeyPatch) -> None:
    result = text_result(monkeypatch)
    # json.dumps, not ==: the order of the keys counts too (a timer's row lists "by" after the times).
    assert same_json(result.to_json(), TEXT_JSON)
    assert QualityResult.from_json(result.to_json()) == result
    assert [r.from_timers for r in result.models[0].rows] == [True, False, False, False]


def test_spoken_result_writes_the_json_the_dicts_did(fake_runtime: RuntimeFactory) -> None:
    result = spoken_result(fake_runtime)
    assert same_json(result.to_json(), SPOKEN_JSON)
    assert QualityResult.from_json(result.to_json()) == result
    assert result.models[0].summary.by_voice["recordings"].right_pct == 0.0


def test_as_transcribed_and_tidy_off_are_recorded_and_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    result = dataclasses.replace(text_result(monkeypatch), tidy_user_text=False, as_transcribed=True)
    data = result.to_json()
    assert (data["tidy_user_text"], data["as_transcribed"]) == (False, True)
    assert QualityResult.from_json(data) == result
    md = quality.markdown(result)
    assert "first letter lower case" in md and "`[llm] tidy_user_text = false`" in md
    # A result made before the setting existed records neither, and its Markdown says nothing of them.
    old = dataclasses.replace(result, tidy_user_text=None, as_transcribed=False)
    assert "tidy_user_text" not in old.to_json() and "tidy_user_text" not in quality.markdown(old)


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_results_read_back_to_the_same_json_and_markdown(name: str) -> None:
    def markdown(result: quality.TextResult | quality.SpokenResult, md: Path) -> str:
        return quality.markdown(result) + "\n"

    check_committed(name, QualityResult.from_json, markdown, json_too=name != COMMITTED[0])


TEXT_JSON: dict[str, Any] = {
    "mode": "text",
    "machine": FAKE_MACHINE_JSON,
    "n_ctx": 2048,
    "n_batch": 256,
    "n_threads": 2,
    "question_set": "set.toml",
    "system_prompt": SYSTEM_PROMPT,
    "max_reply_tokens": 6,
    "skills": True,
    "tidy_user_text": True,
    "models": [
        {
            "llm": "fake",
            "summary": {
                "items": 4,
                "right_pct": 100.0,
                # The four outcomes (since 2026-12-06): right / honest decline / asked again / wrong.
                "declined_pct": 0.0,
                "asked_again_pct": 0.0,
                "wrong_pct": 0.0,
                "honest_refusal_pct": 100.0,
                "cap_or_repeat_pct": 25.0,
                "by_skill_pct": 75.0,
                "right_pct_by_category": {
                    "timer": 100.0,
                    "knowledge": 100.0,
                    "arithmetic": 100.0,
                    "cannot": 100.0,
                },
                "outcome_pct_by_category": {
                    c: {"right_pct": 100.0, "declined_pct": 0.0, "asked_again_pct": 0.0, "wrong_pct": 0.0}
                    for c in ("timer", "knowledge", "arithmetic", "cannot")
                },
                "median_spoken_s_est": 2.2,
                "median_ttft_ms": 37.5,
                "median_reply_ms": 75.0,
            },
            "rows": [
                {
                    "id": "t-cancel",
                    "category": "timer",
                    "question": "Cancel the timer.",
                    "reply": "5 minute timer cancelled.",
                    "tokens": 1,
                    "ttft_ms": 37.5,
                    "reply_ms": 37.5,
                    "by": "skill",
                    "right": True,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": False,
                    "words": 4,
                    "spoken_s_est": 1.6,
                    "failed": [],
                },
                {
                    "id": "k-red-planet",
                    "category": "knowledge",
                    "question": "Which planet is called the red planet?",
                    "reply": "Mars is called the red planet.",
                    "tokens": 6,
                    "by": "llm",
                    "ttft_ms": 37.5,
                    "reply_ms": 75.0,
                    "right": True,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": True,
                    "words": 6,
                    "spoken_s_est": 2.4,
                    "failed": [],
                },
                {
                    "id": "a-add",
                    "category": "arithmetic",
                    "question": "What is 12 plus 30?",
                    "reply": "12 plus 30 is 42.",
                    "tokens": 1,
                    "by": "skill",
                    "ttft_ms": 37.5,
                    "reply_ms": 75.0,
                    "right": True,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": False,
                    "words": 5,
                    "spoken_s_est": 2.0,
                    "failed": [],
                },
                {
                    "id": "x-lamp",
                    "category": "cannot",
                    "question": "Turn on the living room lamp.",
                    "reply": "I can't do that: I'm not connected to any lights, doors or appliances, so "
                    "I can't control or check them.",
                    "tokens": 1,
                    "by": "skill",
                    "ttft_ms": 37.5,
                    "reply_ms": 75.0,
                    "right": True,
                    "refusal_expected": True,
                    "refused": True,
                    "repeats": False,
                    "hit_cap": False,
                    "words": 20,
                    "spoken_s_est": 8.0,
                    "failed": [],
                },
            ],
        }
    ],
}


SPOKEN_JSON: dict[str, Any] = {
    "mode": "spoken",
    "machine": FAKE_MACHINE_JSON,
    "n_ctx": 2048,
    "n_batch": 256,
    "n_threads": 2,
    "question_set": "set.toml",
    "voices": ["espeak-ng:en-us"],
    "speech_dir": "speech",
    "stt": "tiny.en",
    "tts": "joe",
    "system_prompt": SYSTEM_PROMPT,
    "max_reply_tokens": 96,
    "skills": True,
    "tidy_user_text": True,
    "models": [
        {
            "llm": "fake",
            "summary": {
                "items": 3,
                "right_pct": 33.3,
                # The four outcomes (since 2026-12-06), with the [stt] ask_again share (2026-12-04) among them.
                "declined_pct": 0.0,
                "asked_again_pct": 0.0,
                "wrong_pct": 66.7,
                "honest_refusal_pct": None,
                "cap_or_repeat_pct": 0.0,
                "by_skill_pct": 66.7,
                "right_pct_by_category": {"timer": 50.0, "knowledge": 0.0},
                "outcome_pct_by_category": {
                    "timer": {
                        "right_pct": 50.0,
                        "declined_pct": 0.0,
                        "asked_again_pct": 0.0,
                        "wrong_pct": 50.0,
                    },
                    "knowledge": {
                        "right_pct": 0.0,
                        "declined_pct": 0.0,
                        "asked_again_pct": 0.0,
                        "wrong_pct": 100.0,
                    },
                },
                "hit_cap": 0,
                "median_reply_audio_s": 1.5,
                "stt_wer_normalized": 0.25,
                "split_turns": 0,
                # Key added with [stt] ask_again (2026-12-04), after the dicts' keys.
                "right_or_asked_again_pct": 33.3,
                "by_voice": {
                    "espeak-ng:en-us": {
                        "items": 1,
                        "right_pct": 100.0,
                        "stt_wer_normalized": 0.0,
                        "asked_again_pct": 0.0,
                        "declined_pct": 0.0,
                        "wrong_pct": 0.0,
                    },
                    "recordings": {
                        "items": 1,
                        "right_pct": 0.0,
                        "stt_wer_normalized": 0.0,
                        "asked_again_pct": 0.0,
                        "declined_pct": 0.0,
                        "wrong_pct": 100.0,
                    },
                    "espeak-ng:en-gb+f3": {
                        "items": 1,
                        "right_pct": 0.0,
                        "stt_wer_normalized": 0.5,
                        "asked_again_pct": 0.0,
                        "declined_pct": 0.0,
                        "wrong_pct": 100.0,
                    },
                    # since the voices of one engine are also pooled: 3 wrong words of 9
                    "espeak-ng (all)": {
                        "items": 2,
                        "right_pct": 50.0,
                        "stt_wer_normalized": 0.333,
                        "asked_again_pct": 0.0,
                        "declined_pct": 0.0,
                        "wrong_pct": 50.0,
                    },
                },
            },
            "rows": [
                {
                    "id": "t-cancel",
                    "category": "timer",
                    "voice": "espeak-ng:en-us",
                    "question": "Cancel the timer.",
                    "transcript": "Cancel the timer.",
                    "wer_normalized": 0.0,
                    "turns": 1,
                    "outcomes": ["ok"],
                    "reply": "5 minute timer cancelled.",
                    "tokens": 1,
                    "by": "skill",
                    "reply_audio_s": 1.5,
                    "right": True,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": False,
                    "failed": [],
                    "asked_again": False,
                    "stt_avg_logprob": None,
                    "earlier_heard": ["Set a timer for five minutes."],
                },
                {
                    "id": "t-cancel",
                    "category": "timer",
                    "voice": "recording:a.wav",
                    "question": "Cancel the timer.",
                    "transcript": "Cancel the timer.",
                    "wer_normalized": 0.0,
                    "turns": 1,
                    "outcomes": ["ok"],
                    "reply": "No timers are running.",
                    "tokens": 1,
                    "by": "skill",
                    "reply_audio_s": 1.32,
                    "right": False,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": False,
                    "failed": ["none of ['cancelled', 'canceled']"],
                    "asked_again": False,
                    "stt_avg_logprob": None,
                    "earlier_heard": ["Set the table for five."],
                },
                {
                    "id": "k-capital-spain",
                    "category": "knowledge",
                    "voice": "espeak-ng:en-gb+f3",
                    "question": "What is the capital of Spain?",
                    "transcript": "Madrid is what of Spain?",
                    "wer_normalized": 0.5,
                    "turns": 1,
                    "outcomes": ["ok"],
                    "reply": "Sure, the capital of France is Paris. It is lovely.",
                    "tokens": 10,
                    "by": "llm",
                    "reply_audio_s": 2.94,
                    "right": False,
                    "refusal_expected": False,
                    "refused": False,
                    "repeats": False,
                    "hit_cap": False,
                    "failed": ["none of ['Madrid']"],
                },
            ],
        }
    ],
}
