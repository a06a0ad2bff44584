"""How sure the model was of its answer, from its own token log-probabilities, and saying "I'm not sure" instead.

A 135M model states wrong facts in the same voice as right ones ("The largest organ of the human body is the
liver."), but not with the same probabilities: where it knows, the tokens that carry the answer come with
log-probabilities near 0 ("Paris": -0.04); where it guesses, they do not ("liver": -1.17). So the first sentence
of an LLM reply, the one that holds the answer, is scored by its tokens' log-probabilities (natural log, from the
raw logits: :attr:`voice.runtime.model_api.TextDelta.logprob`):

- the reply's first token is left out: it chooses how to begin ("The", "Sure"), not what is true;
- :attr:`Confidence.mean_logprob` is the mean of the others, :attr:`Confidence.min_logprob` the lowest.

With ``[llm] not_sure`` on, a first sentence whose score is under ``[llm] not_sure_below_logprob`` is not spoken:
the reply becomes ``[llm] not_sure_reply``. The threshold was fitted on the question sets that existed before
it (``voice bench quality --fit-not-sure``, :mod:`voice.bench.quality.not_sure`), which also reports how many
right answers each threshold costs. Replies no model wrote (skills, timers) and backends that give no
log-probabilities are never touched. A first sentence that recites the system prompt instead of answering
(:mod:`voice.conversation.recital`), offers condolences for a loss the user never spoke of
(:mod:`voice.conversation.condolence`), or states a sum that does not add up
(:mod:`voice.conversation.arithmetic_check`), is replaced the same way, whatever its score.

:class:`UnsureGate` is the streaming half: while the gate is on it holds the first sentence's clauses (so
``[tts] max_first_chunk_words`` does not speak half an answer before the rest is scored) and decides when the
sentence ends. That is its cost: on an LLM reply whose first sentence is longer than the first chunk, the first
audio waits for the sentence's last token (a backend without log-probabilities is not held). It is pure;
:class:`voice.conversation.reply_check.CheckedReply` drives it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from voice.config.config import LlmConfig
from voice.conversation import arithmetic_check, condolence, own_doubt
from voice.conversation.recital import recites

_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]*_]*(?=\s|$)")
"""A sentence end: a terminator (and closing quotes), followed by white space or the end of the text. "3.5" and
"U.S.A" do not end a sentence here because a character other than white space follows."""


@dataclass(frozen=True)
class Confidence:
    """The scored tokens of an answer's first sentence."""

    tokens: int
    """How many tokens were scored (the first sentence's, less its first)."""
    mean_logprob: float
    min_logprob: float


@dataclass(frozen=True)
class NotSureRule:
    """``[llm] not_sure*``: the threshold the first sentence's mean log-probability must reach."""

    below_logprob: float
    reply: str
    system_prompt: str = ""
    """The model's instructions: a first sentence that recites them is no answer either (:meth:`recites`)."""

    def unsure(self, confidence: Confidence | None) -> bool:
        return confidence is not None and confidence.mean_logprob < self.below_logprob

    def recites(self, first_sentence: str, user: str) -> bool:
        """``first_sentence`` recites :attr:`system_prompt` rather than answer ``user``
        (:func:`voice.conversation.recital.recites`)."""
        return bool(self.system_prompt) and recites(first_sentence, self.system_prompt, user)

    def no_answer(self, first_sentence: str, user: str, user_turns: str = "") -> bool:
        """``first_sentence`` is no answer to speak, however sure the model was: it recites the instructions
        (:meth:`recites`), offers condolences for a loss never spoken of in ``user_turns``, all the user said in
        the conversation (default: ``user``; :func:`voice.conversation.condolence.misplaced`), or states a sum
        the calculator works out differently (:func:`voice.conversation.arithmetic_check.miscounts`)."""
        return (
            self.recites(first_sentence, user)
            or condolence.misplaced(first_sentence, user_turns or user)
            or arithmetic_check.miscounts(first_sentence)
        )


class FirstSentence(Enum):
    """What becomes of an LLM reply once its first sentence is known."""

    KEEP = "keep"
    REPLACE = "replace"
    """Say :attr:`NotSureRule.reply` instead of the whole reply."""
    END = "end"
    """Say the first sentence and end the reply there: it declined (:func:`voice.conversation.own_doubt.declines`)."""


def first_sentence_verdict(
    rule: NotSureRule, first: str, confidence: Confidence | None, user: str, user_turns: str = ""
) -> FirstSentence:
    """The rule's verdict on a reply whose first sentence is ``first``, scored ``confidence``: replaced when the
    model was unsure of it or it is no answer (:meth:`NotSureRule.no_answer`), ended after it when it declines,
    else kept. The server's :class:`UnsureGate` and the quality bench's text mode both ask this."""
    if rule.unsure(confidence) or rule.no_answer(first, user, user_turns):
        return FirstSentence.REPLACE
    return FirstSentence.END if own_doubt.declines(first) else FirstSentence.KEEP


