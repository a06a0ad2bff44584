"""``voice bench e2e`` as a command: load clips and models, run, print the table, write JSON/Markdown/PNG."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.e2e.measure import (
    E2eOptions,
    method_meta,
    ram_peak_mb,
    run_plan,
    run_plan_in_process,
    tls_context,
)
from voice.bench.e2e.meta import E2eMeta
from voice.bench.e2e.report import ROW_HEADER, console_row, console_summary, markdown, plot
from voice.bench.e2e.result import E2eResult
from voice.bench.e2e.turn import TurnResult, make_plan
from voice.bench.machine_record import Machine
from voice.bench.markdown import write_json, write_text
from voice.bench.scaffold import BenchRun
from voice.config.config import Config, load_config

if TYPE_CHECKING:
    from voice.runtime.runtime import ModelRuntime


def config_with_models(config: Config, stt: str | None, llm: str | None, tts: str | None) -> Config:
    """The config with the model names replaced where given (catalogue names)."""
    if stt:
        config = dataclasses.replace(config, stt=dataclasses.replace(config.stt, model=stt))
    if llm:
        config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, model=llm))
    if tts:
        config = dataclasses.replace(config, tts=dataclasses.replace(config.tts, model=tts))
    return config


def _config_meta(config: Config) -> dict[str, Any]:
    d = dataclasses.asdict(config)
    d["server"].pop("token", None)
    return d


def _meta_and_runtime(
    args: argparse.Namespace, config: Config, opts: E2eOptions, speech_dir: Path, machine: Machine
) -> tuple[E2eMeta, ModelRuntime | None]:
    """The result's method and machine description (the record from the start of the run: the run replaces it
    with the completed one; the RAM peak is measured at the end); the models, loaded, unless the server is
    external."""
    compare: str | None = args.compare_direct
    method = method_meta(opts)
    if args.url:
        if compare:
            from voice.bench.e2e.compare import METHOD as COMPARE_METHOD

            method = dataclasses.replace(method, compare_direct=COMPARE_METHOD)
        server = f"external, {args.url}" + (f"; compared with {compare} directly" if compare else "")
        meta = E2eMeta(
            machine=machine,
            speech_dir=str(speech_dir),
            method=method,
            load_s=None,
            server=server,
            models=None,
            config=None,
            ram_peak_mb=None,
        )
        return meta, None
    from voice.loader import load_runtime

    t0 = time.perf_counter()
    runtime = load_runtime(config)
    meta = E2eMeta(
        machine=machine,
        speech_dir=str(speech_dir),
        method=method,
        load_s=round(time.perf_counter() - t0, 1),
        server="in-process VoiceServer on 127.0.0.1, client on its own thread and event loop",
        models={"stt": config.stt.model, "llm": config.llm.model, "tts": config.tts.model},
        config=_config_meta(config),
        ram_peak_mb=None,
    )
    return meta, runtime


def _write(
    result: E2eResult, json_path: Path | None, md_path: Path | None, png_path: Path | None, say: Callable[[str], None]
) -> None:
    """The figure, the Markdown and the JSON (``-``: to stdout) that were asked for."""
    if png_path is not None:
        plot(result, png_path)
        say(f"wrote {png_path}")
    if md_path is not None:
        write_text(md_path, markdown(result, png_path, md_path))
        say(f"wrote {md_path}")
    if json_path is None:
        return
    if str(json_path) == "-":
        import json

        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        write_json(json_path, result.to_json())
        say(f"wrote {json_path}")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    bench = BenchRun(args, say=say)
    json_path, md_path, png_path = bench.outputs.json, bench.outputs.md, bench.outputs.png
    to_stdout = str(json_path) == "-"
    out = sys.stderr if to_stdout else sys.stdout

    compare: str | None = args.compare_direct
    if compare and not args.url:
        raise BenchError("--compare-direct compares with --url (the proxied address): give both")
    if args.url:
        tls_context(args.url, args.ca_file)  # a CA file that cannot be used stops the run before it starts
    config = config_with_models(load_config(args.config), args.stt, args.llm, args.tts)
    speech_dir: Path = args.speech or default_speech_dir()
    clips, warnings = load_clips(speech_dir, args.clips.split(",") if args.clips else None)
    for w in warnings:
        say(f"warning: {w}")
    opts = E2eOptions(
        repeats=args.repeats,
        warmup=args.warmup,
        reply_timeout_s=args.reply_timeout,
        save_audio=args.save_audio,
        token=args.token,
        protocol=args.protocol,
        ca_file=args.ca_file,
    )
    plan = make_plan(clips, opts.repeats, opts.warmup)
    meta, runtime = _meta_and_runtime(args, config, opts, speech_dir, bench.begin())
    say(
        f"speaking {len(clips)} clip(s) from {speech_dir}: {opts.warmup} warm-up turn(s), then "
        f"{opts.repeats} repeat(s); {len(plan)} turns in real time. Each clip is its own session."
    )
    print(ROW_HEADER, file=out, flush=True)
    total = len(plan) * (2 if compare else 1)
    bar = tqdm(total=total, unit="turn", file=sys.stderr, dynamic_ncols=True, leave=False)

    def on_turn(res: TurnResult) -> None:
        bar.update(1)
        bar.write(console_row(res), file=out)

    # Re-measure disturbed turns only when asked to wait for quiet, and only in-process: with --url the
    # server's own CPU time would count as "other processes".
    guard = bench.guard(log=lambda m: bar.write(m, file=sys.stderr)) if runtime is not None else None
    direct: list[TurnResult] = []
    try:
        if runtime is not None:
            turns = asyncio.run(run_plan_in_process(config, runtime, plan, opts, on_turn, guard))
        elif compare:
            from voice.bench.e2e.compare import direct_options, run_compared

            turns, direct = asyncio.run(
                run_compared(args.url, compare, plan, opts, direct_options(opts), on_turn)
            )
        else:
            turns = asyncio.run(run_plan(args.url, plan, opts, on_turn))
    finally:
        bar.close()
    meta = dataclasses.replace(meta, ram_peak_mb=ram_peak_mb() if runtime is not None else None)
    result = E2eResult(
        meta=meta, clips=[c.describe() for c in clips], turns=turns, warnings=warnings, direct=direct
    ).with_machine(bench.finish())
    print(console_summary(result), file=out, flush=True)

    _write(result, json_path, md_path, png_path, say)
    return 0 if result.summary().n_measured > 0 else 1
