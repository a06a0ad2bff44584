"""Whether to ask the user to say it again, when the STT is unsure of what it heard (``[stt] ask_again``).

Below ``ask_again_below_logprob`` (Whisper's mean log-probability per token) the words are probably not what the
user said, so they are not answered. One exception (``[stt] skills_take_unsure``, on with the skills): a
transcript that a local skill recognises whole, as a command or question it answers exactly (a sum, a unit
conversion, the clock, a timer, a request the assistant cannot carry out, a question of live state it cannot see),
is answered anyway. A misrecognition
seldom forms such a command, and the skill's reply says back what it understood ("7 times 30 is 210.", "Timer
set for 8 minutes."), so a wrong hearing is plain to hear. The same holds for a follow-up that a skill answers
from the conversation with such a reply: one written out from the previous question ("How about Germany?" after
a capital → "The capital of Germany is Berlin.", "and 30?" after a conversion) or worked on the previous answer
("double that" → "25 doubled is 50."). Unsure transcripts that only the LLM would answer, or that need a fact
the user told ("What is my name?", whose answer would not show a mishearing), are still asked again.

Words only the LLM would answer meet a stricter bar, ``[stt] ask_again_llm_below_logprob``: the LLM answers a
misheard question as surely as a heard one (a made-up answer to words the user did not say), while a skill's
exact reply shows what it understood. Between the two bars, a transcript no skill takes is asked again. The same
holds for such words when their least likely word is under ``[stt] ask_again_llm_below_word_prob`` (one misheard
word the mean over the sentence hides).

A turn that corrects itself is judged as meant (:mod:`voice.conversation.self_repair`, ``[llm] self_repair``): "set a
timer for three minutes, no, make it four" is the timer of four minutes. Its length is the length as said: a long
turn a skill takes as meant is answered, and one only the LLM would answer is asked for in fewer words, however
short its repair made it (the LLM answered such repaired rambles no better than others).

Words only the LLM would answer that run long (more than ``[stt] ask_again_llm_above_words``, hesitations not
counted) are not handed to it either, however sure the STT: a small LLM answers a long, rambling turn badly (on
the older question sets, spoken, it answered 1 of 23 such turns right), so :func:`reply` asks for the question in
fewer words (``[stt] ask_shorter_reply``). A skill still answers a long turn it recognises (a tip with its story).

A transcript with nothing to answer (:func:`voice.conversation.input_gate.unintelligible`: only punctuation, digits,
hesitation sounds or notes of sounds, "1 2 3 4 5", "Um, uh.", "[BLANK_AUDIO]") is asked again however sure the STT
was, and whatever ``ask_again`` says: no LLM is asked to guess at it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from voice.config.config import Config
from voice.conversation.follow_ups import resolve_messages
from voice.conversation.input_gate import unintelligible
from voice.conversation.self_repair import as_meant
from voice.conversation.user_text import strip_interjections
from voice.runtime.model_api import ChatMessage
from voice.skills import answer as skills
from voice.skills import capabilities, live_state, timers
from voice.skills.word_classes import is_filler

_WORD = re.compile(r"[a-z0-9']+")

#: Any moment will do: it changes the words of a clock answer, never whether there is one.
_A_MOMENT = datetime(2026, 1, 1, 12, 0)


def understood(
    text: str, location: str = "", earlier: Sequence[ChatMessage] = (), *, resolve_follow_ups: bool = True
) -> bool:
    """A local skill (or the timers) would answer ``text`` without the LLM: on its own, or as a follow-up of the
    conversation so far, ``earlier`` (written out from the previous question when ``resolve_follow_ups``, as
    ``[llm] resolve_follow_ups`` has the skills do, on the amounts the user told, or on the previous answer's
    result)."""
    text = strip_interjections(text)
    if (
        timers.parse(text) is not None
        or skills.answer(text, _A_MOMENT, location) is not None
        or capabilities.cannot(text) is not None
        or live_state.cannot_see(text) is not None  # "is the front door at home locked": "I can't see that"
    ):
        return True
    if not earlier:
        return False
    if resolve_follow_ups:
        asked = strip_interjections(resolve_messages([*earlier, ChatMessage("user", text)])[-1].content)
        if asked != text and skills.answer(asked, _A_MOMENT, location) is not None:
            return True
    if skills.on_told_amounts(text, [m.content for m in earlier if m.role == "user"]):
        return True  # "…I've got 320 pounds in the bills account." … "if I pay 95 out of that how much is left"
    previous = next((m.content for m in reversed(earlier) if m.role == "assistant"), "")
    return bool(previous) and skills.follow_up(text, previous) is not None


def _nothing_to_answer(config: Config, text: str, earlier: Sequence[ChatMessage]) -> bool:
    """``text`` is unintelligible, and the conversation gives it no meaning: it is not written out as a follow-up
    ("And 2.5?" after "How many feet are in 3 miles?"), and no skill takes it."""
    if not unintelligible(text):
        return False
    resolve = config.llm.resolve_follow_ups
    if earlier and resolve:
        written = resolve_messages([*earlier, ChatMessage("user", text)])[-1].content
        if written != text and not unintelligible(written):
            return False
    return not (
        config.llm.skills and understood(text, config.llm.location, earlier, resolve_follow_ups=resolve)
    )


def needed(
    config: Config,
    text: str,
    avg_logprob: float | None,
    earlier: Sequence[ChatMessage] = (),
    min_word_prob: float | None = None,
) -> bool:
    """Reply ``[stt] ask_again_reply`` to ``text`` instead of answering it (and keep it out of the history):
    when it is unintelligible, or the STT is unsure of it (``avg_logprob``, or its least likely word,
    ``min_word_prob``) and no skill takes it; ``earlier`` is the conversation before it."""
    if not text:
        return False
    said, text = text, as_meant(text, config.llm)  # "…three minutes, no, make it four": the timer, as meant
    resolve = config.llm.resolve_follow_ups
    if _nothing_to_answer(config, text, earlier):
        return True  # however sure the STT
    stt = config.stt
    if stt.ask_again and too_long(config, said):  # the length of the turn as said: a skill may take it as meant
        return not (config.llm.skills and understood(text, config.llm.location, earlier, resolve_follow_ups=resolve))
    if not stt.unsure_for_llm(avg_logprob, min_word_prob):
        return False
    # Under the general bar a skill takes the words only with skills_take_unsure; between the two bars (only words
    # the LLM would answer are asked again) any skill that answers them exactly does.
    take = config.llm.skills and (stt.skills_take_unsure or not stt.unsure(avg_logprob))
    return not (take and understood(text, config.llm.location, earlier, resolve_follow_ups=resolve))


def too_long(config: Config, text: str) -> bool:
    """``text`` has more words than ``[stt] ask_again_llm_above_words`` (hesitations not counted; 0: never)."""
    most = config.stt.ask_again_llm_above_words
    return bool(most) and sum(not is_filler(w) for w in _WORD.findall(text.lower())) > most


def reply(config: Config, text: str) -> str:
    """What to say when :func:`needed`: ``[stt] ask_shorter_reply`` to a turn :func:`too_long`, else
    ``[stt] ask_again_reply``."""
    return config.stt.ask_shorter_reply if too_long(config, text) else config.stt.ask_again_reply
