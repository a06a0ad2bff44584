"""The report of ``voice bench quality`` (:mod:`voice.bench.quality.measure`): the summary tables of either mode
(console and Markdown), the per-voice and per-category lines, and the Markdown of a whole result.

Results that count the four outcomes (right / honest decline / asked again / wrong,
:data:`~voice.bench.quality.question_set.OUTCOMES`) show them as four columns next to each other; results made
before keep the columns they were written with, so their Markdown reads back as committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from voice.bench.machine import machine_markdown
from voice.bench.markdown import fixed, md_table
from voice.bench.quality.question_set import JudgedSummary
from voice.bench.quality.result import (
    ModelQuality,
    SpokenResult,
    SpokenRow,
    SpokenSummary,
    TextResult,
    TextRow,
    TextSummary,
)

#: The four outcomes' columns, in this order wherever they are shown.
OUTCOME_HEADER = ["right %", "honest decline %", "asked again %", "wrong %"]

SUMMARY_HEADER = [
    "llm", "items", "right %", "honest refusals %", "cap/repeat %", "median spoken s (est.)",
    "answered by skills %", "median TTFT ms (LLM)", "median reply ms (LLM)",
]  # fmt: skip
"""The text mode's summary columns of results made before the four outcomes were counted."""

#: With the four outcomes: "honest refusals %" is the share of the items whose right answer is "I can't" (the
#: ``cannot`` items) where the reply declined.
SUMMARY_HEADER_OUTCOMES = [
    "llm", "items", *OUTCOME_HEADER, "cannot items declined %", "cap/repeat %", "median spoken s (est.)",
    "answered by skills %", "median TTFT ms (LLM)", "median reply ms (LLM)",
]  # fmt: skip


def _shares(j: JudgedSummary) -> list[Any]:
    """The four outcomes' shares (``j.outcomes`` is set)."""
    assert j.outcomes is not None
    return list(j.outcomes.values())


def summary_row(name: str, s: TextSummary, outcomes: bool = False) -> list[Any]:
    """A text-mode summary's row (with ``outcomes``: of :data:`SUMMARY_HEADER_OUTCOMES`)."""
    j = s.judged
    judged = [*_shares(j), j.honest_refusal_pct] if outcomes else [j.right_pct, j.honest_refusal_pct]
    return [
        name, j.items, *judged, j.cap_or_repeat_pct, s.median_spoken_s_est, j.by_skill_pct, s.median_ttft_ms,
        s.median_reply_ms,
    ]  # fmt: skip


def _counted(summaries: Sequence[TextSummary | SpokenSummary]) -> bool:
    """Every summary counts the four outcomes (else the table keeps the columns of before)."""
    return bool(summaries) and all(s.judged.outcomes is not None for s in summaries)


def text_summary_table(
    models: Sequence[ModelQuality[TextSummary, TextRow]],
) -> tuple[list[str], list[list[Any]]]:
    """The text mode's summary table (header, a row per LLM)."""
    counted = _counted([m.summary for m in models])
    header = SUMMARY_HEADER_OUTCOMES if counted else SUMMARY_HEADER
    return header, [summary_row(m.llm, m.summary, counted) for m in models]


SPOKEN_HEADER = [
    "llm", "items", "right %", "honest refusals %", "cap/repeat %", "hit the token cap", "answered by skills %",
    "median reply audio s", "STT WER (norm.)", "heard as 2+ turns",
]  # fmt: skip

#: Columns of results made with [stt] ask_again reported (older results have none).
ASKED_AGAIN_HEADER = ["asked to say it again %", "right or asked again %"]

SPOKEN_HEADER_OUTCOMES = [
    "llm", "items", *OUTCOME_HEADER, "cannot items declined %", "cap/repeat %", "hit the token cap",
    "answered by skills %", "median reply audio s", "STT WER (norm.)", "heard as 2+ turns", "right or asked again %",
]  # fmt: skip


def _asked_again(summaries: Sequence[SpokenSummary]) -> bool:
    return any(s.asked_again_pct is not None for s in summaries)


def spoken_table(
    models: Sequence[ModelQuality[SpokenSummary, SpokenRow]],
) -> tuple[list[str], list[list[Any]]]:
    """The spoken mode's summary table (header, a row per LLM)."""
    if _counted([m.summary for m in models]):
        return SPOKEN_HEADER_OUTCOMES, [
            [m.llm, m.summary.judged.items, *_shares(m.summary.judged), *_spoken_rest(m.summary),
             m.summary.right_or_asked_again_pct]
            for m in models
        ]  # fmt: skip
    asked = _asked_again([m.summary for m in models])
    rows = []
    for m in models:
        s, j = m.summary, m.summary.judged
        rows.append([m.llm, j.items, j.right_pct, *_spoken_rest(s)]
                    + ([s.asked_again_pct, s.right_or_asked_again_pct] if asked else []))  # fmt: skip
    return SPOKEN_HEADER + (ASKED_AGAIN_HEADER if asked else []), rows


def _spoken_rest(s: SpokenSummary) -> list[Any]:
    """A spoken summary's columns from "honest refusals %" to "heard as 2+ turns"."""
    j = s.judged
    return [j.honest_refusal_pct, j.cap_or_repeat_pct, s.hit_cap, j.by_skill_pct, s.median_reply_audio_s,
            fixed(s.stt_wer_normalized), s.split_turns]  # fmt: skip


