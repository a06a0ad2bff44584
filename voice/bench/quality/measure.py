"""``voice bench quality``: is the reply right, beside how fast it came.

Text mode (the default): every question of the set goes straight to the LLM with the configured system
prompt (through the local skills and timers when ``[llm] skills`` is on, as in the server), after the item's
earlier turns (their replies kept in the history, as the server keeps them). Greedy decoding, so results
are deterministic for a model and config. Each reply is judged by :mod:`voice.bench.quality.question_set`
into one of four outcomes (right / honest decline / asked again / wrong), reported side by side
(:mod:`voice.bench.quality.report`).
Spoken length is estimated from the word count at 150 words per minute (Piper's joe-medium speaks ~2.5
words/s at length_scale 1.0).

Spoken mode (``--spoken``): the same set spoken through the whole loop, see :mod:`voice.bench.quality.spoken`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import statistics
import threading
import time
from collections.abc import AsyncGenerator, Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError
from voice.bench.llms import load_llm, names
from voice.bench.machine import BENCHMARKS_DIR
from voice.bench.machine_record import Machine
from voice.bench.markdown import text_table
from voice.bench.quality.question_set import Item, QuestionSetError, judge, judged_summary, load_items
from voice.bench.quality.report import markdown, spoken_table, text_summary_table
from voice.bench.quality.result import (
    ModelQuality,
    QualityResult,
    Row,
    SpokenResult,
    SpokenRow,
    SpokenSetup,
    SpokenSummary,
    Summary,
    TextResult,
    TextRow,
    TextSummary,
)
from voice.bench.scaffold import BenchRun
from voice.clock import FakeClock
from voice.config.config import Config, load_config
from voice.conversation.answer_confidence import Confidence
from voice.conversation.self_repair import as_meant
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.runtime.outputs import RuntimeLlmEvent
from voice.skills.answer import asks_again
from voice.skills.timers import TimerBook
from voice.skills.timers import handle as handle_timer
from voice.turn.budget import TurnTimer
from voice.turn.checked_stream import whole_reply

DEFAULT_SET = BENCHMARKS_DIR / "quality_questions.toml"
WORDS_PER_S = 2.5


@dataclass(frozen=True)
class Answer:
    """One turn's reply as the LLM (or a skill, or the timers) gave it."""

    reply: str
    tokens: int
    by: str
    """``llm`` or ``skill``."""
    ttft_ms: float
    reply_ms: float
    from_timers: bool = False
    """Answered from the timers before the LLM was asked."""
    confidence: Confidence | None = None
    """How sure the LLM was of the first sentence (None: a skill answered)."""


def ask(
    llm: Any, config: Config, history: list[ChatMessage], question: str, timers: TimerBook | None = None
) -> Answer:
    """One turn: the reply, its token count, TTFT and reply time (monotonic clock). With ``timers`` (skills
    on) a timer command is answered from it, as the server does, without the LLM. The model's reply goes through
    the server's own loop of checks (:func:`voice.turn.checked_stream.whole_reply`, typed: ``[llm] not_sure`` with
    ``not_sure_typed``, and the echo and claim checks), so the reply judged is the one the server would say and keep
    in the history."""
    if timers is not None:
        start_ns = time.monotonic_ns()
        local = handle_timer(as_meant(question, config.llm), timers, start_ns)
        if local is not None:
            ms = round((time.monotonic_ns() - start_ns) / 1e6, 1)
            return Answer(local, tokens=1, by="skill", ttft_ms=ms, reply_ms=ms, from_timers=True)
    messages = [ChatMessage("system", config.llm.system_prompt), *history, ChatMessage("user", question)]
    return asyncio.run(_checked_answer(llm, config, messages))


