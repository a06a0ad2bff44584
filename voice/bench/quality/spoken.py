"""``voice bench quality --spoken``: the question set through the whole loop, so STT errors count.

Every question (and the earlier turns of a follow-up) is spoken by a voice unlike the reply voice, the
voices taking turns item by item (:mod:`voice.bench.voices`: by default three espeak-ng voices and three flite
voices, standing in for the Piper speakers that are not available here). Recordings given with ``--speech DIR``
whose ``transcripts.tsv`` text is a question of the set are added as items of their own (``<id>@<file>``).

Each item is a new :class:`~voice.serve.session.Session` (a new conversation) driven without a socket: its audio
goes in as 32 ms frames of 16-bit PCM followed by 1.5 s of silence, and the session does everything the
server does (VAD, end of turn with the end-of-turn model, STT, skills and timers, LLM with the repetition
controls, the spoken-length cap, TTS). The audio is fed as fast as the loop keeps up: after each frame the
feeder waits until no model is busy, on a clock that advances with the audio, so the loop decides as a
live session on an infinitely fast machine would, and a whole set takes minutes. Speculation
(``[turn] speculate_after_ms``) is off here: it changes when a reply starts, never what it says (a
speculative reply is committed only when the turn really ended at its pause), and fed faster than real time
its discarded starts would only queue up. Latency is not measured here (``voice bench e2e`` does that).
What is judged is the reply the user would have heard: the text of every turn the session produced for the
question. Its length is the synthesized audio's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from voice.audio import float_to_pcm16, load_audio
from voice.bench.clips import BenchError, read_transcripts
from voice.bench.quality.question_set import Item, judge, judged_summary, outcome_shares, pct
from voice.bench.quality.result import SpokenRow, SpokenSummary, VoiceSummary
from voice.bench.stats import corpus_wer_normalized
from voice.bench.voices import DEFAULT_VOICES, Voice, parse_voices, synthesize
from voice.clock import FakeClock
from voice.config.config import Config
from voice.runtime.activity import ModelActivity
from voice.runtime.runtime import ModelRuntime
from voice.serve.session import Session
from voice.wire.protocol import EndTurn, Start, encode_client
from voice.wire.report import TurnReport

RATE_HZ = 16_000
FRAME_SAMPLES = 512  # 32 ms, the VAD's frame
TRAILING_SILENCE_S = 1.5  # longer than [turn] incomplete_silence_ms: every turn ends on its own


@dataclass(frozen=True)
class SpokenItem:
    item: Item
    voice: str
    """``<engine>:<voice>`` (:mod:`voice.bench.voices`) or ``recording:<file>``."""
    previous_audio: tuple[np.ndarray, ...]
    audio: np.ndarray
    """float32 mono 16 kHz."""


def spoken_items(
    items: Sequence[Item], speech_dir: Path | None = None, voices: Sequence[Voice] = parse_voices(DEFAULT_VOICES)
) -> list[SpokenItem]:
    """Every item spoken by one of ``voices`` (in turn, item by item), plus the recordings in ``speech_dir``
    that ask one of the items' questions (matched on normalized words)."""
    out: list[SpokenItem] = []
    with tempfile.TemporaryDirectory(prefix="voice-quality-") as tmp:
        folder = Path(tmp)
        for n, item in enumerate(items):
            voice = voices[n % len(voices)]
            previous = tuple(synthesize(voice, q, folder, f"{item.id}-p{k}") for k, q in enumerate(item.previous))
            out.append(SpokenItem(item, str(voice), previous, synthesize(voice, item.question, folder, item.id)))
    if speech_dir is not None:
        tsv = speech_dir / "transcripts.tsv"
        if not tsv.is_file():
            raise BenchError(f"{tsv} not found: --speech needs a folder with transcripts.tsv")
        by_words = {_words(i.question): i for i in items if not i.previous}
        for name, text in read_transcripts(tsv).items():
            match = by_words.get(_words(text))
            if match is not None:
                item = Item(**{**match.__dict__, "id": f"{match.id}@{name}"})
                out.append(SpokenItem(item, f"recording:{name}", (), load_audio(speech_dir / name, RATE_HZ)))
    return out


