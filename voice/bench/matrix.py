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

from voice.bench import plots
from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.llms import catalogue_names, located_model
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link, text_table
from voice.bench.scaffold import BenchRun
from voice.bench.stats import HUMAN_GAP_MS, TARGET_MS
from voice.models import ModelError

STAGE_COLUMNS = ("endpoint_silence", "stt", "llm_ttft", "first_clause", "tts_first_audio")


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
            bar.write(_line(row))
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
    print(text_table(*_table(rows)))
    print()
    print("\n".join(conclusions(rows, meta.get("quality_bar_pct"))))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if all("error" not in r for r in rows) else 1


def _line(row: dict[str, Any]) -> str:
    name = f"{row['stt']} + {row['llm']} + {row['tts']}"
    if "error" in row:
        return f"{name}: FAILED: {row['error']}"
    return (
        f"{name}: mouth-to-ear p50 {row['p50_ms']:.0f} ms, p95 {row['p95_ms']:.0f} ms, WER {row['wer']}, "
        f"LLM {row['llm_tps_p50']} tok/s, RAM {row['ram_peak_mb']:.0f} MB ({row['wall_s']:.0f} s)"
    )


def _table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "STT",
        "LLM",
        "TTS",
        "m2e p50 ms",
        "m2e p95 ms",
        *[f"{s} p50" for s in STAGE_COLUMNS],
        "WER",
        "LLM tok/s",
        "reply tokens",
        "RAM peak MB",
        "others' CPU %",
        f"≤{TARGET_MS} ms",
        f"≤{HUMAN_GAP_MS} ms",
        "right %",
        "meets turn-taking",
    ]
    body: list[list[Any]] = []
    for r in rows:
        if "error" in r:
            body.append([r["stt"], r["llm"], r["tts"], "failed", *[None] * (len(header) - 4)])
            continue
        body.append(
            [
                r["stt"],
                r["llm"],
                r["tts"],
                r["p50_ms"],
                r["p95_ms"],
                *[r["stages_p50_ms"].get(s) for s in STAGE_COLUMNS],
                None if r["wer"] is None else f"{r['wer']:.3f}",
                r["llm_tps_p50"],
                r["reply_tokens_p50"],
                r["ram_peak_mb"],
                r.get("other_processes_cpu_percent"),
                r["meets_target"],
                r["meets_human_gap"],
                r.get("quality_right_pct"),
                {True: "yes", False: "no", None: "—"}[r.get("meets_turn_taking")],
            ]
        )
    return header, body


def conclusions(rows: list[dict[str, Any]], quality_bar_pct: float | None = None) -> list[str]:
    ok = [r for r in rows if "error" not in r and r["p50_ms"] is not None]
    if not ok:
        return ["no combination produced a measurement"]
    best = min(ok, key=lambda r: r["p50_ms"])
    meets = [r for r in ok if r["meets_target"] == "yes"]
    meets_p50 = [r for r in ok if r["meets_target"] in ("yes", "p50 only")]
    human = [r for r in ok if r["meets_human_gap"] in ("yes", "p50 only")]

    def name(r: dict[str, Any]) -> str:
        return f"{r['stt']} + {r['llm']} + {r['tts']}"

    out = [
        f"Fastest: {name(best)}, mouth-to-ear p50 {best['p50_ms']:.0f} ms, p95 {best['p95_ms']:.0f} ms "
        f"({best['p50_ms'] / TARGET_MS:.1f}x the {TARGET_MS} ms target, {best['p50_ms'] / HUMAN_GAP_MS:.1f}x "
        f"the ~{HUMAN_GAP_MS} ms human gap).",
        f"Meet {TARGET_MS} ms at p95: {', '.join(map(name, meets)) or 'none'}; at p50: "
        f"{', '.join(map(name, meets_p50)) or 'none'}.",
        f"Meet the ~{HUMAN_GAP_MS} ms human gap at p50: {', '.join(map(name, human)) or 'none'}.",
    ]
    if quality_bar_pct is None:
        out.append("Judge speed next to quality: a model that answers badly can answer fast (see what each LLM said).")
        return out
    rated = [r for r in ok if r.get("quality_right_pct") is not None]
    good = [r for r in rated if r["meets_quality"]]
    both = [r for r in good if r["meets_turn_taking"]]
    out.append(
        f"Meet human turn-taking timing (the {TARGET_MS} ms target at p50 or better AND at least "
        f"{quality_bar_pct:g} % of the quality set right): {', '.join(map(name, both)) or 'none'}."
    )
    if good:
        pick, why = min(good, key=lambda r: r["p50_ms"]), f"the fastest of those at least {quality_bar_pct:g} % right"
    elif [r for r in rated if r in meets_p50]:
        pick = max((r for r in rated if r in meets_p50), key=lambda r: r["quality_right_pct"])
        why = f"none is {quality_bar_pct:g} % right; the most accurate within {TARGET_MS} ms at p50"
    elif rated:
        pick, why = max(rated, key=lambda r: r["quality_right_pct"]), "none is fast or right enough; the most accurate"
    else:
        return [*out, "No LLM could be rated for quality (see the quality logs)."]
    out.append(
        f"Best trade-off: {name(pick)} ({why}): {pick['quality_right_pct']:g} % right, mouth-to-ear p50 "
        f"{pick['p50_ms']:.0f} ms, p95 {pick['p95_ms']:.0f} ms."
    )
    return out