async def _checked_answer(llm: Any, config: Config, messages: list[ChatMessage]) -> Answer:
    """``messages`` answered by ``llm`` through the server's clause splitter and reply checks (the bench's
    :func:`ask`). The model runs on this thread: nothing else runs on this event loop. TTFT and the reply's time
    are read from :func:`time.monotonic_ns` at the start, the first piece of text and the end; the turn's timer,
    whose marks the bench does not keep, stands still."""
    cancel = threading.Event()
    start_ns = time.monotonic_ns()
    first_ns: int | None = None

    def events() -> Generator[RuntimeLlmEvent, None, None]:
        yield from llm.generate(messages, max_tokens=config.llm.max_reply_tokens, cancel=cancel)

    async def stream() -> AsyncGenerator[tuple[RuntimeLlmEvent, int], None]:
        nonlocal first_ns
        with contextlib.closing(events()) as model:  # closed: the model's own generator is closed too
            try:
                for ev in model:
                    if first_ns is None and isinstance(ev, TextDelta):
                        first_ns = time.monotonic_ns()
                    yield ev, first_ns or start_ns
            finally:
                cancel.set()  # the check replaced or cut the reply: the model stops

    timer = TurnTimer(FakeClock(), "bench", 0)
    reply, checked = await whole_reply(stream(), messages, config, timer, typed=True)  # text mode: typed
    end_ns = time.monotonic_ns()
    skill = checked.prompt is not None and checked.prompt.prompt_tokens == 0  # no prompt: a skill answered
    return Answer(
        reply,
        tokens=len(checked.tokens),
        by="skill" if skill else "llm",
        ttft_ms=round(((first_ns or end_ns) - start_ns) / 1e6, 1),
        reply_ms=round((end_ns - start_ns) / 1e6, 1),
        confidence=checked.confidence(),
    )


def asks_to_say_it_again(reply: str, ask_again_reply: str | None) -> bool:
    """``reply`` asks the user to say it again: it is ``ask_again_reply`` (the config's ``[stt] ask_again_reply``;
    None: not known), or a skill's for a sum or a conversion not all heard (:func:`voice.skills.answer.asks_again`)."""
    if not reply:
        return False
    return (ask_again_reply is not None and reply == ask_again_reply.strip()) or asks_again(reply)


def run_item(llm: Any, config: Config, item: Item) -> TextRow:
    history: list[ChatMessage] = []
    timers = TimerBook() if config.llm.skills else None
    for q in item.previous:
        prev = ask(llm, config, history, q, timers)
        history += [ChatMessage("user", q), ChatMessage("assistant", prev.reply)]
    res = ask(llm, config, history, item.question, timers)
    verdict = judge(item, res.reply, datetime.now().astimezone())
    # A reply that asks to say it again: not an answer, whatever the checks say (as in spoken mode).
    asked_again = asks_to_say_it_again(res.reply, config.stt.ask_again_reply)
    words = len(res.reply.split())
    return TextRow(
        id=item.id,
        category=item.category,
        question=item.question,
        reply=res.reply,
        tokens=res.tokens,
        by=res.by,
        ttft_ms=res.ttft_ms,
        reply_ms=res.reply_ms,
        right=verdict.right and not asked_again,
        refusal_expected=item.refusal,
        refused=verdict.refused,
        repeats=verdict.repeats,
        hit_cap=res.tokens >= config.llm.max_reply_tokens,
        words=words,
        spoken_s_est=round(words / WORDS_PER_S, 1),
        failed=(*verdict.failed, "asked to say it again") if asked_again else verdict.failed,
        from_timers=res.from_timers,
        asked_again=asked_again,
        answer_logprob_mean=res.confidence.mean_logprob if res.confidence else None,
        answer_logprob_min=res.confidence.min_logprob if res.confidence else None,
    )


def summarize(rows: Sequence[TextRow], *, outcomes: bool = False) -> TextSummary:
    """The text mode's summary of one LLM's rows; with ``outcomes``, the four outcomes' shares too (as ``voice
    bench quality`` reports them; ``voice bench remote``, which compares two backends' replies, does without)."""
    return TextSummary(
        judged_summary(rows, outcomes=outcomes),
        median_spoken_s_est=statistics.median(r.spoken_s_est for r in rows),
        median_ttft_ms=_median(r.ttft_ms for r in rows if r.by != "skill"),
        median_reply_ms=_median(r.reply_ms for r in rows if r.by != "skill"),
    )


