"""Catching a reply that must not be spoken, before its first clause reaches the TTS.

A small model sometimes answers with the user's own words ("He wrote the Harry Potter books." after "He wrote the
Harry Potter books."), or claims what the system prompt says it cannot do ("I can answer questions, play music,
make calls, send messages, and see the weather in real-time.", "I'll turn on the lights for you."). Both are
confidently wrong, and once a clause is spoken it cannot be taken back. So the pipeline
(:meth:`voice.turn.pipeline._Turn.think`) passes each clause through a :class:`ReplyCheck` before queueing it:

- :func:`~voice.conversation.echo.echoes`: the first sentence says back the user's words and adds nothing: at
  least 80 % of its words appear in the user's words in the same order, and every word with meaning in it does
  (and it says most of them, 60 %: "The Sun is a star." picks one of "Is the Sun a star or a planet?"; any share
  when it is a question put back: "What do tadpoles turn into?" after a ramble that asked it). The whole
  reply becomes ``[stt] ask_again_reply``. Not when the user typed a statement
  (:func:`~voice.conversation.echo.tells`): saying it back is then a read-back of what they told ("The plumber is
  coming on Thursday."), and asking again would lose it. A heard statement may be a misheard question ("He wrote
  the Harry Potter books."), so it is still asked again.
- :func:`claims`: a sentence in which the assistant, in the first person and not negated ("I'll", "I can", "I've",
  "let me", "I'm turning"), does something the system prompt denies: a verb of the prompt's "You cannot …" list
  ("play music", "make calls", "see the weather"; :func:`denied`), or a verb of control (:data:`CONTROL_VERBS`)
  with a thing it names or a device (:data:`voice.skills.capabilities.DEVICE`); or that reports a device's state
  as fact ("The lights are now on."). In the first sentence, the whole reply becomes
  :data:`voice.skills.capabilities.WHAT_I_CAN_DO`; later, the reply ends before it.

A first clause that could still turn out to be an echo ("The capital of France is" after "What is the capital of
France?") or a claim ("I can answer questions,") is held until its sentence ends or the next word decides it, so
only those replies wait, and only until the next word or two decide (:meth:`ReplyCheck.peek`); the others go to
the TTS at once. The checks and :class:`ReplyCheck` are pure; :class:`CheckedReply` is the pipeline's adapter, which
queues the clauses, ends the model's stream and says what the history must hold: what was said.
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Self, TypeVar

from voice.config.config import Config
from voice.conversation.answer_confidence import (
    Confidence,
    NotSureRule,
    UnsureGate,
    first_sentence_confidence,
    not_sure_rule,
)
from voice.conversation.echo import echoes, may_echo, tells
from voice.runtime.model_api import ChatMessage, PromptInfo
from voice.skills.answer import asks_again
from voice.skills.capabilities import DEVICE, WHAT_I_CAN_DO
from voice.skills.word_classes import singular, words_in, words_of

_T = TypeVar("_T")
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_ENDS_SENTENCE = re.compile(r"[.!?…][\"'”’)\]*_]*$")
_NEGATION = re.compile(r"\b(?:not|no|never|cannot|unable|unfortunately|sorry|wish)\b|n't\b")
_FIRST_PERSON = re.compile(
    r"\b(?:i(?:'ll| will| can| could| would|'d|'ve| have| just| am| 'm|'m|\b)|let me|we(?:'ll| will| can|'ve| have))"
)
"""Where the assistant speaks of what it does ("I'll", "I can", "I've", "let me", "I turned")."""
_ACTING = re.compile(
    r"\b(?:i(?:'ll| will| can| could| would|'d|'ve| have| just)|let me|i(?:'m| am) (?:going to|now)\b)"
)
"""A first-person opening that may go on to a claim: hold the clause until the sentence ends."""
CONTROL_VERBS = words_of(
    "turn switch dim brighten set adjust lock unlock open close start stop pause play call text message email dial "
    "check get fetch look search order book navigate send read show"
)
"""Verbs of doing something to the world: a claim pairs one with a device or any thing the prompt denies. One
small set; the prompt's own verbs count with their own things (:func:`denied`: "make" only with "calls")."""
_ACK = words_of(
    "sure okay ok of course absolutely certainly alright all right done yes yeah great no problem will do"
)
"""Words of a reply's first sentence that only agree ("Sure!", "Of course.", "Will do!"): an action may follow."""
_MEDIA = words_of("music song songs track tracks playlist album podcast radio")
_REACH = words_of("call phone ring dial text message email")
"""Verbs of reaching someone: a claim with any person after them ("I'm calling your mother now.")."""
_SOMEONE = words_of("you your my his her him them the mom mum dad someone")
_DEVICE_WORD = re.compile(rf"{DEVICE}\b")
_THE_DEVICE = rf"(?:the |your |all (?:the )?)?(?:[a-z]+ ){{0,2}}{DEVICE} (?:is|are)"
_STATE_WORD = r"(?:on|off|open|closed|locked|unlocked|set to|playing|running)\b"
_SAYS_STATE = re.compile(
    rf"^(?:(?:done|ok(?:ay)?|sure|alright|all right)[,!.]* )+{_THE_DEVICE} (?:now )?{_STATE_WORD}"
    rf"|^{_THE_DEVICE} now {_STATE_WORD}|^(?:[a-z0-9]+ ){{0,3}}(?:timer|alarm)s? (?:is )?(?:set|started|cancel)"
)
"""A device's state reported as just done: "Done! The lights are now on.", "OK, the heating is off." (not "Traffic
lights are on all night."), and a timer's: "Timer set for 10 minutes." (only :mod:`voice.skills.timers` sets one;
"I can set timers" is true, so only a report of one set counts)."""
_WINDOW = 5
"""How many words after a verb may name what it acts on ("turn on the living room lights")."""


