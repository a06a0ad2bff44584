"""``voice bench pauses``: how often a pause inside a sentence ends the turn, and how long a finished turn waits.

The endpointing that decides a turn is over runs offline here, exactly as in the server (Silero VAD frame by
frame, then :class:`~voice.turn.endpoint.Endpointer` with the config's ``[vad]`` and ``[turn]`` settings), on two
kinds of audio made from each clip:

* **paused**: the clip with a pause made mid-sentence — at the quietest 30 ms between 40 % and 70 % of its
  voiced span (usually a gap between words), for each pause length. That point often lies in a gap of the
  speaker's own (a stop's closure, 15–65 ms; a reader's breath pause, 220 ms in the LJ Speech clip, 845 ms in
  jfk.wav), so the silence spliced in is the pause length *less* that gap, filled with the clip's own background
  (its quietest 10 ms, repeated): the silence the endpointer hears is the pause length. A clip whose own gap is
  longer than a pause length is not tested at that length (the table says on how many clips each length was).
  An endpoint between the pause's start and the speech's return is a **false endpoint**: the assistant would
  answer half a sentence.
* **whole**: the clip as it is. **End-of-turn delay** = the endpoint's time − the clip's energy speech end:
  the VAD's lag plus the silence waited (what a finished turn pays before any reply work can be let out).

Strategies compared: the silence window alone (``[vad] silence_ms``, and the same at other values for
context) and the end-of-turn model (Smart Turn v3.2: ``[turn] complete_silence_ms`` when it scores the turn
complete, ``incomplete_silence_ms`` when not), with the configured complete window and with ``[vad]
silence_ms`` as the complete window. The model is asked at the first pause, as in the server: after
``[turn] speculate_after_ms`` of silence (or the complete window, if shorter). The configured silence window
and every end-of-turn-model strategy also run with ``[turn] end_on_energy`` flipped (the window counted from
the energy drop instead of the VAD's lagging silence). Offline and deterministic: no server, no timing.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from voice.bench import stats
from voice.bench.clips import Clip, default_speech_dir, load_clips
from voice.bench.machine import machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.markdown import md_table, text_table
from voice.bench.pauses.result import PausesResult, StrategyRow, cut_pct
from voice.bench.pauses.strategy import Strategy
from voice.bench.scaffold import BenchRun
from voice.config.config import Config, load_config
from voice.turn.endpoint import Endpointer, SpeechEnded, SpeechPaused
from voice.turn.speech_end import envelope_db
from voice.turn.text_evidence import Verdict, verdict
from voice.turn.words_end import words_p

RATE_HZ = 16_000
FRAME = 512
GAP_DB = 6.0
"""A window within this of the clip's floor is part of a gap of the speaker's own (:func:`natural_gap`)."""


def splice_point(clip: Clip) -> int:
    """The quietest 30 ms between 40 % and 70 % of the clip's voiced span (sample index of its middle)."""
    a, b = clip.analysis.first_voiced_sample, clip.analysis.last_voiced_sample
    lo, hi = a + int(0.4 * (b - a)), a + int(0.7 * (b - a))
    win = int(0.03 * RATE_HZ)
    if hi - lo < win:
        return (a + b) // 2
    energy = np.convolve(clip.audio[lo:hi].astype(np.float64) ** 2, np.ones(win), mode="valid")
    return lo + int(np.argmin(energy)) + win // 2


def background(audio: np.ndarray, n: int) -> np.ndarray:
    """``n`` samples of the clip's quietest 10 ms, repeated (its own room tone, not digital silence)."""
    win = int(0.01 * RATE_HZ)
    frames = len(audio) // win
    rms = np.sqrt(np.mean(audio[: frames * win].reshape(frames, win).astype(np.float64) ** 2, axis=1))
    quiet = audio[int(np.argmin(rms)) * win :][:win]
    return np.resize(quiet, n).astype(np.float32)


