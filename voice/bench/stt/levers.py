"""``voice bench stt --variants FILE``: several ``[stt]`` settings on the same clips, in one run.

Each variant (a name plus ``[stt]`` keys over the configured ones: ``model``, ``beam_size``,
``initial_prompt``, …) is loaded once; every clip is then transcribed ``repeats`` times by each variant on the
path the server uses (:meth:`~voice.backends.stt_whisper.WhisperStt.transcribe`: the short window, guarded),
the variants in a rotating order so drift in the machine's speed hits them alike. Reported per variant: time
p50/p95 over the clips (each clip's time is the p50 of its repeats), normalized WER on the recordings and,
with ``--quality-set``, on the quality set's questions spoken by its espeak-ng voices (per voice), as
``voice bench quality --spoken`` speaks them (the question alone: no VAD cut, no earlier turns).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from voice.bench import config_variants
from voice.bench.clips import default_speech_dir, load_clips
from voice.bench.llms import load_stt
from voice.bench.machine import machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.markdown import fixed, md_table, text_table
from voice.bench.scaffold import BenchRun
from voice.bench.stats import corpus_wer_normalized
from voice.bench.stt.levers_result import LeverClipRow, LeversResult, LeverSummary, LeverVariant
from voice.wire.report import percentile


@dataclasses.dataclass(frozen=True)
class LeverClip:
    name: str
    group: str
    """``recordings`` or ``espeak-ng:<voice>``."""
    reference: str
    audio: Any


def load_variants(path: Path, config_path: Path | None) -> list[tuple[str, Any]]:
    """``[[variant]]`` tables of ``path``: each a ``name`` and ``[stt]`` keys over the config's."""

    def merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
        return {**base, "stt": {**base.get("stt", {}), **overrides}}

    return config_variants.load_variants(path, config_path, merge)


def collect_clips(args: argparse.Namespace) -> list[LeverClip]:
    clips, warnings = load_clips(args.speech or default_speech_dir(), args.clips.split(",") if args.clips else None)
    for w in warnings:
        print(f"warning: {w}")
    out = [LeverClip(c.name, "recordings", c.reference, c.audio) for c in clips if c.reference]
    if args.quality_set:
        from voice.bench.quality.measure import DEFAULT_SET
        from voice.bench.quality.question_set import load_items
        from voice.bench.quality.spoken import spoken_items
        from voice.bench.voices import ESPEAK_VOICES, parse_voices

        for sp in spoken_items(load_items(DEFAULT_SET), voices=parse_voices(ESPEAK_VOICES)):
            out.append(LeverClip(sp.item.id, sp.voice, sp.item.question, sp.audio))
    return out


def _p(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 1) if values else None


def _wer(pairs: list[tuple[str, str]]) -> float | None:
    w = corpus_wer_normalized(pairs)
    return None if w is None else round(w, 3)


def summarize(clips: list[LeverClip], texts: list[str], times_ms: list[float], fallbacks: int) -> LeverSummary:
    groups = list(dict.fromkeys(c.group for c in clips))
    spoken = [i for i, c in enumerate(clips) if c.group != "recordings"]
    recorded = [i for i, c in enumerate(clips) if c.group == "recordings"]
    return LeverSummary(
        p50_ms=_p(times_ms, 50),
        p95_ms=_p(times_ms, 95),
        recordings_p50_ms=_p([times_ms[i] for i in recorded], 50),
        recordings_p95_ms=_p([times_ms[i] for i in recorded], 95),
        spoken_set_p50_ms=_p([times_ms[i] for i in spoken], 50),
        spoken_set_p95_ms=_p([times_ms[i] for i in spoken], 95),
        fallbacks=fallbacks,
        wer_by_group={
            g: _wer([(c.reference, t) for c, t in zip(clips, texts, strict=True) if c.group == g]) for g in groups
        },
        wer_spoken_set=_wer([(clips[i].reference, texts[i]) for i in spoken]),
    )


