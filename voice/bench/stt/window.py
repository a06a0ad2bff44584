"""``voice bench stt``: Whisper on the real audio length (guarded) vs the full 30 s window, same clips, one run.

Each clip is transcribed ``repeats`` times by both paths of :class:`~voice.backends.stt_whisper.WhisperStt`
in alternation (so drift in the machine's speed hits both alike). Reported per clip: time (p50 of the
repeats), transcript, whether the short path fell back to the full window; overall: p50/p95 time, the
speed-up measured in this run, and word error rate raw and normalized, for both paths.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from voice.bench import stats
from voice.bench.clips import default_speech_dir, load_clips
from voice.bench.llms import load_stt
from voice.bench.machine import machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.markdown import fixed, md_table, ratio, ratio_of, text_table
from voice.bench.scaffold import BenchRun
from voice.bench.stt.window_result import ClipResult, SttWindowConfig, SttWindowResult, SttWindowSummary, Wer
from voice.bench.synth import espeak_clips
from voice.config.config import SttConfig, load_config
from voice.wire.report import percentile


def _p(values: list[float], q: float) -> float:
    return round(percentile(values, q), 1)


def measure(args: argparse.Namespace, info: Machine) -> SttWindowResult:
    """``info``: the machine record from the start of the run (:meth:`BenchRun.begin`)."""
    config = load_config(args.config)
    if config.stt.min_window_s <= 0:
        config = dataclasses.replace(config, stt=dataclasses.replace(config.stt, min_window_s=SttConfig().min_window_s))
    clips, warnings = load_clips(
        args.speech or default_speech_dir(), args.clips.split(",") if args.clips else None
    )
    if args.espeak:
        with tempfile.TemporaryDirectory(prefix="voice-espeak-") as tmp:
            spoken, more = load_clips(espeak_clips(Path(tmp)))
        clips += spoken
        warnings += more
    for w in warnings:
        print(f"warning: {w}")
    stt = load_stt(config, config.stt.model)
    results: list[ClipResult] = []
    for clip in clips:
        full_ms: list[float] = []
        short_ms: list[float] = []
        full_text = short_text = ""
        fell_back = False
        for _ in range(args.repeats):
            t0 = time.perf_counter_ns()
            full_text = stt.transcribe_full(clip.audio)
            full_ms.append((time.perf_counter_ns() - t0) / 1e6)
            before = stt.fallbacks
            t0 = time.perf_counter_ns()
            short_text = stt.transcribe(clip.audio)
            short_ms.append((time.perf_counter_ns() - t0) / 1e6)
            fell_back = stt.fallbacks > before
        r = ClipResult(
            clip.name,
            round(clip.duration_s, 2),
            clip.reference,
            _p(full_ms, 50),
            _p(short_ms, 50),
            full_text,
            short_text,
            fell_back,
        )
        print(f"{clip.name:40} full {r.full_ms:6.0f} ms  short {r.short_ms:6.0f} ms  fallback {fell_back}")
        results.append(r)
    scored = [r for r in results if r.reference]

    def wers(attr: str) -> Wer:
        pairs = [(r.reference or "", getattr(r, attr)) for r in scored]
        return Wer(raw=stats.corpus_wer(pairs), normalized=stats.corpus_wer_normalized(pairs))

    full_all = [r.full_ms for r in results]
    short_all = [r.short_ms for r in results]
    return SttWindowResult(
        machine=info,
        config=SttWindowConfig(
            model=config.stt.model,
            espeak=args.espeak,
            min_window_s=config.stt.min_window_s,
            pad_s=config.stt.pad_s,
            compute_type=config.stt.compute_type,
            cpu_threads=config.stt.cpu_threads,
            repeats=args.repeats,
        ),
        clips=tuple(results),
        summary=SttWindowSummary(
            full_p50_ms=_p(full_all, 50),
            full_p95_ms=_p(full_all, 95),
            short_p50_ms=_p(short_all, 50),
            short_p95_ms=_p(short_all, 95),
            speedup_p50=ratio_of(_p(full_all, 50), _p(short_all, 50)),
            fallbacks=sum(r.fell_back for r in results),
            clips=len(results),
            wer_full=wers("full_text"),
            wer_short=wers("short_text"),
        ),
    )


def markdown(result: SttWindowResult, png: Path | None, md_path: Path) -> str:
    s = result.summary
    c = result.config
    rows = [
        [r.clip, r.duration_s, r.full_ms, r.short_ms, "yes" if r.fell_back else "", r.full_text, r.short_text]
        for r in result.clips
    ]

    def w(wer: Wer) -> str:
        return f"{fixed(wer.raw)} / {fixed(wer.normalized)}"

    return "\n".join(
        [
            f"# Whisper on the real audio length vs the 30 s window ({result.machine.date})",
            "",
            f"Model {c.model} ({c.compute_type}, {c.cpu_threads} threads); short window = real length + "
            f"{c.pad_s} s, at least {c.min_window_s} s, guarded (loops, length cap, compression ratio, "
            f"log-probability → full window). {c.repeats} repeats per clip, both paths alternated in one run.",
            "",
            md_table(
                ["", "p50 ms", "p95 ms", "WER raw / normalized"],
                [
                    ["full 30 s window", s.full_p50_ms, s.full_p95_ms, w(s.wer_full)],
                    ["short window (guarded)", s.short_p50_ms, s.short_p95_ms, w(s.wer_short)],
                ],
            ),
            "",
            f"Speed-up at p50, same run: **{ratio(s.speedup_p50)}**; fallbacks to the full window: "
            f"{s.fallbacks} of {s.clips} clips.",
            "",
            md_table(["clip", "s", "full ms", "short ms", "fell back", "full window", "short window"], rows),
            "",
            machine_markdown(result.machine),
        ]
    )


def run(args: argparse.Namespace) -> int:
    if getattr(args, "variants", None) is not None:
        from voice.bench.stt import levers as stt_levers

        return stt_levers.run(args)
    bench = BenchRun(args)
    result = measure(args, bench.begin())
    s = result.summary
    print(
        text_table(
            ["path", "p50 ms", "p95 ms", "WER raw", "WER norm"],
            [
                ["full", s.full_p50_ms, s.full_p95_ms, s.wer_full.raw, s.wer_full.normalized],
                ["short", s.short_p50_ms, s.short_p95_ms, s.wer_short.raw, s.wer_short.normalized],
            ],
        )
    )
    bench.end(result, markdown=markdown)
    return 0
