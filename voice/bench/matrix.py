"""``voice bench matrix``: ``voice bench e2e`` for every combination of models — which meets turn-taking timing?

Each combination runs in a process of its own (``python -m voice.cli bench e2e … --json``), one after
another on the same machine, with the same clips, repeats and warm-up. The RAM peak of a combination is
that process's ``ru_maxrss`` as reported by ``wait4`` (models + in-process server + client).

Speed is not the answer on its own: every LLM of the matrix is also asked the quality question set in text
mode (``voice bench quality``, its own process, greedy; ``--quality-items`` picks a subset) — or, with
``--spoken-quality``, every STT + LLM pair answers it in spoken mode, through the whole loop, so the STT's
errors count too — and a combination
**meets human turn-taking timing only if it meets the latency target and the quality bar** (``--quality-bar``,
default 80 % of the items answered right, an honest "I can't" counting as right where it is). The answer names
the best trade-off: the fastest combination over the bar; if none is, the most accurate within the target; if
none is either, the most accurate.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.llms import catalogue_names, located_model
from voice.bench.markdown import text_table
from voice.bench.matrix_report import conclusions, console_line, markdown, plot, table
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
) -> dict[str, Any]:
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
    row: dict[str, Any] = {
        "stt": stt,
        "llm": llm,
        "tts": tts,
        "exit_code": proc.returncode,
        "wall_s": wall_s,
        "ram_peak_mb": round(usage.ru_maxrss / 1024, 1),
        "log": str(log_path),
    }
    if not json_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        row["error"] = " | ".join(tail) or f"exit code {proc.returncode}"
        return row
    data = json.loads(json_path.read_text(encoding="utf-8"))
    s = data["summary"]
    examples: dict[str, str] = {}
    for t in data["turns"]:
        examples.setdefault(t["clip"], t["reply_text"])
    row.update(
        {
            "json": str(json_path),
            "n_measured": s["n_measured"],
            "n_failed": s["n_failed"],
            "p50_ms": s["p50_ms"],
            "p95_ms": s["p95_ms"],
            "max_ms": s["max_ms"],
            "stages_p50_ms": {k: v["p50"] for k, v in s["stages"].items()},
            "server_total_p50_ms": s["server_total"]["p50"],
            "p50_reconciliation_error_ms": s["p50_reconciliation_error_ms"],
            "wer": s["wer"],
            "llm_tps_p50": s["llm_tps"]["p50"],
            "llm_ttft_p50_ms": s["llm_ttft"]["p50"],
            "reply_tokens_p50": s["reply_tokens"]["p50"],
            "reply_audio_s_p50": s["reply_audio_s"]["p50"],
            "meets_target": s["meets_target"],
            "meets_human_gap": s["meets_human_gap"],
            "within_target": s["within_target"],
            "load_s": data["meta"].get("load_s"),
            "load_average_at_start": data["meta"]["machine"]["load_average_at_start"],
            "other_processes_cpu_percent": data["meta"]["machine"].get("other_processes_cpu_percent"),
            "redone_turns": (data["meta"]["machine"].get("guard") or {}).get("redone_samples"),
            "examples": examples,
        }
    )
    return row


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
    with log_path.open("w", encoding="utf-8") as log:
        code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    if not json_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        return {"error": " | ".join(tail) or f"exit code {code}"}
    (model,) = json.loads(json_path.read_text(encoding="utf-8"))["models"]
    summary: dict[str, Any] = model["summary"]
    return summary


def attach_quality(
    rows: list[dict[str, Any]], quality: dict[str, dict[str, Any]], bar_pct: float, *, spoken: bool = False
) -> None:
    """Give every measured row its quality (its LLM's in text mode, its STT + LLM's in spoken mode) and the
    joint verdict (pure)."""
    for r in rows:
        if "error" in r:
            continue
        q = quality.get(quality_key(r["stt"], r["llm"], spoken), {})
        right = q.get("right_pct")
        r["quality_right_pct"] = right
        r["quality_items"] = q.get("items")
        r["meets_quality"] = right is not None and right >= bar_pct
        r["meets_turn_taking"] = r["meets_quality"] and r["meets_target"] in ("yes", "p50 only")


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
    meta = {
        "machine": bench.begin(),
        "speech_dir": str(speech),
        "clips": [c.name for c in clips],
        "repeats": args.repeats,
        "warmup": args.warmup,
        "models": models,
    }
    print(
        f"{len(combos)} combinations × {len(clips)} clips × {args.repeats} repeats (+{args.warmup} warm-up), "
        "each combination in its own process",
        flush=True,
    )
    rows: list[dict[str, Any]] = []
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
            attach_quality(rows, quality, args.quality_bar, spoken=True)
        elif not args.no_quality:
            for llm in models["llm"]:
                print(f"quality (text mode) of {llm} …", flush=True)
                quality[llm] = run_quality(args, llm, workdir)
            attach_quality(rows, quality, args.quality_bar)
        meta["quality_bar_pct"] = None if args.no_quality else args.quality_bar
        meta["quality_mode"] = "spoken" if spoken else "text"
        meta["quality"] = quality
        if args.keep is None:
            for r in rows:  # the files are gone with the temporary directory
                r.pop("json", None)
                r.pop("log", None)
    result = {"tool": "voice bench matrix", "schema": 1, "meta": meta, "rows": rows}
    print()
    print(text_table(*table(rows)))
    print()
    print("\n".join(conclusions(rows, meta.get("quality_bar_pct"))))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if all("error" not in r for r in rows) else 1
