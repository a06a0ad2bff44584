"""``voice bench load`` as a command: load clips and models, run the sweep (once, or with the per-conversation
KV cache off and on), print a table per level, write JSON/Markdown/PNG."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from voice.bench import plots
from voice.bench.clips import BenchError, Clip, default_speech_dir, load_clips
from voice.bench.e2e.command import _config_meta, config_with_models
from voice.bench.e2e.measure import FIRST_AUDIO_METHOD, ram_peak_mb
from voice.bench.load.measure import (
    CAPACITY_METHOD,
    CAPACITY_P95_MS,
    capacity,
    run_sweep,
    run_sweep_in_process,
)
from voice.bench.load.result import (
    InProcess,
    LevelSummary,
    LoadMeta,
    LoadMethod,
    LoadOptions,
    LoadResult,
    LoadVariant,
)
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link, text_table
from voice.bench.scaffold import BenchRun
from voice.bench.stats import TARGET_MS
from voice.config.config import Config, load_config
from voice.turn.speech_end import METHOD as SPEECH_END_METHOD

IN_PROCESS = "in-process VoiceServer on 127.0.0.1; each talker on its own thread and event loop"
"""The server of the in-process variants (the meta's ``server``)."""
HEADER = (
    "N",
    "turns",
    "ok",
    "busy",
    "p50 m2e ms",
    "p95 m2e ms",
    "p95 queue ms",
    "p50 ttft ms",
    "evaluated/turn p50",
    "after 1st p50",
    "kv evicted",
)


def _row(lv: LevelSummary) -> list[Any]:
    return [
        lv.sessions,
        lv.turns,
        lv.ok,
        lv.busy,
        lv.mouth_to_ear.p50,
        lv.mouth_to_ear.p95,
        lv.queue.p95,
        lv.ttft.p50,
        lv.prompt_tokens_evaluated.p50,
        lv.prompt_tokens_evaluated_after_first_turn.p50,
        lv.kv_evicted_turns,
    ]


def _variant_config(config: Config, kv_cache_mb: int) -> Config:
    return dataclasses.replace(config, llm=dataclasses.replace(config.llm, kv_cache_mb=kv_cache_mb))


def variants(config: Config, compare_kv: bool) -> list[tuple[str, Config]]:
    """The configurations to run: as configured, or the per-conversation KV cache off, then on."""
    if not compare_kv:
        return [(f"kv_cache_mb={config.llm.kv_cache_mb}", config)]
    on_mb = config.llm.kv_cache_mb or 256
    return [("kv off", _variant_config(config, 0)), (f"kv on ({on_mb} MB)", _variant_config(config, on_mb))]


def markdown(result: LoadResult, png: Path | None, md_path: Path) -> str:
    out = ["# voice bench load: talkers at once vs mouth-to-ear", ""]
    for v in result.variants:
        cap = v.capacity
        out.append(f"## {v.name}")
        out.append("")
        out.append(
            f"**Capacity: {cap if cap is not None else 'none'}** "
            f"(largest N with p95 mouth-to-ear ≤ {CAPACITY_P95_MS:g} ms and no `busy`)."
        )
        out.append("")
        out.append(md_table(HEADER, [_row(lv) for lv in v.levels]))
        out.append("")
    if png is not None:
        out += [f"![mouth-to-ear vs talkers]({relative_link(png, md_path)})", ""]
    m = result.meta
    out += [
        "## Method",
        "",
        f"- {m.method.talkers}",
        f"- {m.method.capacity}",
        "- queue = the server's stt_queue + llm_queue + tts_queue; evaluated/turn = prompt tokens the LLM "
        "evaluated (turns answered by a skill, 0 tokens, left out); 'after 1st' = turns 2.. of each conversation",
        f"- {m.method.first_audio}",
        f"- speech end: {m.method.speech_end}",
        f"- models: {m.models}; server: {m.server}",
        "",
        machine_markdown(m.machine),
    ]
    return "\n".join(out) + "\n"


def plot(result: LoadResult, path: Path) -> None:
    series: dict[str, tuple[list[float], list[float]]] = {}
    for v in result.variants:
        levels = [lv for lv in v.levels if lv.mouth_to_ear.p95 is not None]
        xs = [float(lv.sessions) for lv in levels]
        m2e = [lv.mouth_to_ear for lv in levels]
        for q, values in (("p50", [d.p50 for d in m2e]), ("p95", [d.p95 for d in m2e])):
            series[f"{q} ({v.name})"] = (xs, [float(x or 0.0) for x in values])
    plots.lines(
        path,
        series,
        "mouth-to-ear vs simultaneous talkers (real recordings, real time)",
        "talkers at once (N)",
        "mouth-to-ear, ms",
        hlines={f"capacity limit (p95 ≤ {CAPACITY_P95_MS:g} ms)": CAPACITY_P95_MS, "target": float(TARGET_MS)},
    )


def run(args: argparse.Namespace) -> int:

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        sessions = tuple(int(x) for x in str(args.sessions).split(",") if x.strip())
    except ValueError:
        raise BenchError(f"--sessions takes comma-separated integers, got {args.sessions!r}") from None
    opts = LoadOptions(
        sessions=sessions,
        turns=args.turns,
        pause_min_s=args.pause_min_ms / 1000,
        pause_max_s=args.pause_max_ms / 1000,
        seed=args.seed,
        reply_timeout_s=args.reply_timeout,
        token=args.token,
    )
    if args.url and args.compare_kv:
        raise BenchError("--compare-kv loads the models in-process (twice); it cannot be used with --url")
    config = config_with_models(load_config(args.config), None, args.llm, None)
    config = config.with_server(max_sessions=max(config.server.max_sessions, *opts.sessions))
    speech_dir: Path = args.speech or default_speech_dir()
    clips, warnings = load_clips(speech_dir, args.clips.split(",") if args.clips else None)
    for w in warnings:
        say(f"warning: {w}")
    bench = BenchRun(args, say=say)
    machine = bench.begin()
    method = LoadMethod(
        talkers=(
            f"N talkers at once, one websocket session each, {opts.turns} turns per conversation from the "
            f"recordings in real time ({opts.frame_ms} ms frames); after each reply the talker listens "
            f"for the reply's audio duration, then pauses {opts.pause_min_s * 1000:.0f}–"
            f"{opts.pause_max_s * 1000:.0f} ms (uniform, seed {opts.seed}); talkers start spread over "
            f"{opts.start_spread_s:g} s; one warm-up turn before each sweep"
        ),
        capacity=CAPACITY_METHOD,
        first_audio=FIRST_AUDIO_METHOD,
        speech_end=SPEECH_END_METHOD,
    )
    meta = LoadMeta(
        machine=machine,
        speech_dir=str(speech_dir),
        clips=tuple(c.name for c in clips),
        options=opts,
        method=method,
        models=None if args.url else {"stt": config.stt.model, "llm": config.llm.model, "tts": config.tts.model},
        server=f"external, {args.url}" if args.url else IN_PROCESS,
        ram_peak_mb=None,
    )

    def on_level(lv: LevelSummary) -> None:
        say(text_table(HEADER, [_row(lv)]))

    if args.url:
        levels = asyncio.run(run_sweep(args.url, clips, opts, on_level))
        result = LoadResult(meta, (LoadVariant("external server", tuple(levels), capacity(levels), None),))
    else:
        result = _in_process(meta, config, args.compare_kv, clips, opts, on_level, say)
    for v in result.variants:
        print(f"\n{v.name}: capacity {v.capacity} (p95 ≤ {CAPACITY_P95_MS:g} ms, no busy)")
        print(text_table(HEADER, [_row(lv) for lv in v.levels]))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if any(lv.ok for v in result.variants for lv in v.levels) else 1


def _in_process(
    meta: LoadMeta,
    config: Config,
    compare_kv: bool,
    clips: Sequence[Clip],
    opts: LoadOptions,
    on_level: Callable[[LevelSummary], None],
    say: Callable[[str], None],
) -> LoadResult:
    """Each variant of the configuration through an in-process server, its models loaded anew."""
    from voice.loader import load_runtime

    out: list[LoadVariant] = []
    for name, cfg in variants(config, compare_kv):
        say(f"{name}: loading models")
        t0 = time.perf_counter()
        runtime = load_runtime(cfg)
        load_s = round(time.perf_counter() - t0, 1)
        try:
            say(f"{name}: sessions {','.join(map(str, opts.sessions))}, {opts.turns} turns each")
            levels = asyncio.run(run_sweep_in_process(cfg, runtime, clips, opts, on_level))
            kv = runtime.kv_stats()
        finally:
            runtime.close()
        out.append(
            LoadVariant(name, tuple(levels), capacity(levels), InProcess(load_s, kv, _config_meta(cfg)))
        )
    return LoadResult(dataclasses.replace(meta, ram_peak_mb=ram_peak_mb()), tuple(out))