def not_sure_rule(llm: LlmConfig, *, typed: bool = False) -> NotSureRule | None:
    """The rule ``[llm] not_sure*`` sets for a spoken question (``not_sure_below_logprob``), or a ``typed`` one
    (``not_sure_typed_below_logprob``; None: off, and typed text only with ``[llm] not_sure_typed``)."""
    on = llm.not_sure and (llm.not_sure_typed or not typed)
    below = llm.not_sure_typed_below_logprob if typed else llm.not_sure_below_logprob
    return NotSureRule(below, llm.not_sure_reply, llm.system_prompt) if on else None


def first_sentence_tokens(pieces: Sequence[str], *, final: bool) -> int | None:
    """How many of ``pieces`` make up the first sentence: up to the piece in which a sentence end is confirmed
    (a terminator followed by white space, or the end of the text when ``final``); None when it has not ended.
    The piece that confirms the end with its leading space does not count."""
    text = ""
    for i, piece in enumerate(pieces):
        before = len(text)
        text += piece
        for m in _SENTENCE_END.finditer(text):
            if m.end() < len(text) or final:
                # The terminator came in piece i, or earlier (then piece i only brought the space after it).
                return i + 1 if m.start() >= before else i
    return len(pieces) if final and text.strip() else None


def confidence_of(logprobs: Sequence[float | None]) -> Confidence | None:
    """The score of a first sentence's tokens' log-probabilities (its first token left out); None when there is
    nothing to score or the backend gave no log-probability."""
    scored = list(logprobs[1:])
    if not scored or any(lp is None for lp in scored):
        return None
    values = [float(lp) for lp in scored if lp is not None]
    return Confidence(
        tokens=len(values), mean_logprob=round(sum(values) / len(values), 3), min_logprob=round(min(values), 3)
    )


def first_sentence_confidence(
    pieces: Sequence[str], logprobs: Sequence[float | None], *, final: bool = True
) -> Confidence | None:
    """The confidence of the first sentence of a reply given as ``pieces`` (one per token) with their
    ``logprobs``; None while it has not ended (``final`` False) or when it cannot be scored."""
    n = first_sentence_tokens(pieces, final=final)
    return None if n is None else confidence_of(logprobs[:n])


class UnsureGate:
    """Holds an LLM reply's first sentence until its confidence is known, then lets it through or replaces it.

    :meth:`token` records each token; :meth:`release` takes the clauses a caller would queue and returns what to
    queue now, or the :attr:`NotSureRule.reply` that replaces the reply (:attr:`replaced`). After the first
    sentence everything goes through, unless that sentence said the model does not know or cannot
    (:func:`voice.conversation.own_doubt.declines`): then the reply ends with it (:attr:`ended`). With no rule
    (``[llm] not_sure`` off), or a backend that gives no log-probabilities, nothing is held. ``user``: the
    question, which a reply must not merely repeat or misread, and ``user_turns`` all the user said in the
    conversation (:meth:`NotSureRule.no_answer`).
    """

    def __init__(self, rule: NotSureRule | None, user: str = "", user_turns: str = "") -> None:
        self.rule = rule
        self.user = user
        self.user_turns = user_turns or user
        self.pieces: list[str] = []
        self.logprobs: list[float | None] = []
        self._held: list[str] = []
        self._decided = rule is None
        self.replaced = False
        self.ended = False
        """The first sentence declined: the reply ends with it (nothing after it is queued)."""

    def token(self, piece: str, logprob: float | None) -> None:
        self.pieces.append(piece)
        self.logprobs.append(logprob)

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def release(self, clauses: Sequence[str], *, final: bool = False) -> tuple[str, ...]:
        """What of ``clauses`` (and of the clauses held before) may be queued now. ``final``: the stream has
        ended. Once :attr:`replaced`, the result is the reply that replaces the answer, once, then nothing."""
        if self._decided:
            return tuple(clauses)
        self._held.extend(clauses)
        if any(lp is None for lp in self.logprobs):  # the backend gives none: nothing to wait for
            self._decided = True
            held, self._held = tuple(self._held), []
            return held
        ended = first_sentence_tokens(self.pieces, final=final)
        if ended is None and not final:
            return ()
        self._decided = True
        held, self._held = tuple(self._held), []
        assert self.rule is not None
        first = self.pieces[: ended or len(self.pieces)]
        verdict = first_sentence_verdict(
            self.rule, "".join(first), confidence_of(self.logprobs[: len(first)]), self.user, self.user_turns
        )
        if verdict is FirstSentence.REPLACE:
            self.replaced = True
            return (self.rule.reply,)
        if verdict is FirstSentence.END:
            self.ended = True
            return _first_sentence_of(held, len("".join(first).split()))
        return held


def _first_sentence_of(clauses: Sequence[str], words: int) -> tuple[str, ...]:
    """The clauses that make up the first ``words`` words (the stream may have ended with more held)."""
    out: list[str] = []
    for clause in clauses:
        if out and sum(len(c.split()) for c in out) + len(clause.split()) > words:
            break
        out.append(clause)
    return tuple(out)