def _median(values: Iterable[float]) -> float | None:
    v = list(values)
    return statistics.median(v) if v else None


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    config = load_config(args.config)
    set_path: Path = args.questions or DEFAULT_SET
    try:
        items = load_items(set_path)
    except QuestionSetError as e:
        raise BenchError(str(e)) from None
    if args.items:
        wanted = {x.strip() for x in args.items.split(",")}
        items = [i for i in items if i.id in wanted or i.category in wanted]
    llm_names = names(args.llm, config.llm.model)
    spoken_only = [f"--{k}" for k in ("stt", "speech", "voices") if getattr(args, k, None)]
    if spoken_only and not getattr(args, "spoken", False):
        raise BenchError(f"{', '.join(spoken_only)}: only for spoken mode (add --spoken)")
    as_transcribed = bool(getattr(args, "as_transcribed", False))
    if as_transcribed and getattr(args, "spoken", False):
        raise BenchError("--as-transcribed: only for text mode (spoken mode uses what the STT wrote)")
    if getattr(args, "spoken", False):
        if getattr(args, "stt", None):
            config = dataclasses.replace(config, stt=dataclasses.replace(config.stt, model=args.stt))
        return _write(bench, run_spoken(args, config, items, llm_names, set_path, bench.begin()))
    machine = bench.begin()
    models: list[ModelQuality[TextSummary, TextRow]] = []
    for name in llm_names:
        print(f"loading {name} …", flush=True)
        llm: Any = load_llm(config, name)
        if config.llm.skills:
            llm = SkillsLlm.of(llm, config.llm)
        rows = []
        for item in items:
            row = run_item(llm, config, as_stt_writes(item) if as_transcribed else item)
            print(f"  {'ok ' if row.right else 'BAD'} {item.id}: {row.reply[:90]!r}", flush=True)
            rows.append(row)
        models.append(ModelQuality(name, summarize(rows, outcomes=True), tuple(rows)))
        del llm
    print(text_table(*text_summary_table(models)))
    return _write(bench, result_of(config, set_path, machine, None, models, as_transcribed=as_transcribed))


def as_stt_writes(item: Item) -> Item:
    """``item`` with its questions (and earlier turns) written as Whisper's short window often writes them:
    first letter lower case, a final "?" as "." (the row keeps this spelling as its question)."""

    def spelt(q: str) -> str:
        q = q[:1].lower() + q[1:]
        return q[:-1] + "." if q.endswith("?") else q

    return dataclasses.replace(item, question=spelt(item.question), previous=tuple(map(spelt, item.previous)))


def result_of(
    config: Config,
    set_path: Path,
    machine: Machine,
    spoken: SpokenSetup | None,
    models: Sequence[ModelQuality[Summary, Row]],
    *,
    as_transcribed: bool = False,
) -> QualityResult[Summary, Row]:
    """A run's result (spoken mode when ``spoken`` is given); ``machine``: the record from the start of the run."""
    return QualityResult(
        mode="text" if spoken is None else "spoken",
        machine=machine,
        n_ctx=config.llm.n_ctx,
        n_batch=config.llm.n_batch,
        n_threads=config.llm.n_threads,
        question_set=str(set_path),
        spoken=spoken,
        system_prompt=config.llm.system_prompt,
        max_reply_tokens=config.llm.max_reply_tokens,
        skills=config.llm.skills,
        models=tuple(models),
        tidy_user_text=config.llm.tidy_user_text,
        as_transcribed=as_transcribed,
    )


def _write(bench: BenchRun, result: TextResult | SpokenResult) -> int:
    bench.end(result, markdown=lambda r, _png, _md: markdown(r) + "\n")
    return 0


def run_spoken(
    args: argparse.Namespace,
    config: Config,
    items: list[Item],
    llm_names: list[str],
    set_path: Path,
    machine: Machine,
) -> SpokenResult:
    from voice.bench.quality.spoken import run_spoken_item, spoken_items, summarize_spoken
    from voice.bench.voices import DEFAULT_VOICES, parse_voices
    from voice.loader import load_runtime

    voices = parse_voices(getattr(args, "voices", None) or DEFAULT_VOICES)
    print(f"speaking {len(items)} items with {', '.join(map(str, voices))} …", flush=True)
    spoken = spoken_items(items, getattr(args, "speech", None), voices)
    setup = SpokenSetup(
        voices=tuple(map(str, voices)),
        speech_dir=str(args.speech) if getattr(args, "speech", None) else None,
        stt=config.stt.model,
        tts=config.tts.model,
    )
    models: list[ModelQuality[SpokenSummary, SpokenRow]] = []
    for name in llm_names:
        print(f"loading {name} with STT {config.stt.model} and TTS {config.tts.model} …", flush=True)
        cfg = dataclasses.replace(config, llm=dataclasses.replace(config.llm, model=name))
        runtime = load_runtime(cfg)
        try:
            rows = []
            for sp in spoken:
                row = run_spoken_item(runtime, cfg, sp)
                print(f"  {'ok ' if row.right else 'BAD'} {row.id}: heard {row.transcript[:50]!r} → "
                      f"{row.reply[:70]!r}", flush=True)  # fmt: skip
                rows.append(row)
        finally:
            runtime.close()
        models.append(ModelQuality(name, summarize_spoken(rows), tuple(rows)))
    print(text_table(*spoken_table(models)))
    return result_of(config, set_path, machine, setup, models)