def voice_table(s: SpokenSummary) -> str:
    """The Markdown table of a spoken summary's voices."""
    voices = s.by_voice
    if s.judged.outcomes is not None:
        return md_table(["voice", "items", *OUTCOME_HEADER, "STT WER (norm.)"],
                        [[v, d.items, d.right_pct, d.declined_pct, d.asked_again_pct, d.wrong_pct,
                          fixed(d.stt_wer_normalized)] for v, d in voices.items()],
                        align="lrrrrrr")  # fmt: skip
    asked = _asked_again([s])
    return md_table(["voice", "items", "right %", "STT WER (norm.)"] + (["asked again %"] if asked else []),
                    [[v, d.items, d.right_pct, fixed(d.stt_wer_normalized)]
                     + ([d.asked_again_pct] if asked else []) for v, d in voices.items()],
                    align="lrrrr" if asked else "lrrr")  # fmt: skip


def category_line(llm: str, judged: JudgedSummary) -> list[str]:
    """A model's heading and its right % by category (with the four outcomes: each category's four shares)."""
    if judged.outcomes is not None:
        shares = (f"{c} {' / '.join(map(str, s.values()))}" for c, s in judged.outcomes_by_category.items())
        line = "Right / honest decline / asked again / wrong % by category: " + ", ".join(shares)
    else:
        line = "Right % by category: " + ", ".join(
            f"{k} {v}" for k, v in judged.right_pct_by_category.items()
        )
    return [f"## {llm}", "", line, ""]


def heard(r: SpokenRow) -> str:
    """What the loop heard; a follow-up's earlier turns first, with those the reply asked to say again marked."""
    again = r.earlier_asked_again or (False,) * len(r.earlier_heard)
    earlier = zip(r.earlier_heard, again, strict=True)
    return "".join(f"(earlier{', asked again' if a else ''}: {e}) " for e, a in earlier) + r.transcript


def _rejudged(result: TextResult | SpokenResult) -> list[str]:
    """The paragraph of a result judged again (``--rejudge``), or nothing."""
    return [] if result.rejudged is None else [f"**{result.rejudged}**", ""]


def _tidy_note(tidy: bool | None) -> str:
    """The ``[llm] tidy_user_text`` setting, for results that record it."""
    return "" if tidy is None else f"; `[llm] tidy_user_text = {'true' if tidy else 'false'}`"


def markdown(result: TextResult | SpokenResult) -> str:
    if result.mode == "spoken":
        return markdown_spoken(cast("SpokenResult", result))
    text = cast("TextResult", result)
    parts = ["# voice bench quality (text mode)", "", machine_markdown(text.machine), "", *_rejudged(text)]
    parts += [f"Question set: `{text.question_set}`"
              + (" (each question written as the STT often writes it: first letter lower case, \"?\" as \".\")"
                 if text.as_transcribed else "")
              + f"; system prompt: {text.system_prompt!r}; max_reply_tokens {text.max_reply_tokens}; greedy"
              + _tidy_note(text.tidy_user_text) + ".", ""]  # fmt: skip
    parts += [md_table(*text_summary_table(text.models)), ""]
    for m in text.models:
        parts += category_line(m.llm, m.summary.judged)
        rows = [
            [r.id, r.question, r.reply, "yes" if r.right else "no", "; ".join(r.failed),
             r.by, r.tokens, r.ttft_ms, r.reply_ms]
            for r in m.rows
        ]  # fmt: skip
        parts += [md_table(["id", "question", "reply", "right", "why not", "by", "tokens", "TTFT ms", "reply ms"],
                           rows, align="lllllllrr"), ""]  # fmt: skip
    return "\n".join(parts)


def markdown_spoken(result: SpokenResult) -> str:
    setup = result.spoken
    assert setup is not None, "a spoken-mode result has its setup"
    parts = [
        "# voice bench quality (spoken mode)",
        "",
        machine_markdown(result.machine),
        "",
        *_rejudged(result),
    ]
    parts += [f"Question set: `{result.question_set}`, spoken by {', '.join(setup.voices)} in turn"
              + (f" and the matching recordings of `{setup.speech_dir}`" if setup.speech_dir else "")
              + f"; STT `{setup.stt}`, TTS `{setup.tts}`; the whole loop (VAD, end of turn, "
              f"speculation, STT, skills, LLM, TTS) in one session per item; max_reply_tokens "
              f"{result.max_reply_tokens}; greedy" + _tidy_note(result.tidy_user_text) + ".", ""]  # fmt: skip
    parts += [md_table(*spoken_table(result.models)), ""]
    for m in result.models:
        parts += category_line(m.llm, m.summary.judged)
        parts += [voice_table(m.summary), ""]
        rows = [
            [r.id, r.voice, r.question, heard(r), r.reply, "yes" if r.right else "no",
             "; ".join(r.failed), r.by, r.tokens, r.reply_audio_s]
            for r in m.rows
        ]  # fmt: skip
        parts += [md_table(["id", "voice", "question", "heard", "reply", "right", "why not", "by", "tokens",
                            "audio s"], rows, align="llllllllrr"), ""]  # fmt: skip
    return "\n".join(parts)