@dataclass(frozen=True)
class Denied:
    """What the system prompt says the assistant cannot do: each verb with the things it acts on ("play" →
    "music", "control" → "devices", "lights", "doors", "apps")."""

    things_of: Mapping[str, frozenset[str]]

    @property
    def verbs(self) -> frozenset[str]:
        return frozenset(self.things_of)

    @property
    def things(self) -> frozenset[str]:
        return frozenset().union(*self.things_of.values())


@functools.lru_cache(maxsize=8)
def denied(system_prompt: str) -> Denied:
    """The abilities the system prompt denies, from its "You cannot …" list: "You cannot control devices, lights,
    doors or apps, play music, make calls, send messages, or see the weather, news, prices or sensors" gives
    control → devices, lights, doors, apps; play → music; make → calls; send → messages; see → weather, news,
    prices, sensors. An item of one word names one more thing for the verb before it."""
    m = re.search(r"\byou (?:cannot|can't|can not|are (?:not|un)able to) ([^:.;]+)", system_prompt.lower())
    things_of: dict[str, set[str]] = {}
    verb = ""
    for item in re.split(r",\s*(?:or |and )?|\s+(?:or|and)\s+", m.group(1) if m else ""):
        words = [w for w in _WORD.findall(item) if w not in ("the", "a", "an", "any", "your")]
        if len(words) >= 2:
            verb = words[0]
        if words and verb:
            things_of.setdefault(verb, set()).update((words[-1], singular(words[-1])))
    return Denied({v: frozenset(t) for v, t in things_of.items()})


_IRREGULAR = {"made": "make", "sent": "send", "saw": "see", "seen": "see", "got": "get", "shown": "show"}


def _is_verb(word: str, verbs: frozenset[str]) -> bool:
    """``word`` is a form of one of ``verbs`` after "I": "turn", "turning", "played", "closed", "setting", "made"."""
    if word in verbs or _IRREGULAR.get(word) in verbs:
        return True
    for suffix in (
        "ed",
        "d",
        "ing",
    ):  # not "-s": no verb has it after "I", and "books", "plays" are nouns too
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            base = word[: -len(suffix)]
            if base in verbs or base + "e" in verbs or (base[-1] == base[-2] and base[:-1] in verbs):
                return True
    return False


def claims(sentence: str, abilities: Denied) -> bool:
    """``sentence`` has the assistant do, or say it can do, what ``abilities`` denies (see the module)."""
    text = " ".join(sentence.lower().replace("’", "'").split())
    if _SAYS_STATE.search(text):
        return True
    starts = [m.start() for m in _FIRST_PERSON.finditer(text)]
    lead = re.match(r"(?:(?:sure|ok(?:ay)?|alright|all right|done)[,!.]* )*(?=[a-z]+ing\b)", text)
    if lead is not None:
        starts.insert(0, lead.end())  # "Sure, turning on the lights now."
    for k, start in enumerate(starts):
        words = words_in(text[start : starts[k + 1] if k + 1 < len(starts) else len(text)])
        for i, word in enumerate(words):
            if _NEGATION.search(" ".join(words[: i + 1])):
                break  # "I can't play music": this part denies
            if _acts_on(word, words[i + 1 : i + 1 + _WINDOW], abilities):
                return True
    return False


def _acts_on(word: str, near: list[str], abilities: Denied) -> bool:
    """``word`` is a verb the assistant cannot carry out, with what it acts on among the words ``near`` after it."""
    if _is_verb(word, _REACH) and near[:1] and near[0] in _SOMEONE:
        return True  # "calling your mother"
    named = {w for w in near} | {singular(w) for w in near}
    if any(_is_verb(word, frozenset({v})) and named & things for v, things in abilities.things_of.items()):
        return True  # "play music", "make calls", "see the weather"
    if not _is_verb(word, CONTROL_VERBS):
        return False
    return _DEVICE_WORD.search(" ".join(near)) is not None or bool(named & (abilities.things | _MEDIA))


