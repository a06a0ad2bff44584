"""A reply that recites the assistant's own instructions instead of answering.

A small model answers a question it cannot place with words of its system prompt: "I'm sorry for the confusion,
but as a voice assistant, I can only respond in one or two short sentences." (after "How many seconds into
hours?"), "Priya is a voice assistant running on the user's computer." (after "What is my name?"). Neither
answers, neither declines: a listener hears a confident non-answer. :func:`recites` finds such a sentence by one
rule, with no list of phrasings: it says four words in a row that the system prompt says, which the user did not
say, and it does not decline (a "can't" or "don't" sentence that borrows the prompt's words, "as a voice assistant
I don't have access to the news", is an honest decline and stays). The ``not_sure`` gate
(:class:`voice.conversation.answer_confidence.UnsureGate`) then says ``[llm] not_sure_reply`` instead; it holds the
first sentence only when the backend gives log-probabilities (without them, a recital is spoken as before). Pure.

On the stored LLM replies of every question set judged so far (1,610 distinct, spoken and typed, 2026-12-06) the
rule fires on 13: 9 judged wrong, 1 decline, and 3 judged right, two of which are "Priya is a voice assistant
running on the user's computer." (the name was the check) and one a claim the reply check replaces already.
"""

from __future__ import annotations

import functools
import re

from voice.skills.word_classes import words_in

_DECLINES = re.compile(r"\b(?:not|no|never|cannot|unable|unfortunately|wish)\b|n't\b")
SPAN_WORDS = 4
"""How many words in a row, said as the prompt says them, make a recital ("one or two short", "running on the
user's"; three would take "a voice assistant" from a plain "I am a voice assistant")."""


def _spans(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + SPAN_WORDS]) for i in range(len(words) - SPAN_WORDS + 1)}


@functools.lru_cache(maxsize=8)
def _prompt_spans(system_prompt: str) -> frozenset[tuple[str, ...]]:
    return frozenset(_spans(words_in(system_prompt)))


def recites(sentence: str, system_prompt: str, user: str) -> bool:
    """``sentence`` says :data:`SPAN_WORDS` words in a row of ``system_prompt`` that ``user`` did not say, and
    does not decline."""
    said = words_in(sentence)
    if _DECLINES.search(" ".join(said)):
        return False
    return bool((_spans(said) & _prompt_spans(system_prompt)) - _spans(words_in(user)))
