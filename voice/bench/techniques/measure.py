"""``voice bench techniques``: what each latency technique buys, switched on one after another, in one sitting.

The same clips are spoken to the in-process server once per step; each step adds one technique to the one
before, so the difference between two rows is what that technique buys on this machine, measured minutes
apart (the machine's load is recorded per step). Speed is reported beside quality: the STT word error rate
(Whisper's English normalizer) and how many replies are word-for-word the serial baseline's — a technique
that changes what is heard or said shows here, not only in its speed.

Steps (each is the previous one plus):

0. ``serial`` — the turn as a sum: the silence window, then Whisper on its 30 s window, then the LLM, then
   TTS of a whole first sentence, with Piper's silent lead;
1. ``speculate`` — the reply starts after 96 ms of the VAD's silence (``[turn] speculate_after_ms``) and is
   held until the endpoint confirms the turn;
2. ``short_stt`` — Whisper on the real audio length (``[stt] min_window_s``);
3. ``first_chunk`` — a first sentence without a comma is spoken after 6 words (``[tts] max_first_chunk_words``);
4. ``trim_lead`` — the first audio starts 10 ms before its first sound (``[tts] trim_lead_ms``);
5. ``smart_turn`` — the end-of-turn model chooses the silence window (``[turn] end_of_turn_model``);
6. ``early_pause`` — the reply starts after 32 ms of the VAD's silence instead of 96 (the end-of-turn model is
   still asked after 96 ms: ``[turn] score_after_ms``);
7. ``energy_pause`` — a 30 dB drop in energy also counts towards that pause (``[turn] pause_energy_drop_db``):
   the VAD's probability lags the end of speech by 50–150 ms, the energy does not;
8. ``stream_tts`` — Piper's waveform decoder runs on pieces of the sentence and the first ~250 ms of audio is sent
   as soon as it is ready (``[tts] stream_first_ms``), instead of after the whole sentence;

All eight together are the default configuration. The step whose configuration is the one given
(``--config``, by default ``config.toml``) says so in its description; ``--steps`` runs a subset (each still
on top of all the steps before it), e.g. ``--steps smart_turn,early_pause,energy_pause``.

*Trials* are techniques measured and not made defaults; each runs on top of all the steps, only when named
in ``--steps``:

* ``gated_turn_model`` — the end-of-turn model runs first through the compute gate, alone on the cores
  (``[turn] score_in_gate``), instead of on the VAD thread beside the reply's STT and LLM. Two sittings on
  2026-12-03: p50 422/424 ms vs 421/421 without, p95 605/647 vs 538/540 (results ``…-techniques-gate-*``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from voice.bench import stats
from voice.bench.clips import BenchError, Clip, default_speech_dir, load_clips
from voice.bench.e2e.measure import E2eOptions, run_plan_in_process
from voice.bench.e2e.result import summarize
from voice.bench.e2e.turn import TurnResult, make_plan
from voice.bench.machine import load_average, machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.markdown import md_table, text_table
from voice.bench.scaffold import BenchRun
from voice.bench.techniques.result import StackModels, StepRow, TechniquesResult
from voice.config.config import Config, load_config

#: The pause of the first speculation step, then of the early-pause step (see the module docstring).
FIRST_PAUSE_MS = 96
EARLY_PAUSE_MS = 32
ENERGY_DROP_DB = 30.0
STREAM_FIRST_MS = 250.0


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    description: str
    apply: Callable[[Config], Config]
    trial: bool = False
    """Measured, not a default: applied on top of every non-trial step, run only when named in ``--steps``."""


def _set(config: Config, section: str, **values: Any) -> Config:
    return dataclasses.replace(config, **{section: dataclasses.replace(getattr(config, section), **values)})


def steps(base: Config) -> list[tuple[Step, Config]]:
    """The cumulative steps and their configs, from ``base`` (the user's config: models, VAD, …)."""
    serial = _set(
        _set(
            _set(
                base,
                "turn",
                speculate_after_ms=0,
                end_of_turn_model="",
                pause_energy_drop_db=0.0,
                score_in_gate=False,
            ),
            "stt",
            min_window_s=0.0,
        ),
        "tts",
        max_first_chunk_words=12,
        trim_lead_ms=-1.0,
        stream_first_ms=0.0,
    )
    defaults = Config()
    plan = [
        Step("serial", "silence window → STT (30 s window) → LLM → TTS of the first sentence", lambda c: c),
        Step(
            "speculate",
            f"+ reply started after {FIRST_PAUSE_MS} ms of silence, held until the endpoint",
            lambda c: _set(c, "turn", speculate_after_ms=FIRST_PAUSE_MS),
        ),
        Step(
            "short_stt",
            f"+ Whisper on the real length (at least {defaults.stt.min_window_s:g} s, guarded)",
            lambda c: _set(c, "stt", min_window_s=defaults.stt.min_window_s),
        ),
        Step(
            "first_chunk",
            f"+ first chunk cut after {defaults.tts.max_first_chunk_words} words",
            lambda c: _set(c, "tts", max_first_chunk_words=defaults.tts.max_first_chunk_words),
        ),
        Step(
            "trim_lead",
            f"+ first audio starts {defaults.tts.trim_lead_ms:g} ms before its first sound",
            lambda c: _set(c, "tts", trim_lead_ms=defaults.tts.trim_lead_ms),
        ),
        Step(
            "smart_turn",
            f"+ {defaults.turn.end_of_turn_model} sets the silence window ({defaults.turn.complete_silence_ms} ms "
            f"complete / {defaults.turn.incomplete_silence_ms} ms not)",
            lambda c: _set(c, "turn", end_of_turn_model=defaults.turn.end_of_turn_model),
        ),
    ]
    plan += [
        Step(
            "early_pause",
            f"+ reply started after {EARLY_PAUSE_MS} ms of the VAD's silence (model still asked at "
            f"{defaults.turn.score_after_ms} ms)",
            lambda c: _set(c, "turn", speculate_after_ms=EARLY_PAUSE_MS),
        ),
        Step(
            "energy_pause",
            f"+ a {ENERGY_DROP_DB:g} dB energy drop also counts towards that pause",
            lambda c: _set(c, "turn", pause_energy_drop_db=ENERGY_DROP_DB),
        ),
        Step(
            "stream_tts",
            f"+ Piper's sentence decoded in pieces, the first ~{STREAM_FIRST_MS:g} ms of audio sent when ready",
            lambda c: _set(c, "tts", stream_first_ms=STREAM_FIRST_MS),
        ),
        Step(
            "gated_turn_model",
            "+ the end-of-turn model runs alone on the cores (first through the compute gate); a trial, not a default",
            lambda c: _set(c, "turn", score_in_gate=True),
            trial=True,
        ),
    ]
    out: list[tuple[Step, Config]] = []
    config = defaults_reached = serial
    for step in plan:
        if step.trial:
            config = step.apply(defaults_reached)
        else:
            config = defaults_reached = step.apply(defaults_reached)
        if config == base:
            step = dataclasses.replace(step, description=step.description + " (= the configuration given)")
        out.append((step, config))
    return out


def select(all_steps: list[tuple[Step, Config]], names: str | None) -> list[tuple[Step, Config]]:
    """The steps named in ``names`` (comma-separated; all but the trials when None), each with its
    cumulative config."""
    if not names:
        return [(step, config) for step, config in all_steps if not step.trial]
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = [step.name for step, _ in all_steps]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise BenchError(f"unknown step(s) {', '.join(unknown)}; steps: {', '.join(known)}")
    return [(step, config) for step, config in all_steps if step.name in wanted]


def _row(
    step: Step,
    turns: list[TurnResult],
    baseline: dict[str, str] | None,
    *,
    load_average_before: tuple[float, ...],
    seconds: float,
) -> StepRow:
    """One step's row: the e2e bench's own statistics of its measured turns (uncertain ones counted, not
    timed), and how many replies are word for word the serial step's."""
    measured = [t for t in turns if t.phase == "measured"]
    s = summarize(measured)
    replies = {f"{t.clip}#{t.repeat}": t.reply_text for t in measured}
    same = None if baseline is None else sum(1 for k, v in replies.items() if baseline.get(k) == v)
    return StepRow(
        step=step.name,
        description=step.description,
        turns=s.n_turns,
        failed=s.n_failed,
        uncertain=s.n_uncertain,
        p50_ms=s.p50_ms,
        p95_ms=s.p95_ms,
        within_target=s.within_target,
        stages_p50_ms={name: d.p50 for name, d in s.stages.items()},
        wer_normalized=s.wer_normalized,
        replies_same_as_serial=same,
        replies=replies,
        load_average_before=load_average_before,
        seconds=seconds,
    )


def measure(args: argparse.Namespace, info: Machine) -> TechniquesResult:
    """``info``: the machine record from the start of the run (:meth:`BenchRun.begin`)."""
    from voice.loader import load_runtime

    base = load_config(args.config)
    speech_dir: Path = args.speech or default_speech_dir()
    clips: list[Clip]
    clips, warnings = load_clips(speech_dir, args.clips.split(",") if args.clips else None)
    for w in warnings:
        print(f"warning: {w}")
    opts = E2eOptions(repeats=args.repeats, warmup=args.warmup)
    plan = make_plan(clips, opts.repeats, opts.warmup)
    rows: list[StepRow] = []
    baseline: dict[str, str] | None = None
    for step, config in select(steps(base), getattr(args, "steps", None)):
        t0 = time.perf_counter()
        runtime = load_runtime(config)
        try:
            load_before = load_average()
            turns = asyncio.run(run_plan_in_process(config, runtime, plan, opts))
        finally:
            runtime.close()
        row = _row(step, turns, baseline, load_average_before=load_before,
                   seconds=round(time.perf_counter() - t0, 1))  # fmt: skip
        if baseline is None:
            baseline = row.replies
        rows.append(row)
        print(
            f"{step.name:12} p50 {stats.fmt_ms(row.p50_ms)} ms  p95 {stats.fmt_ms(row.p95_ms)} ms  "
            f"within {stats.TARGET_MS:.0f} ms: {row.within_target}/{row.turns}  WER {row.wer_normalized}",
            flush=True,
        )
    return TechniquesResult(
        machine=info,
        speech_dir=str(speech_dir),
        clips=tuple(c.name for c in clips),
        repeats=opts.repeats,
        warmup=opts.warmup,
        models=StackModels(stt=base.stt.model, llm=base.llm.model, tts=base.tts.model),
        steps=tuple(rows),
    )


def markdown(result: TechniquesResult, png: Path | None, md_path: Path) -> str:
    rows = result.steps
    stage_names = ["endpoint_silence", "stt", "llm_ttft", "first_clause", "tts_first_audio"]
    first = rows[0].p50_ms if rows else None
    table = [
        [
            r.step,
            r.description,
            r.p50_ms,
            r.p95_ms,
            None if first is None or not r.p50_ms else f"{first / r.p50_ms:.2f}x",
            f"{r.within_target}/{r.turns}",
            *[r.stages_p50_ms.get(s) for s in stage_names],
            None if r.wer_normalized is None else f"{r.wer_normalized:.3f}",
            "—" if r.replies_same_as_serial is None else f"{r.replies_same_as_serial}/{r.turns}",
            r.failed + r.uncertain,
        ]
        for r in rows
    ]
    models = result.models
    lines = [
        f"# Latency techniques, one at a time ({result.machine.date})",
        "",
        f"Models: STT `{models.stt}`, LLM `{models.llm}`, TTS `{models.tts}`. Clips: "
        f"`{result.speech_dir}` ({len(result.clips)}), {result.repeats} repeat(s) after "
        f"{result.warmup} warm-up turn(s), per step. Each step adds one technique to the row above; the "
        "models are loaded afresh per step (the STT window is a load-time setting). Mouth-to-ear is measured "
        "by the client, from the clip's speech end to the first audible reply sample (see docs/measuring.md).",
        "",
        md_table(
            [
                "step",
                "what",
                "p50 ms",
                "p95 ms",
                "speed-up p50 vs serial",
                f"≤ {stats.TARGET_MS:.0f} ms",
                *[f"{s} p50" for s in stage_names],
                "STT WER (norm.)",
                "replies = serial",
                "failed/uncertain",
            ],
            table,
        ),
        "",
        "Stage p50s are the server's; with speculation, work done before the endpoint counts 0 ms (time "
        "saved). Replies are greedy: a reply differs from the serial one only where the transcript (or the "
        "audio cut at a pause) differs.",
        "",
        "## Replies per step",
        "",
        md_table(
            ["turn", *[r.step for r in rows]],
            [[k, *[r.replies.get(k, "") for r in rows]] for k in (rows[0].replies if rows else {})],
        ),
        "",
        machine_markdown(result.machine),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    result = measure(args, bench.begin())
    print(
        text_table(
            ["step", "p50 ms", "p95 ms", "within", "WER", "replies = serial"],
            [
                [
                    r.step,
                    r.p50_ms,
                    r.p95_ms,
                    f"{r.within_target}/{r.turns}",
                    r.wer_normalized,
                    r.replies_same_as_serial,
                ]
                for r in result.steps
            ],
        )
    )
    bench.end(result, markdown=markdown)
    return 0