def natural_gap(clip: Clip, at: int) -> tuple[int, int]:
    """(start, end) in samples of the speaker's own silence around ``at``: the 10 ms windows (5 ms apart) whose
    speech-band level is within ``GAP_DB`` of the clip's floor (its 10th percentile); ``(at, at)`` when ``at``
    is not in one."""
    centres_s, level = envelope_db(clip.audio, RATE_HZ)
    if len(level) == 0:
        return at, at
    quiet = level < float(np.percentile(level, 10)) + GAP_DB
    k = int(np.argmin(np.abs(centres_s * RATE_HZ - at)))
    if not quiet[k]:
        return at, at
    a, b = k, k
    while a > 0 and quiet[a - 1]:
        a -= 1
    while b + 1 < len(quiet) and quiet[b + 1]:
        b += 1
    hop = round(RATE_HZ * 0.005)
    return min(at, int(centres_s[a] * RATE_HZ) - hop // 2), max(at, int(centres_s[b] * RATE_HZ) + hop // 2)


def with_pause(clip: Clip, pause_ms: int) -> tuple[np.ndarray, int, int] | None:
    """The clip with a pause of ``pause_ms`` mid-sentence, counting the speaker's own gap there; returns
    (audio, pause start, speech return) in samples, or None when that gap alone is longer than ``pause_ms``."""
    at = splice_point(clip)
    start, end = natural_gap(clip, at)
    n = int(RATE_HZ * pause_ms / 1000) - (end - start)
    if n < 0:
        return None
    audio = np.concatenate([clip.audio[:at], background(clip.audio, n), clip.audio[at:]])
    return audio, start, end + n


def endpoints(audio: np.ndarray, strategy: Strategy, vad: Any) -> list[int]:
    """Sample positions (end of the frame) at which the endpointer ended a turn."""
    return [at for at, _ in ended(audio, strategy, vad)]


def ended(audio: np.ndarray, strategy: Strategy, vad: Any) -> list[tuple[int, SpeechEnded]]:
    """Each end of a turn: the sample position (end of the frame) and the event."""
    stream = vad.stream()
    ep = Endpointer(strategy.config.vad, turn=strategy.config.turn, turn_score=strategy.scorer)
    out: list[tuple[int, SpeechEnded]] = []
    words: list[tuple[int, Verdict, float | None, int]] = []  # (due at sample, verdict, words_p, pause)
    delay = int(strategy.text_delay_ms * RATE_HZ / 1000)
    for i in range(0, len(audio) - FRAME + 1, FRAME):
        frame = audio[i : i + FRAME]
        events = ep.feed(frame, stream.probability(frame))
        if ep.score_pending:  # as the session does, right after the pause (and at each re-score point)
            events += ep.score_pause()
        for w in [w for w in words if w[0] <= i + FRAME]:
            words.remove(w)
            events += ep.hear_text(w[1], w[3], w[2])
        for ev in events:
            if isinstance(ev, SpeechPaused) and strategy.transcribe is not None:
                text = strategy.transcribe(ev.audio)
                said = verdict(text)
                words.append((i + FRAME + delay, said, words_p(strategy.words_end, text, said), ev.pause_seq))
            if isinstance(ev, SpeechEnded):
                out.append((i + FRAME, ev))
                stream.reset()
                words.clear()
    return out


def waited_long(ev: SpeechEnded, config: Config) -> bool:
    """The turn waited the end-of-turn model's long window (``incomplete_silence_ms``) of silence: its last score
    called it unfinished, or the words kept it open. (Before 2026-12-07 this counted the score alone, so a turn
    the words held open was not counted, nor a turn the words ended sooner left out.)"""
    return bool(config.turn.end_of_turn_model) and ev.trailing_silence_ms >= config.turn.incomplete_silence_ms


def evaluate(
    clips: list[Clip], strategies: list[Strategy], pauses_ms: list[int], vad: Any, say: Callable[[str], None]
) -> list[StrategyRow]:
    rows = []
    tail = np.zeros(int(1.5 * RATE_HZ), np.float32)  # the turn must be able to end after the clip
    for s in strategies:
        false: dict[str, list[bool]] = {str(p): [] for p in pauses_ms}  # one per clip tested at that length
        delays: list[float] = []
        natural = 0
        long_waits = 0
        for clip in clips:
            whole = ended(np.concatenate([clip.audio, tail]), s, vad)
            end = clip.analysis.last_voiced_sample
            after = [(e, ev) for e, ev in whole if e >= end]
            if after:
                delays.append((after[0][0] - end) * 1000 / RATE_HZ)
                long_waits += waited_long(after[0][1], s.config)
            natural += sum(1 for e, _ in whole if e < end)
            for p in pauses_ms:
                paused = with_pause(clip, p)
                if paused is None:  # the clip's own gap there is longer than this pause
                    continue
                audio, start, back = paused
                eps = endpoints(np.concatenate([audio, tail]), s, vad)
                false[str(p)].append(any(start <= e < back + FRAME for e in eps))
        d = stats.describe(delays)
        counts = {p: sum(v) for p, v in false.items()}
        tested = {p: len(v) for p, v in false.items()}
        row = StrategyRow(
            strategy=s.name,
            false_endpoints=counts,
            tested=tested,
            clips=len(clips),
            end_of_turn_delay_p50_ms=d.p50,
            end_of_turn_delay_p95_ms=d.p95,
            turns_ended_inside_whole_clips=natural,
            long_waits=long_waits,
            finished_turns=len(delays),
        )
        say(
            f"{s.name:28} false endpoints "
            + " ".join(f"{p}ms:{n}/{tested[p]}" for p, n in counts.items())
            + f"  end-of-turn delay p50 {stats.fmt_ms(d.p50)} ms p95 {stats.fmt_ms(d.p95)} ms"
            + f"  long waits {long_waits}/{len(delays)}"
        )
        rows.append(row)
    return rows


def strategies(
    base: Config, silences_ms: list[int], smart_complete_ms: list[int], thresholds: list[float] | None = None
) -> list[Strategy]:
    out = []
    for ms in silences_ms:
        cfg = dataclasses.replace(
            base,
            vad=dataclasses.replace(base.vad, silence_ms=ms),
            turn=dataclasses.replace(base.turn, end_of_turn_model=""),
        )
        label = f"silence {ms} ms" + (" (config)" if ms == base.vad.silence_ms else "")
        out.append(Strategy(label, cfg, None))
    if smart_complete_ms:
        from voice.backends.turn_smart import SmartTurn
        from voice.models import DEFAULT_MODELS_ROOT, Catalogue, locate

        model = SmartTurn(locate(DEFAULT_MODELS_ROOT, Catalogue.load().get("smart-turn-v3.2")))
        for complete_ms in smart_complete_ms:
            for threshold in thresholds or [base.turn.complete_threshold]:
                t = dataclasses.replace(
                    base.turn,
                    end_of_turn_model="smart-turn-v3.2",
                    complete_silence_ms=complete_ms,
                    incomplete_silence_ms=max(complete_ms, base.turn.incomplete_silence_ms),
                    complete_threshold=threshold,
                )
                label = f"smart-turn ({t.complete_silence_ms}/{t.incomplete_silence_ms} ms)"
                if threshold != base.turn.complete_threshold:
                    label += f", complete at p >= {threshold:g}"
                out.append(Strategy(label, dataclasses.replace(base, turn=t), model.score))
    threshold = base.turn.complete_threshold
    same = [
        s for s in out
        if s.config.vad.silence_ms == base.vad.silence_ms and s.config.turn.complete_threshold == threshold
    ]  # fmt: skip
    return [*out, *[energy_variant(s) for s in same]]


def energy_variant(strategy: Strategy) -> Strategy:
    """``strategy`` with ``[turn] end_on_energy`` flipped: the window counted from the energy drop, or not."""
    on = not strategy.config.turn.end_on_energy
    turn = dataclasses.replace(strategy.config.turn, end_on_energy=on)
    label = strategy.name.replace(" (config)", "") + (" + end on energy" if on else " (VAD end)")
    return Strategy(label, dataclasses.replace(strategy.config, turn=turn), strategy.scorer)


def measure(args: argparse.Namespace, info: Machine) -> PausesResult:
    """``info``: the machine record from the start of the run (:meth:`BenchRun.begin`)."""
    from voice.backends.vad_silero import SileroVad

    base = load_config(args.config)
    speech_dir = args.speech or default_speech_dir()
    clips, warnings = load_clips(speech_dir, args.clips.split(",") if args.clips else None, rate_hz=RATE_HZ)
    for w in warnings:
        print(f"warning: {w}")
    pauses = [int(p) for p in args.pauses.split(",")]
    silences = sorted({base.vad.silence_ms, *(int(s) for s in args.silences.split(",") if s)})
    smart = [] if args.no_smart_turn else sorted({base.turn.complete_silence_ms, base.vad.silence_ms})
    thresholds = sorted({base.turn.complete_threshold, *(float(t) for t in args.thresholds.split(",") if t)})
    if args.variants:
        from voice.bench.pauses.variants import load_variants, variant_strategies

        chosen = variant_strategies(load_variants(args.variants, args.config), args.text_delay_ms)
    else:
        chosen = strategies(base, silences, smart, thresholds)
    rows = evaluate(clips, chosen, pauses, SileroVad(), print)
    return PausesResult(
        machine=info,
        speech_dir=str(speech_dir),
        clips=tuple(c.name for c in clips),
        pauses_ms=tuple(pauses),
        vad=dataclasses.asdict(base.vad),
        turn=dataclasses.asdict(base.turn),
        strategies=tuple(rows),
        long_waits_rule="window",
    )


def markdown(result: PausesResult, png: Path | None, md_path: Path) -> str:
    pauses = [str(p) for p in result.pauses_ms]
    counted = all(
        r.long_waits is not None for r in result.strategies
    )  # not in results made before 2026-12-06
    rows = [
        [
            r.strategy,
            *[f"{r.false_endpoints[p]}/{r.tested_at(p)}" for p in pauses],
            r.end_of_turn_delay_p50_ms,
            r.end_of_turn_delay_p95_ms,
            r.turns_ended_inside_whole_clips,
        ]
        + ([f"{r.long_waits}/{r.finished_turns}"] if counted else [])
        for r in result.strategies
    ]
    return "\n".join(
        [
            f"# False endpoints on mid-sentence pauses, and end-of-turn delay ({result.machine.date})",
            "",
            f"Clips: `{result.speech_dir}` ({len(result.clips)}). A pause of each length is made "
            "mid-sentence (at the quietest 30 ms between 40 % and 70 % of the speech: the speaker's own gap "
            "there, plus the clip's own background spliced in to make up the length; a clip whose own gap is "
            "longer is not tested at that length: k/n = false endpoints / clips tested); a turn ending inside "
            "it is a false endpoint. End-of-turn delay: endpoint − the clip's "
            "energy speech end, on the whole clip (VAD lag + silence waited). Offline Silero VAD + the server's "
            "endpointer; deterministic.",
            "",
            md_table(
                [
                    "strategy",
                    *[f"false endpoints, {p} ms pause" for p in pauses],
                    "end-of-turn delay p50 ms",
                    "p95 ms",
                    "turns ended inside the whole clips",
                ]
                + (["finished turns that waited the long window"] if counted else []),
                rows,
            ),
            "",
            "The last column counts endpoints on the clips' own pauses (e.g. `jfk.wav` has long ones)."
            if not counted
            else '"Turns ended inside the whole clips" counts endpoints on the clips\' own pauses (e.g. `jfk.wav` '
            'has long ones). "Waited the long window": whole clips whose turn '
            + (
                "waited the end-of-turn model's incomplete window of silence (its score under "
                "`complete_threshold`, or the words kept it open)"
                if result.long_waits_rule == "window"
                else "ended on the end-of-turn model's incomplete window (its last score under `complete_threshold`)"
            )
            + ", of the clips whose turn ended after the speech.",
            "",
            machine_markdown(result.machine),
        ]
    )


def plot(result: PausesResult, path: Path) -> None:
    """Each strategy's end-of-turn delay p50 against the share of mid-sentence pauses it cut short: filled, the
    pauses under 300 ms (never to be cut); open, those of 300 ms and more."""
    from voice.bench.plots import tradeoff

    def share(r: StrategyRow, short: bool) -> float:
        tested = {str(p): r.tested_at(str(p)) for p in result.pauses_ms}
        return cut_pct(r.false_endpoints, tested, short) or 0.0

    points = [
        (r.strategy, r.end_of_turn_delay_p50_ms, share(r, True), share(r, False))
        for r in result.strategies
        if r.end_of_turn_delay_p50_ms is not None
    ]
    tradeoff(
        path,
        points,
        f"End of turn: delay vs pauses cut short ({len(result.clips)} clips of {Path(result.speech_dir).name})",
        "end-of-turn delay p50, ms (the VAD's lag + the silence waited)",
        "pauses cut short, % (filled: under 300 ms; open: 300 ms and more)",
    )


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    result = measure(args, bench.begin())
    print(
        text_table(
            ["strategy", *[f"{p} ms" for p in result.pauses_ms], "delay p50", "delay p95"],
            [
                [
                    r.strategy,
                    *[f"{r.false_endpoints[str(p)]}/{r.tested_at(str(p))}" for p in result.pauses_ms],
                    r.end_of_turn_delay_p50_ms,
                    r.end_of_turn_delay_p95_ms,
                ]
                for r in result.strategies
            ],
        )
    )
    bench.end(result, markdown=markdown, plot=plot)
    return 0
