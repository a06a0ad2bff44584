"""``voice bench matrix``: ``voice bench e2e`` for every combination of models — which meets turn-taking timing?

Each combination runs in a process of its own (``python -m voice.cli bench e2e … --json``), one after
another on the same machine, with the same clips, repeats and warm-up. The RAM peak of a combination is
that process's ``ru_maxrss`` as reported by ``wait4`` (models + in-process server + client).

Speed is not the answer on its own: every LLM of the matrix is also asked the quality question set in text
mode (``voice bench quality``, its own process, greedy; ``--quality-items`` picks a subset) — or, with
``--spoken-quality``, every STT + LLM pair answers it in spoken mode, through the whole loop, so the STT's
errors count too — and a combination
**meets human turn-taking timing only if it meets the latency target and the quality bar** (``--quality-bar``,
default 80 % of the items answered right, an honest "I can't" counting as right where it is). Beside right %, a
combination shows the rest of its quality run's four outcomes: honest declines, asked to say it again, and wrong
answers given. The answer names
the best trade-off: the fastest combination over the bar; if none is, the most accurate within the target; if
none is either, the most accurate.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.llms import catalogue_names, located_model
from voice.bench.markdown import text_table
from voice.bench.matrix.report import conclusions, console_line, markdown, plot, table
from voice.bench.matrix.result import (
    ComboRun,
    FailedRow,
    MatrixMeta,
    MatrixResult,
    MeasuredRow,
    QualityVerdict,
    Row,
)
from voice.bench.processes import log_tail, run_logged
from voice.bench.scaffold import BenchRun
from voice.models import ModelError


def _list(value: str | None, kind: str) -> list[str]:
    items = [x.strip() for x in (value or "").split(",") if x.strip()]
    return items or catalogue_names(kind)


def check_models(models: dict[str, list[str]]) -> None:
    missing: list[str] = []
    for kind, names in models.items():
        for name in names:
            try:
                located_model(name, kind)
            except ModelError as e:
                missing.append(f"{name} ({e})")
    if missing:
        raise BenchError("models not available: " + "; ".join(missing))


def run_combination(
    args: argparse.Namespace, speech: Path, stt: str, llm: str, tts: str, workdir: Path
) -> Row:
    tag = f"{stt}+{llm}+{tts}"
    json_path = workdir / f"{tag}.json"
    log_path = workdir / f"{tag}.log"
    cmd = [
        sys.executable, "-m", "voice.cli", "--log-level", "WARNING", "bench", "e2e",
        "--speech", str(speech), "--repeats", str(args.repeats), "--warmup", str(args.warmup),
        "--stt", stt, "--llm", llm, "--tts", tts, "--json", str(json_path),
    ]  # fmt: skip
    if args.clips:
        cmd += ["--clips", args.clips]
    if args.config:
        cmd += ["--config", str(args.config)]
    if args.max_load is not None:  # every combination waits for a quiet machine, not only the first
        cmd += ["--max-load", str(args.max_load), "--wait-max", str(args.wait_max)]
    t0 = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall_s = round(time.perf_counter() - t0, 1)
    run = ComboRun(stt, llm, tts, proc.returncode, wall_s, round(usage.ru_maxrss / 1024, 1), str(log_path))
    if not json_path.is_file():
        fields = {f.name: getattr(run, f.name) for f in dataclasses.fields(run)}
        return FailedRow(**fields, error=log_tail(log_path, proc.returncode))
    return MeasuredRow.from_e2e(run, str(json_path), json.loads(json_path.read_text(encoding="utf-8")))


def quality_key(stt: str, llm: str, spoken: bool) -> str:
    """Text-mode quality depends on the LLM only; spoken-mode quality on the STT too."""
    return f"{stt}+{llm}" if spoken else llm


def run_quality(args: argparse.Namespace, llm: str, workdir: Path, stt: str | None = None) -> dict[str, Any]:
    """``voice bench quality`` for one LLM in its own process (spoken mode through ``stt`` when given, else text
    mode): its summary, or an ``error``."""
    key = llm if stt is None else f"{stt}+{llm}"
    json_path = workdir / f"quality-{key}.json"
    log_path = workdir / f"quality-{key}.log"
    cmd = [sys.executable, "-m", "voice.cli", "--log-level", "WARNING", "bench", "quality", "--llm", llm,
           "--json", str(json_path)]  # fmt: skip
    if stt is not None:
        cmd += ["--spoken", "--stt", stt]
    if args.quality_items:
        cmd += ["--items", args.quality_items]
    if args.config:
        cmd += ["--config", str(args.config)]
    written = run_logged(cmd, log_path, json_path)
    if isinstance(written, str):
        return {"error": written}
    (model,) = written["models"]
    summary: dict[str, Any] = model["summary"]
    return summary


def attach_quality(
    rows: Sequence[Row], quality: dict[str, dict[str, Any]], bar_pct: float, *, spoken: bool = False
) -> list[Row]:
    """Every measured row with its quality (its LLM's in text mode, its STT + LLM's in spoken mode) and the
    joint verdict (pure)."""
    out: list[Row] = []
    for r in rows:
        if isinstance(r, MeasuredRow):
            q = quality.get(quality_key(r.stt, r.llm, spoken), {})
            right = q.get("right_pct")
            meets = right is not None and right >= bar_pct
            verdict = QualityVerdict(
                right, q.get("items"), meets, meets and r.meets_target in ("yes", "p50 only"), **_outcomes(q)
            )
            r = dataclasses.replace(r, quality=verdict)
        out.append(r)
    return out


def _outcomes(summary: dict[str, Any]) -> dict[str, float | None]:
    """A quality summary's shares of honest declines, asked again and wrong answers, as the verdict's keys (none
    when the run did not count them)."""
    if "declined_pct" not in summary:
        return {}
    keys = ("declined_pct", "asked_again_pct", "wrong_pct")
    return {f"quality_{k}": summary[k] for k in keys}


def _without_files(row: Row) -> Row:
    """``row`` without its log and result paths."""
    if isinstance(row, MeasuredRow):
        return dataclasses.replace(row, log=None, json=None)
    return dataclasses.replace(row, log=None)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    bench = BenchRun(args)
    speech: Path = (args.speech or default_speech_dir()).resolve()
    clips, warnings = load_clips(speech, args.clips.split(",") if args.clips else None)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    models = {"stt": _list(args.stt, "stt"), "llm": _list(args.llm, "llm"), "tts": _list(args.tts, "tts")}
    check_models(models)
    combos = list(itertools.product(models["stt"], models["llm"], models["tts"]))
    machine = bench.begin()
    print(
        f"{len(combos)} combinations × {len(clips)} clips × {args.repeats} repeats (+{args.warmup} warm-up), "
        "each combination in its own process",
        flush=True,
    )
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        bar = tqdm(combos, unit="combination", file=sys.stderr, dynamic_ncols=True)
        for stt, llm, tts in bar:
            bar.set_postfix_str(f"{stt} + {llm} + {tts}")
            row = run_combination(args, speech, stt, llm, tts, workdir)
            rows.append(row)
            bar.write(console_line(row))
        bar.close()
        quality: dict[str, dict[str, Any]] = {}
        spoken = bool(getattr(args, "spoken_quality", False))
        if not args.no_quality and spoken:
            for stt, llm in itertools.product(models["stt"], models["llm"]):
                print(f"quality (spoken mode) of {stt} + {llm} …", flush=True)
                quality[quality_key(stt, llm, True)] = run_quality(args, llm, workdir, stt)
            rows = attach_quality(rows, quality, args.quality_bar, spoken=True)
        elif not args.no_quality:
            for llm in models["llm"]:
                print(f"quality (text mode) of {llm} …", flush=True)
                quality[llm] = run_quality(args, llm, workdir)
            rows = attach_quality(rows, quality, args.quality_bar)
        if args.keep is None:  # the files are gone with the temporary directory
            rows = [_without_files(r) for r in rows]
    meta = MatrixMeta(
        machine=machine,
        speech_dir=str(speech),
        clips=tuple(c.name for c in clips),
        repeats=args.repeats,
        warmup=args.warmup,
        models={k: tuple(v) for k, v in models.items()},
        quality_bar_pct=None if args.no_quality else args.quality_bar,
        quality_mode="spoken" if spoken else "text",
        quality=quality,
    )
    result = MatrixResult(meta, tuple(rows))
    print()
    print(text_table(*table(rows)))
    print()
    print("\n".join(conclusions(rows, meta.quality_bar_pct)))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if all(isinstance(r, MeasuredRow) for r in rows) else 1
