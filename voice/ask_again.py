"""Whether to ask the user to say it again, when the STT is unsure of what it heard (``[stt] ask_again``).

Below ``ask_again_below_logprob`` (Whisper's mean log-probability per token) the words are probably not what the
user said, so they are not answered. One exception (``[stt] skills_take_unsure``, on with the skills): a
transcript that a local skill recognises whole, as a command or question it answers exactly (a sum, a unit
conversion, the clock, a timer, a request the assistant cannot carry out), is answered anyway. A misrecognition
seldom forms such a command, and the skill's reply says back what it understood ("7 times 30 is 210.", "Timer
set for 8 minutes."), so a wrong hearing is plain to hear. Unsure transcripts that only the LLM would answer,
or that need the conversation (a fact the user told, "double that"), are still asked again. Pure.
"""

from __future__ import annotations

from datetime import datetime

from voice import capabilities, skills, timers
from voice.config import Config
from voice.user_text import strip_interjections

#: Any moment will do: it changes the words of a clock answer, never whether there is one.
_A_MOMENT = datetime(2026, 1, 1, 12, 0)


def understood(text: str, location: str = "") -> bool:
    """A stateless local skill (or the timers) would answer ``text`` without the LLM."""
    text = strip_interjections(text)
    return (
        timers.parse(text) is not None
        or skills.answer(text, _A_MOMENT, location) is not None
        or capabilities.cannot(text) is not None
    )


def needed(config: Config, text: str, avg_logprob: float | None) -> bool:
    """Reply ``[stt] ask_again_reply`` to ``text`` instead of answering it (and keep it out of the history)."""
    if not text or not config.stt.unsure(avg_logprob):
        return False
    take = config.llm.skills and config.stt.skills_take_unsure
    return not (take and understood(text, config.llm.location))
