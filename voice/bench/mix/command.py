"""``voice bench mix``: hard clips from a folder of recordings, and how well the reference holds on them.

For every clip of ``--speech`` (default ``../shared/speech``), the reference speech end of the clean
recording is the *known* end; every recipe of :data:`voice.bench.mix.mixing.HARD_MIXES` is applied around it and
written to ``--out`` (``<stem>-<mix>.wav``, 16 kHz mono, with the clean clips copied alongside and a
``transcripts.tsv`` without speech ends, so ``voice bench e2e --speech OUT`` measures against the automatic
reference, not the known one). ``known_ends.tsv`` lists each mixed clip's known end, its reference end and
the difference; the table printed summarizes that difference per recipe. No model but Silero VAD runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from voice.audio import AudioFileError, analyse_speech, float_to_pcm16, write_wav
from voice.bench import stats
from voice.bench.clips import (
    TRANSCRIPTS_NAME,
    BenchError,
    default_speech_dir,
    load_clips,
    reference_speech_end,
    silero_probabilities,
)
from voice.bench.markdown import text_table
from voice.bench.mix.mixing import HARD_MIXES, apply_mix

KNOWN_ENDS_NAME = "known_ends.tsv"


def run(args: argparse.Namespace) -> int:
    speech_dir: Path = args.speech or default_speech_dir()
    out: Path | None = args.out
    if out is None:
        raise BenchError("pass --out DIR: the folder to write the mixed clips to (not inside the repository)")
    wanted = set(args.mixes.split(",")) if args.mixes else None
    mixes = [m for m in HARD_MIXES if wanted is None or m.name in wanted]
    if wanted is not None and len(mixes) != len(wanted):
        unknown = sorted(wanted - {m.name for m in mixes})
        raise BenchError(f"unknown mix(es) {', '.join(unknown)}; known: {', '.join(m.name for m in HARD_MIXES)}")
    probabilities = silero_probabilities()
    clips, warnings = load_clips(
        speech_dir, args.clips.split(",") if args.clips else None, speech_probabilities=probabilities
    )
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    transcripts: list[str] = []
    known_rows: list[str] = ["# clip\tknown_end_s\treference_end_s\terror_ms\tambiguous"]
    errors: dict[str, list[float]] = {m.name: [] for m in mixes}
    ambiguous: dict[str, int] = {m.name: 0 for m in mixes}
    for clip in clips:
        stem = Path(clip.name).stem
        write_wav(out / f"{stem}.wav", float_to_pcm16(clip.audio), clip.rate_hz)
        if clip.reference is not None:
            transcripts.append(f"{stem}.wav\t{clip.reference}")
        known = round(clip.speech_end_s * clip.rate_hz)
        for mix in mixes:
            audio, known_end = apply_mix(clip.audio, clip.analysis.first_voiced_sample, known, mix, clip.rate_hz)
            name = f"{stem}-{mix.name}.wav"
            try:
                analysis = analyse_speech(audio, clip.rate_hz, min_segment_ms=100.0, bridge_ms=150.0)
            except AudioFileError as e:  # e.g. a quiet speaker mixed under the noise: no use to the benchmarks
                print(f"warning: {name} not written: {e}", file=sys.stderr)
                continue
            write_wav(out / name, float_to_pcm16(audio), clip.rate_hz)
            ref = reference_speech_end(audio, clip.rate_hz, analysis, probabilities)
            error_ms = (ref.end_s - known_end / clip.rate_hz) * 1000
            errors[mix.name].append(error_ms)
            ambiguous[mix.name] += ref.ambiguous is not None
            known_rows.append(
                f"{name}\t{known_end / clip.rate_hz:.4f}\t{ref.end_s:.4f}\t{error_ms:+.1f}\t{ref.ambiguous or ''}"
            )
            if clip.reference is not None:
                transcripts.append(f"{name}\t{clip.reference}")
    (out / TRANSCRIPTS_NAME).write_text("\n".join(transcripts) + "\n", encoding="utf-8")
    (out / KNOWN_ENDS_NAME).write_text("\n".join(known_rows) + "\n", encoding="utf-8")
    rows: list[list[Any]] = []
    for mix in mixes:
        abs_err = [abs(e) for e in errors[mix.name]]
        d = stats.describe(errors[mix.name])
        rows.append([mix.name, d.p50, stats.describe(abs_err).p95, d.min, d.max, ambiguous[mix.name]])
    everything = [abs(e) for v in errors.values() for e in v]
    within = sum(1 for e in everything if e <= 20)
    written = len(clips) + sum(len(v) for v in errors.values())
    print(f"wrote {written} clips to {out} (the {len(clips)} clean ones and up to {len(mixes)} mixes each)")
    print("reference speech end − known end (the clean clip's reference), ms:")
    print(text_table(["mix", "p50", "p95 |err|", "min", "max", "ambiguous"], rows))
    print(f"{within} of {len(everything)} mixed clips within 20 ms; known ends in {out / KNOWN_ENDS_NAME}")
    return 0