@dataclass(frozen=True)
class Verdict:
    """What to do with the clauses held so far: queue ``release`` for the TTS; or, with ``replace``, say that
    instead of the whole reply (nothing was queued yet); or, with ``stop``, end the reply before the held ones."""

    release: tuple[str, ...] = ()
    replace: str | None = None
    stop: bool = False


class ReplyCheck:
    """One reply's check, clause by clause (see the module): :meth:`push` each clause the splitter gives, in
    order, then :meth:`finish` at the end of the stream."""

    def __init__(
        self, user: str, abilities: Denied, *, ask_again: str, honest: str = WHAT_I_CAN_DO, read_back: bool = False
    ) -> None:
        self.user = user
        self.read_back = read_back
        """Saying the user's words back is a read-back, not an echo: they typed a statement
        (:func:`~voice.conversation.echo.tells`)."""
        self.abilities = abilities
        self.ask_again = ask_again
        self.honest = honest
        self._held: list[str] = []
        self._released = ""  # the part of the current sentence already queued
        self._queued_any = False
        self._held_complete = False  # the clauses held end a sentence
        self._clauses = 0

    @property
    def holding(self) -> bool:
        """Clauses are held, waiting for what comes next."""
        return bool(self._held)

    def push(self, clause: str) -> Verdict:
        """The verdict once ``clause`` has come: hold, release, replace or stop."""
        self._clauses += 1
        self._held.append(clause)
        # The splitter cuts only a reply's first sentence short: every later clause ends a sentence.
        return self._decide(complete=self._clauses > 1 or _ENDS_SENTENCE.search(clause) is not None)

    def peek(self, text: str) -> Verdict:
        """The reply's whole text so far (``text``, beyond the clauses pushed): held clauses go as soon as the words
        after them show the sentence is neither an echo nor a claim ("The capital of France is" + "Paris"), so a
        hold lasts a word or two, not a whole sentence."""
        if not self._held or self._queued_any:
            return Verdict()
        whole = text if text[-1:].isspace() else text.rsplit(None, 1)[0] if " " in text.strip() else ""
        said, lower = words_in(whole), whole.lower()
        if len(said) <= len(words_in(" ".join(self._held))) or all(w in _ACK for w in said):
            return Verdict()  # nothing new yet, or only agreement
        if (not self.read_back and may_echo(said, words_in(self.user))) or claims(whole, self.abilities):
            return Verdict()
        if _ACTING.search(lower) and not _NEGATION.search(lower):
            return Verdict()
        return self._release(complete=self._held_complete)

    def finish(self) -> Verdict:
        """The stream has ended: decide on the clauses still held."""
        return self._decide(complete=True, final=True) if self._held else Verdict()

    def _decide(self, *, complete: bool, final: bool = False) -> Verdict:
        sentence = " ".join([self._released, *self._held]).strip()
        if claims(sentence, self.abilities):
            self._held.clear()
            return Verdict(stop=True) if self._queued_any else Verdict(replace=self.honest)
        said = words_in(sentence)
        if not self._queued_any:  # the first sentence, all of it still held
            if complete and not self.read_back and echoes(sentence, self.user):
                self._held.clear()
                return Verdict(replace=self.ask_again)
            if not complete and not self.read_back and may_echo(said, words_in(self.user)):
                return self._hold(complete)  # may still be an echo
            if not final and said and all(w in _ACK for w in said):
                return self._hold(complete)  # "Sure!": what comes next says whether it is a claim
        if not complete and _ACTING.search(sentence.lower()) and not _NEGATION.search(sentence.lower()):
            return self._hold(complete)  # may still be a claim
        return self._release(complete=complete)

    def _hold(self, complete: bool) -> Verdict:
        self._held_complete = complete
        return Verdict()

    def _release(self, *, complete: bool) -> Verdict:
        out = tuple(self._held)
        self._held.clear()
        self._queued_any = True
        self._released = "" if complete else " ".join([self._released, *out]).strip()
        return Verdict(release=out)