def _words(text: str) -> str:
    return " ".join("".join(c for c in w if c.isalnum()) for w in text.lower().split())


class _Drain:
    """The socket's side of the outbox: takes every frame (and says it was sent), keeps nothing."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while (frame := await self._session.outbox.next_frame()) is not None:
            if frame[1] is not None:
                frame[1]()

    async def close(self) -> None:
        self._session.outbox.close()
        await self._task


async def _say(
    session: Session, clock: FakeClock, audio: np.ndarray, activity: ModelActivity, reports: list[TurnReport]
) -> None:
    """Speak ``audio`` and then silence into the session, the clock advancing with the audio; force the end
    of the turn if the VAD still hears speech, then wait until the reply has been made and has played: the user
    listens to it before speaking again (else the next question would talk over it, and the session would keep in
    the history only the part heard, :mod:`voice.serve.playback`)."""
    before = len(reports)
    samples = np.concatenate([audio.astype(np.float32), np.zeros(int(TRAILING_SILENCE_S * RATE_HZ), np.float32)])
    for i in range(0, len(samples), FRAME_SAMPLES):
        frame = samples[i : i + FRAME_SAMPLES]
        clock.advance_ms(len(frame) * 1000 / RATE_HZ)
        err = await session.on_audio(float_to_pcm16(frame))
        if err is not None:
            raise BenchError(f"the session refused the audio: {err.message}")
        await asyncio.sleep(0)  # let a turn start, as between a live client's frames
        while not activity.idle():  # noqa: ASYNC110 (worker threads' state: no event to await)
            await asyncio.sleep(0.002)
    if session.in_speech:
        await session.on_text(encode_client(EndTurn()))
    await session.wait_turns()
    clock.advance_ms(sum(r.reply_audio_ms for r in reports[before:]))


async def ask_spoken(
    runtime: ModelRuntime, config: Config, spoken: SpokenItem
) -> tuple[list[TurnReport], list[TurnReport]]:
    """One item in a new session: the earlier turns, then the question. Returns the earlier turns' reports and
    the question's."""
    clock = FakeClock()
    activity = runtime.watch()
    reports: list[TurnReport] = []
    config = dataclasses.replace(config, turn=dataclasses.replace(config.turn, speculate_after_ms=0))
    session = Session(f"q-{spoken.item.id}", runtime, config, clock, on_report=reports.append)
    drain = _Drain(session)
    try:
        await session.on_text(encode_client(Start(RATE_HZ)))
        for audio in spoken.previous_audio:
            await _say(session, clock, audio, activity, reports)
        before = len(reports)
        await _say(session, clock, spoken.audio, activity, reports)
        return reports[:before], [r for r in reports[before:] if r.initiator == "user"]
    finally:
        await session.cancel_turns()
        await drain.close()