def measure(args: argparse.Namespace, info: Machine) -> LeversResult:
    """``info``: the machine record from the start of the run (:meth:`BenchRun.begin`)."""
    variants = load_variants(args.variants, args.config)
    clips = collect_clips(args)
    stts = []
    for name, config in variants:
        print(f"loading {name} ({config.stt.model}) …", flush=True)
        stts.append(load_stt(config, config.stt.model))
    texts: list[list[str]] = [[] for _ in variants]
    times: list[list[float]] = [[] for _ in variants]
    fallbacks = [0] * len(variants)
    for n, clip in enumerate(clips):
        ms: list[list[float]] = [[] for _ in variants]
        for _ in range(args.repeats):
            for k in range(len(variants)):
                v = (n + k) % len(variants)  # a rotating order: no variant always runs first
                before = stts[v].fallbacks
                t0 = time.perf_counter_ns()
                text = stts[v].transcribe(clip.audio)
                ms[v].append((time.perf_counter_ns() - t0) / 1e6)
                if len(texts[v]) == n:  # the first repeat's text (greedy and beam search are deterministic)
                    texts[v].append(text)
                    fallbacks[v] += stts[v].fallbacks > before
        for v in range(len(variants)):
            times[v].append(percentile(ms[v], 50))
        print(f"{clip.group:20} {clip.name:32} " + " ".join(f"{t[-1]:5.0f}" for t in times), flush=True)
    return LeversResult(
        machine=info,
        repeats=args.repeats,
        variants=tuple(
            LeverVariant(name, dataclasses.asdict(config.stt), summarize(clips, texts[v], times[v], fallbacks[v]))
            for v, (name, config) in enumerate(variants)
        ),
        clips=tuple(
            LeverClipRow(c.name, c.group, c.reference, tuple(t[i] for t in texts), tuple(round(t[i], 1) for t in times))
            for i, c in enumerate(clips)
        ),
    )


SUMMARY_HEADER = ["variant", "STT p50 ms", "p95 ms", "recordings p50 / p95", "spoken set p50 / p95", "fallbacks"]


def _summary_rows(result: LeversResult) -> tuple[list[str], list[list[Any]]]:
    groups = list(result.variants[0].summary.wer_by_group)
    header = [*SUMMARY_HEADER, *(f"WER {g}" for g in groups)]
    if len(groups) > 1:
        header.append("WER spoken set")
    rows = []
    for v in result.variants:
        s = v.summary
        row = [v.name, s.p50_ms, s.p95_ms, f"{s.recordings_p50_ms} / {s.recordings_p95_ms}",
               f"{s.spoken_set_p50_ms} / {s.spoken_set_p95_ms}", s.fallbacks,
               *(fixed(s.wer_by_group[g]) for g in groups)]  # fmt: skip
        if len(groups) > 1:
            row.append(fixed(s.wer_spoken_set))
        rows.append(row)
    return header, rows


_SHOWN = ("model", "beam_size", "initial_prompt", "pad_silence")


def _settings_table(result: LeversResult) -> str:
    """The variants' ``[stt]`` settings: the four usual keys, then every other key whose value differs between
    them (a key a variant's result predates counts as absent)."""
    variants = result.variants
    others = {k for v in variants for k in v.stt} - set(_SHOWN)
    differ = sorted(k for k in others if len({repr(v.stt.get(k)) for v in variants}) > 1)
    rows = [
        [v.name, v.stt["model"], v.stt["beam_size"], repr(v.stt["initial_prompt"]), v.stt.get("pad_silence", False),
         *(v.stt.get(k, "") for k in differ)]
        for v in variants
    ]  # fmt: skip
    return md_table(["variant", *_SHOWN, *differ], rows, align="llrll" + "l" * len(differ))


def markdown(result: LeversResult) -> str:
    header, rows = _summary_rows(result)
    names = [v.name for v in result.variants]
    differ = [
        [c.clip, c.group, c.reference, *c.texts]
        for c in result.clips
        if any(corpus_wer_normalized([(c.reference, t)]) for t in c.texts)
    ]
    return "\n".join([
        f"# STT settings compared on the same clips ({result.machine.date})", "",
        f"Every clip transcribed {result.repeats} times by each variant on the server's path (short window, "
        "guarded), variants in a rotating order, one process; a clip's time is the p50 of its repeats, p50/p95 "
        "are over the clips. WER is normalized (Whisper's English normalizer), over all words of a group.", "",
        _settings_table(result), "",
        md_table(header, rows), "",
        "## Clips some variant mishears (normalized WER > 0; the first repeat's transcript)", "",
        md_table(["clip", "voice", "said", *names], differ, align="l" * (3 + len(names))), "",
        machine_markdown(result.machine),
    ])  # fmt: skip


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    result = measure(args, bench.begin())
    print(text_table(*_summary_rows(result)))
    bench.end(result, markdown=lambda r, _png, _md: markdown(r) + "\n")
    return 0