def markdown(result: dict[str, Any], png: Path | None, md: Path | None) -> str:
    meta, rows = result["meta"], result["rows"]
    out = [
        "# Model matrix: which combination meets human turn-taking timing?",
        "",
        machine_markdown(meta["machine"]),
        "",
        f"Every combination ran `voice bench e2e` in its own process, one after another: "
        f"{len(meta['clips'])} clips from `{meta['speech_dir']}`, {meta['repeats']} repeats each after "
        f"{meta['warmup']} warm-up turn(s), each clip in its own session, in real time. Verdicts: **yes** = p95 "
        "within the limit, **p50 only** = the median turn is within it but the slow tail is not, **no** = the "
        f"median turn misses it. Targets: {TARGET_MS} ms (the project's) and ~{HUMAN_GAP_MS} ms, the typical gap "
        "between turns in human conversation (Stivers et al. 2009, PNAS).",
        "",
        "## Answer",
        "",
        *[f"- {line}" for line in conclusions(rows, meta.get("quality_bar_pct"))],
        "",
    ]
    if png is not None:
        out += [f"![matrix]({relative_link(png, md) if md else png.as_posix()})", ""]
    header, body = _table(rows)
    out += [
        "## Results (ms unless stated)",
        "",
        md_table(header, body, align="lll" + "r" * (len(header) - 5) + "ll"),
        "",
        "- **m2e** = mouth-to-ear measured at the client (first audible reply sample − the clip's speech end); "
        "stage columns are p50s of the server's stages (they need not add up to the m2e p50).",
        "- **WER** = STT word error rate over all clips pooled (what the assistant heard vs transcripts.tsv).",
        f"- **right %** = the share of the quality question set answered right in {meta.get('quality_mode', 'text')} "
        "mode (`voice bench quality`, greedy; text mode: the LLM alone, so the same for every STT; spoken mode: "
        "the questions spoken by espeak-ng through the whole loop with that STT; an honest refusal is right "
        "where the item expects one); **meets turn-taking** = the "
        f"{TARGET_MS} ms target met at p50 or better and right % at or over the bar "
        f"({meta.get('quality_bar_pct') if meta.get('quality_bar_pct') is not None else 'not measured'}).",
        "- **LLM tok/s** = p50 over turns of 1000 / mean inter-token latency, measured inside the running "
        "pipeline (TTS interleaves with decoding through the compute gate, so it is lower than alone).",
        "- **RAM peak** = `ru_maxrss` of the combination's process (models + server + client), from `wait4`.",
        "- **others' CPU %** = share of the machine's CPU time other processes used while the combination ran "
        "(with `--max-load`, turns they disturbed by more than 10% were spoken again: "
        + ", ".join(f"{r['stt']}+{r['llm']}: {r.get('redone_turns') or 0}" for r in rows if "error" not in r)
        + " turns redone).",
        "",
        "## What the LLMs said (quality next to speed)",
        "",
        "The first measured reply of each combination to each clip. `gemma3-270m` is a *base* model (not "
        "instruction tuned) with no chat template: the backend falls back to a plain `User:`/`Assistant:` "
        "prompt and it continues text rather than answering — judge its speed with that in mind.",
        "",
    ]
    clips = list(dict.fromkeys(c for r in rows if "error" not in r for c in r["examples"]))
    seen_llm: set[str] = set()
    for r in rows:
        if "error" in r or r["llm"] in seen_llm:
            continue
        seen_llm.add(r["llm"])
        out += [f"**{r['llm']}** (with {r['stt']}):", ""]
        out += [f"- {Path(c).stem}: {_clip_text(r['examples'].get(c, '—'))!r}" for c in clips]
        out.append("")
    failed = [r for r in rows if "error" in r]
    if failed:
        out += [
            "## Failed",
            "",
            *[f"- {r['stt']} + {r['llm']} + {r['tts']}: {r['error']}" for r in failed],
            "",
        ]
    return "\n".join(out)


def _clip_text(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def plot(result: dict[str, Any], path: Path) -> None:
    rows = [r for r in result["rows"] if "error" not in r]
    m = result["meta"]["machine"]
    plots.stacked_stages(
        path,
        [f"{r['stt']}\n{r['llm']}" for r in rows],
        [r["stages_p50_ms"] for r in rows],
        list(dict.fromkeys(k for r in rows for k in r["stages_p50_ms"])),
        [r["p50_ms"] for r in rows],
        f"Mouth-to-ear by model combination (stage p50s stacked; TTS {', '.join(result['meta']['models']['tts'])})"
        f"\n{m['cpu_model']}, {m['cores_usable']} cores, {m['date']}",
        measured_label="mouth-to-ear p50 (client)",
        extra_label="rest of the p50 (not in stage p50s)",
        upper=[r["p95_ms"] for r in rows],
        upper_label="mouth-to-ear p95",
    )
