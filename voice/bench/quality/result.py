"""What ``voice bench quality`` measured, typed: a row per item (text or spoken mode), the summary per LLM and
the whole result, each with the JSON it is written as (``to_json``, the keys and their order as they were when
the results were dicts) and read back from (``from_json``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json
from voice.bench.quality.question_set import JudgedSummary


def _drop_none(d: dict[str, Any], *keys: str) -> None:
    """Leave out the keys whose value is None (results written before they existed read back the same)."""
    for key in keys:
        if d.get(key, 0) is None:
            del d[key]


@dataclass(frozen=True)
class TextRow:
    """One item of the text mode: the question straight to the LLM (or the skills), the reply judged."""

    id: str
    category: str
    question: str
    reply: str
    tokens: int
    """Tokens of the reply (1 when a skill or the timers answered)."""
    by: str
    """``llm`` or ``skill`` (a skill or the timers answered)."""
    ttft_ms: float
    """Question → first token of the reply (monotonic clock)."""
    reply_ms: float
    """Question → the whole reply."""
    right: bool
    refusal_expected: bool
    """The right answer is "I can't"."""
    refused: bool
    """The reply honestly declines: says the assistant cannot do it or does not know
    (:func:`~voice.bench.quality.declines.declines`; results judged before 2026-12-06 used a looser check, any
    "can't", until judged again with ``--rejudge``)."""
    repeats: bool
    """The reply loops (a run of three words three times or more)."""
    hit_cap: bool
    """The reply reached ``[llm] max_reply_tokens``."""
    words: int
    spoken_s_est: float
    """How long the reply would take to say, estimated from its words."""
    failed: tuple[str, ...]
    """The checks the reply failed."""
    from_timers: bool = False
    """Answered from the timers before the LLM was asked (as the server answers a timer command). Not a key
    of its own in the JSON: such a row lists ``by`` after the times, the others before."""
    asked_again: bool = False
    """The reply is ``[stt] ask_again_reply``: it asked to say it again (never judged right). In the JSON only
    when set."""
    answer_logprob_mean: float | None = None
    """How sure the LLM was of the reply's first sentence (:mod:`voice.conversation.answer_confidence`); None,
    and not in the JSON, for a skill's reply or results from before 2026-12-06's seventeenth session."""
    answer_logprob_min: float | None = None
    stt_min_word_prob: float | None = None
    """The probability of the least likely word the STT heard in the question (the lowest of its turns'), 3
    decimals; None, and not in the JSON, when not measured (results before 2026-12-06's twenty-first session)."""
    stt_no_speech_prob: float | None = None
    """Whisper's no-speech probability for the question (the highest of its turns'); None as above."""

    def to_json(self) -> dict[str, Any]:
        d = fields_json(self)
        del d["from_timers"]
        if not self.asked_again:
            del d["asked_again"]
        _drop_none(d, "answer_logprob_mean", "answer_logprob_min", "stt_min_word_prob", "stt_no_speech_prob")
        if not self.from_timers:
            return d
        by = d.pop("by")
        out: dict[str, Any] = {}
        for key, value in d.items():
            out[key] = value
            if key == "reply_ms":
                out["by"] = by
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextRow:
        keys = list(data)
        return cls(
            **{**data, "failed": tuple(data["failed"])}, from_timers=keys.index("by") > keys.index("ttft_ms")
        )


@dataclass(frozen=True)
class SpokenRow:
    """One item of the spoken mode: the question spoken through the whole loop, the reply judged."""

    id: str
    category: str
    voice: str
    """``<engine>:<voice>`` (:mod:`voice.bench.voices`) or ``recording:<file>``."""
    question: str
    transcript: str
    """What the STT heard (every turn the question made, joined)."""
    wer_normalized: float | None
    """The STT's word error rate on the question, after Whisper's English normalizer (3 decimals)."""
    turns: int
    """Turns the session heard in the question (more than one: it took a pause for an end)."""
    outcomes: tuple[str, ...]
    """Each of those turns' outcome."""
    reply: str
    """The text of every turn that answered, joined: what the user heard."""
    tokens: int
    by: str
    """``llm``, or ``skill`` when no answering turn evaluated or reused a prompt."""
    reply_audio_s: float
    """Length of the synthesized reply audio."""
    right: bool
    refusal_expected: bool
    refused: bool
    repeats: bool
    hit_cap: bool
    failed: tuple[str, ...]
    asked_again: bool = False
    """The STT was unsure and the reply asked to say it again ([stt] ask_again): never judged right."""
    stt_avg_logprob: float | None = None
    """The STT's confidence for the question (the lowest of its turns'), 3 decimals; None: not given."""
    earlier_heard: tuple[str, ...] = ()
    """What the session heard of a follow-up's earlier turns."""
    earlier_asked_again: tuple[bool, ...] = ()
    """For each of :attr:`earlier_heard`, whether the reply asked to say it again (the bench's user does not:
    the turn is then missing from the history the question is answered from)."""
    answer_logprob_mean: float | None = None
    """How sure the LLM was of the first sentence of the last turn it answered
    (:mod:`voice.conversation.answer_confidence`); None, and not in the JSON, when a skill answered."""
    answer_logprob_min: float | None = None
    stt_min_word_prob: float | None = None
    """The probability of the least likely word the STT heard in the question (the lowest of its turns'), 3
    decimals; None, and not in the JSON, when not measured (results before 2026-12-06's twenty-first session)."""
    stt_no_speech_prob: float | None = None
    """Whisper's no-speech probability for the question (the highest of its turns'); None as above."""

    def to_json(self) -> dict[str, Any]:
        """The row's JSON; the three keys after ``failed`` only when one is set, and ``earlier_asked_again`` only
        when an earlier turn was asked again (results before them stay as written)."""
        d = fields_json(self)
        if self.stt_avg_logprob is None and not self.asked_again and not self.earlier_heard:
            for key in ("asked_again", "stt_avg_logprob", "earlier_heard"):
                del d[key]
        if not any(self.earlier_asked_again):
            del d["earlier_asked_again"]
        _drop_none(d, "answer_logprob_mean", "answer_logprob_min", "stt_min_word_prob", "stt_no_speech_prob")
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpokenRow:
        """From a row's JSON (results before 2026-12-04's ask_again lack its last three keys)."""
        return cls(**{
            **data,
            "outcomes": tuple(data["outcomes"]),
            "failed": tuple(data["failed"]),
            "earlier_heard": tuple(data.get("earlier_heard", ())),
            "earlier_asked_again": tuple(data.get("earlier_asked_again", ())),
        })


@dataclass(frozen=True)
class TextSummary:
    """The text mode's summary of one LLM's rows."""

    judged: JudgedSummary
    median_spoken_s_est: float
    median_ttft_ms: float | None
    """Over the items the LLM answered (not a skill); None when it answered none."""
    median_reply_ms: float | None

    def to_json(self) -> dict[str, Any]:
        return {**self.judged.to_json(), **{k: v for k, v in fields_json(self).items() if k != "judged"}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextSummary:
        return cls(
            JudgedSummary.from_json(data),
            data["median_spoken_s_est"],
            data["median_ttft_ms"],
            data["median_reply_ms"],
        )


@dataclass(frozen=True)
class VoiceSummary:
    """The spoken mode's items of one voice (a synthetic voice, all the voices of one engine, or all recordings
    together)."""

    items: int
    right_pct: float | None
    stt_wer_normalized: float | None
    asked_again_pct: float | None = None
    """Share asked to say it again (None in results made before [stt] ask_again)."""
    declined_pct: float | None = None
    """Share that honestly declined (None in results made before the four outcomes were counted)."""
    wrong_pct: float | None = None
    """Share neither right, nor asked again, nor declined (None as ``declined_pct``)."""

    def to_json(self) -> dict[str, Any]:
        """The voice's JSON; the keys after ``stt_wer_normalized`` only when set (results before them stay as
        written)."""
        optional = ("asked_again_pct", "declined_pct", "wrong_pct")
        return {k: v for k, v in fields_json(self).items() if k not in optional or v is not None}


@dataclass(frozen=True)
class SpokenSummary:
    """The spoken mode's summary of one STT + LLM's rows."""

    judged: JudgedSummary
    hit_cap: int
    """Replies that reached the token cap."""
    median_reply_audio_s: float | None
    stt_wer_normalized: float | None
    """The STT's normalized WER over every question (3 decimals)."""
    split_turns: int
    """Questions the session heard as two or more turns."""
    by_voice: dict[str, VoiceSummary]
    asked_again_pct: float | None = None
    """Share of the items whose reply asked to say it again ([stt] ask_again; None in older results)."""
    right_or_asked_again_pct: float | None = None
    """Share right or asked to say it again: the items where the user was not given a wrong answer."""

    def to_json(self) -> dict[str, Any]:
        """The summary's JSON. With the four outcomes counted, ``asked_again_pct`` (the same share) comes with
        them, after ``right_pct``; before, after ``split_turns``."""
        return {
            **self.judged.to_json(),
            "hit_cap": self.hit_cap,
            "median_reply_audio_s": self.median_reply_audio_s,
            "stt_wer_normalized": self.stt_wer_normalized,
            "split_turns": self.split_turns,
            **({} if self.asked_again_pct is None else {
                "asked_again_pct": self.asked_again_pct,
                "right_or_asked_again_pct": self.right_or_asked_again_pct,
            }),
            "by_voice": {v: s.to_json() for v, s in self.by_voice.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpokenSummary:
        return cls(
            JudgedSummary.from_json(data),
            data["hit_cap"],
            data["median_reply_audio_s"],
            data["stt_wer_normalized"],
            data["split_turns"],
            {v: VoiceSummary(**s) for v, s in data["by_voice"].items()},
            data.get("asked_again_pct"),
            data.get("right_or_asked_again_pct"),
        )


Summary = TypeVar("Summary", TextSummary, SpokenSummary)
Row = TypeVar("Row", TextRow, SpokenRow)


@dataclass(frozen=True)
class ModelQuality(Generic[Summary, Row]):
    """One LLM (with its STT in spoken mode) over the question set."""

    llm: str
    summary: Summary
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        return {"llm": self.llm, "summary": self.summary.to_json(), "rows": [r.to_json() for r in self.rows]}


@dataclass(frozen=True)
class SpokenSetup:
    """How the spoken mode spoke and answered the questions."""

    voices: tuple[str, ...]
    """The voices that took turns, item by item (``<engine>:<voice>``)."""
    speech_dir: str | None
    """The folder of recordings given with ``--speech``, or None."""
    stt: str
    tts: str

    def to_json(self) -> dict[str, Any]:
        return fields_json(self)


@dataclass(frozen=True)
class QualityResult(Generic[Summary, Row]):
    """A ``voice bench quality`` run: its settings, then each LLM's summary and rows."""

    mode: str
    """``text`` or ``spoken``."""
    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    n_ctx: int
    n_batch: int
    n_threads: int
    question_set: str
    """The question file."""
    spoken: SpokenSetup | None
    """Spoken mode's setup; None in text mode."""
    system_prompt: str
    max_reply_tokens: int
    skills: bool
    """``[llm] skills``: skills and timers answer what they recognise."""
    models: tuple[ModelQuality[Summary, Row], ...]
    tidy_user_text: bool | None = None
    """``[llm] tidy_user_text`` (None: a result made before the setting existed, which was as if off)."""
    as_transcribed: bool = False
    """Text mode's ``--as-transcribed``: each question written as the STT often does (lower-case first
    letter, "." for "?")."""
    rejudged: str | None = None
    """Judged again later with the question set's checks of that time (``--rejudge``): when, from what, and
    which verdicts changed; None: judged as it ran."""

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.tidy_user_text is None else {"tidy_user_text": self.tidy_user_text}
        if self.as_transcribed:
            extra["as_transcribed"] = True
        if self.rejudged is not None:
            extra["rejudged"] = self.rejudged
        return {
            "mode": self.mode,
            "machine": self.machine.to_json(),
            "n_ctx": self.n_ctx,
            "n_batch": self.n_batch,
            "n_threads": self.n_threads,
            "question_set": self.question_set,
            **(self.spoken.to_json() if self.spoken is not None else {}),
            "system_prompt": self.system_prompt,
            "max_reply_tokens": self.max_reply_tokens,
            "skills": self.skills,
            **extra,
            "models": [m.to_json() for m in self.models],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TextResult | SpokenResult:
        """A result of either mode from its JSON (as this code writes it: with ``mode``)."""
        header = {k: data[k] for k in ("mode", "n_ctx", "n_batch", "n_threads", "question_set")}
        header["machine"] = Machine.from_json(data["machine"])
        tail = {k: data[k] for k in ("system_prompt", "max_reply_tokens", "skills")}
        tail |= {"tidy_user_text": data.get("tidy_user_text"), "as_transcribed": data.get("as_transcribed", False)}
        tail["rejudged"] = data.get("rejudged")
        if data["mode"] == "spoken":
            setup = SpokenSetup(tuple(data["voices"]), data["speech_dir"], data["stt"], data["tts"])
            spoken = tuple(
                ModelQuality(
                    m["llm"],
                    SpokenSummary.from_json(m["summary"]),
                    tuple(map(SpokenRow.from_json, m["rows"])),
                )
                for m in data["models"]
            )
            return QualityResult(**header, spoken=setup, **tail, models=spoken)
        text = tuple(
            ModelQuality(
                m["llm"], TextSummary.from_json(m["summary"]), tuple(map(TextRow.from_json, m["rows"]))
            )
            for m in data["models"]
        )
        return QualityResult(**header, spoken=None, **tail, models=text)

    def with_machine(self, machine: Machine) -> QualityResult[Summary, Row]:
        return dataclasses.replace(self, machine=machine)


TextResult = QualityResult[TextSummary, TextRow]
SpokenResult = QualityResult[SpokenSummary, SpokenRow]