class CheckedReply:
    """A reply's clauses on their way to the TTS through a :class:`ReplyCheck` (None: every clause goes through).
    ``put`` queues one clause, given when its last token came (ns). A reply no model wrote (a skill's, whose
    :class:`PromptInfo` counts no prompt token; a local one, with no user message) goes through as is."""

    def __init__(
        self,
        check: ReplyCheck | None,
        put: Callable[[str, int], Awaitable[None]],
        not_sure: NotSureRule | None = None,
        user_turns: str = "",
    ) -> None:
        self.check = check
        self._put = put
        user = check.user if check is not None else ""
        self.gate = UnsureGate(not_sure if check is not None else None, user, user_turns)
        """The first sentence's confidence (:mod:`voice.conversation.answer_confidence`): it sees every token, and
        holds the first sentence when ``[llm] not_sure`` is on."""
        self.prompt: PromptInfo | None = None
        """The model's prompt, once it reports it: none evaluated means a skill answered."""
        self.said: list[str] = []
        """The clauses queued, as written."""
        self.changed = False
        """The reply was replaced or cut: the history must hold :attr:`said`, not :attr:`tokens`."""

    @classmethod
    def of(
        cls,
        messages: Sequence[ChatMessage],
        config: Config,
        put: Callable[[str, int], Awaitable[None]],
        *,
        typed: bool = False,
        surely_typed: bool | None = None,
    ) -> Self:
        """The check of the reply to ``messages`` (the prompt; empty for a reply known without the LLM), with
        the abilities ``[llm] system_prompt`` denies and ``[stt] ask_again_reply``; ``typed``: the question was
        typed, not heard by this server's STT (``[llm] not_sure_typed``); ``surely_typed`` (default: ``typed``):
        no STT wrote it at all, so a statement said back is a read-back (:func:`~voice.conversation.echo.tells`; a
        heard statement may be a misheard question, and is asked again)."""
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        abilities = denied(config.llm.system_prompt)
        read_back = (typed if surely_typed is None else surely_typed) and tells(user)
        ask_again = config.stt.ask_again_reply
        check = ReplyCheck(user, abilities, ask_again=ask_again, read_back=read_back) if user else None
        user_turns = " ".join(m.content for m in messages if m.role == "user")
        return cls(check, put, not_sure_rule(config.llm, typed=typed), user_turns)

    async def until_changed(self, stream: AsyncIterator[_T]) -> AsyncIterator[_T]:
        """``stream``'s items until the reply is replaced or cut (the caller then closes ``stream``)."""
        async for item in stream:
            yield item
            if self.changed:
                return

    async def token(self, piece: str, ready_ns: int, logprob: float | None = None) -> None:
        """The model's next piece of text and its log-probability: held clauses may go now
        (:meth:`ReplyCheck.peek`)."""
        self.gate.token(piece, logprob)
        if self.check is not None and self.check.holding and not self.changed and not self._skill():
            await self._apply(self.check.peek("".join(self.tokens)), ready_ns)

    @property
    def tokens(self) -> list[str]:
        """The reply's text as it came, piece by piece (the gate keeps them, with their log-probabilities)."""
        return self.gate.pieces

    @property
    def asked_again(self) -> bool:
        """The reply asks the user to say it again: the check replaced it with ``[stt] ask_again_reply`` (it echoed
        the user's words), or it is a skill's (a sum or a conversion not all heard: :func:`asks_again`)."""
        if self.check is not None and self.said == [self.check.ask_again]:
            return True
        return self._skill() and asks_again(" ".join(self.said))

    def confidence(self) -> Confidence | None:
        """How sure the model was of the reply's first sentence (None: a skill's reply, or no log-probabilities)."""
        return None if self._skill() else first_sentence_confidence(self.gate.pieces, self.gate.logprobs)

    def _skill(self) -> bool:
        return self.prompt is not None and self.prompt.prompt_tokens == 0

    async def push(self, clause: str, ready_ns: int) -> bool:
        """Queue ``clause`` now, later, or never; False once the reply has ended here (stop the model)."""
        if self.changed:
            return False
        if self.check is None or self._skill():
            return await self._apply(Verdict(release=(clause,)), ready_ns)
        return await self._apply(self.check.push(clause), ready_ns)

    async def finish(self, rest: Sequence[str], ready_ns: int) -> None:
        """The model is done: ``rest``, the clauses the splitter still held, then what the checks still hold."""
        for clause in rest:
            await self.push(clause, ready_ns)
        if self.check is not None and not self.changed and not self._skill():
            await self._apply(self.check.finish(), ready_ns, final=True)

    async def _apply(self, verdict: Verdict, ready_ns: int, *, final: bool = False) -> bool:
        release: Sequence[str] = verdict.release
        if verdict.replace is None and not self._skill():
            release = self.gate.release(release, final=final or verdict.stop)
        for clause in (*release, *((verdict.replace,) if verdict.replace is not None else ())):
            self.said.append(clause)
            await self._put(clause, ready_ns)
        self.changed = verdict.replace is not None or verdict.stop or self.gate.replaced or self.gate.ended
        return not self.changed