def run_spoken_item(runtime: ModelRuntime, config: Config, spoken: SpokenItem) -> SpokenRow:
    earlier, reports = asyncio.run(ask_spoken(runtime, config, spoken))
    answered = [r for r in reports if r.outcome == "ok"]
    transcript = " ".join(r.transcript for r in reports).strip()
    reply = " ".join(r.reply_text for r in answered).strip()
    verdict = judge(spoken.item, reply, datetime.now().astimezone())
    # Asked to say it again: not an answer, whatever the checks say; counted on its own.
    asked_again = any(r.asked_again for r in answered)
    earlier_user = [r for r in earlier if r.initiator == "user"]
    earlier_asked_again = tuple(r.asked_again for r in earlier_user)
    failed = verdict.failed
    if asked_again:
        failed = (*failed, "asked to say it again")
    elif any(earlier_asked_again) and not verdict.right:
        failed = (*failed, "an earlier turn was asked again")
    confidences = [r.stt_avg_logprob for r in reports if r.stt_avg_logprob is not None]
    word_probs = [r.stt_min_word_prob for r in reports if r.stt_min_word_prob is not None]
    no_speech = [r.stt_no_speech_prob for r in reports if r.stt_no_speech_prob is not None]
    sure = [r for r in answered if r.answer_logprob_mean is not None]
    return SpokenRow(
        id=spoken.item.id,
        category=spoken.item.category,
        voice=spoken.voice,
        question=spoken.item.question,
        transcript=transcript,
        wer_normalized=_round(corpus_wer_normalized([(spoken.item.question, transcript)])),
        turns=len(reports),
        outcomes=tuple(r.outcome for r in reports),
        reply=reply,
        tokens=sum(r.generated_tokens for r in answered),
        by=_answered_by(answered),
        reply_audio_s=round(sum(r.reply_audio_ms for r in answered) / 1000, 2),
        right=verdict.right and not asked_again,
        refusal_expected=spoken.item.refusal,
        refused=verdict.refused,
        repeats=verdict.repeats,
        hit_cap=any(r.generated_tokens >= config.llm.max_reply_tokens for r in answered),
        failed=failed,
        asked_again=asked_again,
        stt_avg_logprob=_round(min(confidences)) if confidences else None,
        earlier_heard=tuple(r.transcript for r in earlier_user),
        earlier_asked_again=earlier_asked_again if any(earlier_asked_again) else (),
        answer_logprob_mean=sure[-1].answer_logprob_mean if sure else None,
        answer_logprob_min=sure[-1].answer_logprob_min if sure else None,
        stt_min_word_prob=_round(min(word_probs)) if word_probs else None,
        stt_no_speech_prob=_round(max(no_speech)) if no_speech else None,
    )


def _answered_by(answered: Sequence[TurnReport]) -> str:
    """``asked again`` (the STT was unsure), ``skill`` (no prompt evaluated or reused: a skill or a timer
    answered) or ``llm``."""
    if any(r.asked_again for r in answered):
        return "asked again"
    if answered and all(r.prompt_tokens_evaluated + r.prompt_tokens_reused == 0 for r in answered):
        return "skill"
    return "llm"


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def summarize_spoken(rows: Sequence[SpokenRow]) -> SpokenSummary:
    judged = judged_summary(rows)
    return SpokenSummary(
        judged,
        hit_cap=sum(r.hit_cap for r in rows),
        median_reply_audio_s=statistics.median(r.reply_audio_s for r in rows) if rows else None,
        stt_wer_normalized=_round(corpus_wer_normalized((r.question, r.transcript) for r in rows)),
        split_turns=sum(r.turns > 1 for r in rows),
        asked_again_pct=judged.outcomes.asked_again_pct if judged.outcomes else None,
        right_or_asked_again_pct=pct(sum(r.right or r.asked_again for r in rows), len(rows)),
        by_voice=by_voice(rows),
    )


def by_voice(rows: Sequence[SpokenRow]) -> dict[str, VoiceSummary]:
    """Per voice (a synthetic voice, or all recordings together): items, the four outcomes' shares and the STT's
    normalized WER; then, for an engine with several voices, all of its voices together (``<engine> (all)``)."""
    groups: dict[str, list[SpokenRow]] = {}
    for r in rows:
        groups.setdefault("recordings" if r.voice.startswith("recording:") else r.voice, []).append(r)
    engines: dict[str, list[str]] = {}
    for voice in groups:
        if voice != "recordings":
            engines.setdefault(voice.partition(":")[0], []).append(voice)
    for engine, voices in engines.items():
        if len(voices) > 1:
            groups[f"{engine} (all)"] = [r for v in voices for r in groups[v]]
    return {voice: _voice_summary(g) for voice, g in groups.items()}


def _voice_summary(rows: Sequence[SpokenRow]) -> VoiceSummary:
    shares = outcome_shares(rows)
    return VoiceSummary(
        items=len(rows),
        right_pct=shares.right_pct,
        stt_wer_normalized=_round(corpus_wer_normalized((r.question, r.transcript) for r in rows)),
        asked_again_pct=shares.asked_again_pct,
        declined_pct=shares.declined_pct,
        wrong_pct=shares.wrong_pct,
    )
