"""``voice bench turns``: the end-of-turn settings a user chooses from, in one report.

For every folder of recordings (``--speech``, given once per folder) and every ``[[variant]]`` of the variants file
(a name plus ``[turn]`` / ``[vad]`` keys over the config's, as ``voice bench pauses --variants`` takes):

* ``voice bench pauses --variants`` once per folder, in its own process: per setting, the mid-sentence pauses it
  cuts short at each length, its end-of-turn delay, and the finished clips that waited the long window;
* ``voice bench e2e`` once per setting, in its own process, with that setting's config written out: the whole
  loop over real sockets, mouth-to-ear p50/p95 and the share of turns within 250 and 500 ms.

The report (:mod:`voice.bench.turns.report`) puts both side by side per setting, draws mouth-to-ear against the
pauses cut short, names the config's own point (the setting with no keys of its own) and the setting the rule
picks: the fastest (mouth-to-ear p50, summed over the folders) that cuts no pause under 300 ms on any folder and
no larger share of the longer ones than the config's point (cut-offs no worse than the config's).
Runs go one after another on the same machine; each waits for a quiet machine with ``--max-load``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.bench import config_variants
from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.markdown import text_table
from voice.bench.pauses.result import PausesResult, StrategyRow
from voice.bench.pauses.variants import load_variants, merge_turn_vad
from voice.bench.processes import run_logged
from voice.bench.scaffold import BenchRun
from voice.bench.turns.report import conclusions, markdown, plot, table
from voice.bench.turns.result import TurnsResult, TurnsRow, TurnsSet
from voice.config.config import DEFAULT_CONFIG_PATH
from voice.config.tomlfile import load_toml


def settings(path: Path, config_path: Path | None) -> list[tuple[str, dict[str, Any]]]:
    """The ``[[variant]]`` tables of ``path`` as (name, its ``turn`` / ``vad`` keys), each first checked as a whole
    config, as ``voice bench pauses`` checks it: a bad one is refused before anything runs, naming itself and the
    keys."""
    load_variants(path, config_path)
    return config_variants.variant_tables(path)


def toml_text(data: dict[str, dict[str, Any]]) -> str:
    """A config of plain sections (scalars and arrays of scalars) as TOML; JSON's strings, numbers and booleans
    are TOML's too. Checked by reading it back."""
    lines: list[str] = []
    for section, keys in data.items():
        if not isinstance(keys, dict) or any(isinstance(v, dict) for v in keys.values()):
            raise BenchError(f"the config's [{section}] is not a table of plain values")
        lines += [f"[{section}]", *(f"{k} = {json.dumps(v)}" for k, v in keys.items()), ""]
    text = "\n".join(lines)
    if tomllib.loads(text) != data:
        raise BenchError("the variant's config did not survive being written as TOML")
    return text


def _quiet(args: argparse.Namespace) -> list[str]:
    return ["--max-load", str(args.max_load), "--wait-max", str(args.wait_max)] if args.max_load is not None else []


def row_of(name: str, e2e: dict[str, Any] | str, pauses: StrategyRow | None, pauses_error: str | None) -> TurnsRow:
    """One setting's row from its e2e JSON (or the error that stopped it) and its ``voice bench pauses`` row
    (pure)."""
    error = e2e if isinstance(e2e, str) else pauses_error
    summary = {} if isinstance(e2e, str) else e2e["summary"]
    ok = [] if isinstance(e2e, str) else [
        t["mouth_to_ear_ms"] for t in e2e["turns"] if t.get("mouth_to_ear_ms") is not None and not t.get("error")
    ]  # fmt: skip
    silence = summary.get("stages", {}).get("endpoint_silence", {})
    work = summary.get("work_to_first_audio") or {}
    return TurnsRow(
        variant=name,
        m2e_p50_ms=summary.get("p50_ms"),
        m2e_p95_ms=summary.get("p95_ms"),
        turns=len(ok),
        within_250_ms=sum(ms <= 250 for ms in ok),
        within_500_ms=sum(ms <= 500 for ms in ok),
        endpoint_silence_p50_ms=silence.get("p50"),
        endpoint_silence_p95_ms=silence.get("p95"),
        work_p50_ms=work.get("p50"),
        delay_p50_ms=pauses.end_of_turn_delay_p50_ms if pauses else None,
        delay_p95_ms=pauses.end_of_turn_delay_p95_ms if pauses else None,
        cut=dict(pauses.false_endpoints) if pauses else {},
        tested={p: pauses.tested_at(p) for p in pauses.false_endpoints} if pauses else {},
        long_waits=pauses.long_waits if pauses else None,
        finished_turns=pauses.finished_turns if pauses else None,
        error=error,
    )


def measure_set(
    args: argparse.Namespace,
    speech: Path,
    variants: Sequence[tuple[str, dict[str, Any]]],
    base: dict[str, dict[str, Any]],
    workdir: Path,
) -> TurnsSet:
    """Every setting on one folder: ``voice bench pauses`` for all of them, then ``voice bench e2e`` for each."""
    clips, warnings = load_clips(speech, args.clips.split(",") if args.clips else None)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    tag = speech.name
    bench = [sys.executable, "-m", "voice.cli", "--log-level", "WARNING", "bench"]
    clip_args = ["--clips", args.clips] if args.clips else []
    pauses_json = workdir / f"{tag}-pauses.json"
    print(f"{speech}: voice bench pauses over {len(variants)} settings …", flush=True)
    cmd = [*bench, "pauses", "--variants", str(args.variants), "--speech", str(speech), "--pauses", args.pauses,
           "--text-delay-ms", str(args.text_delay_ms), "--json", str(pauses_json), *clip_args,
           *_quiet(args)]  # fmt: skip
    if args.config:
        cmd += ["--config", str(args.config)]
    pauses = run_logged(cmd, workdir / f"{tag}-pauses.log", pauses_json)
    by_name = {} if isinstance(pauses, str) else {s.strategy: s for s in PausesResult.from_json(pauses).strategies}
    rows = []
    for n, (name, keys) in enumerate(variants):
        config_path = workdir / f"{tag}-variant{n}.toml"
        config_path.write_text(toml_text(merge_turn_vad(base, keys)), encoding="utf-8")
        e2e_json = workdir / f"{tag}-variant{n}-e2e.json"
        print(f"{speech}: voice bench e2e, {name} …", flush=True)
        cmd = [*bench, "e2e", "--speech", str(speech), "--repeats", str(args.repeats), "--config", str(config_path),
               "--json", str(e2e_json), *clip_args, *_quiet(args)]  # fmt: skip
        e2e = run_logged(cmd, workdir / f"{tag}-variant{n}-e2e.log", e2e_json)
        row = row_of(name, e2e, by_name.get(name), pauses if isinstance(pauses, str) else None)
        print("  " + _line(row), flush=True)
        rows.append(row)
    return TurnsSet(str(speech), tuple(c.name for c in clips), tuple(rows))


def _line(row: TurnsRow) -> str:
    if row.error:
        return f"{row.variant}: failed: {row.error}"
    return (
        f"{row.variant}: mouth-to-ear p50 {row.m2e_p50_ms} / p95 {row.m2e_p95_ms} ms, "
        f"pauses cut: under 300 ms {row.cut_pct(True)} %, 300 ms and more {row.cut_pct(False)} %"
    )


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    variants = settings(args.variants, args.config)
    base = load_toml(args.config or DEFAULT_CONFIG_PATH, "config file", BenchError)
    folders: list[Path] = [p.resolve() for p in (args.speech or [default_speech_dir()])]
    machine = bench.begin()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        sets = tuple(measure_set(args, speech, variants, base, workdir) for speech in folders)
    default = next((name for name, keys in variants if not any(keys.values())), None)
    result = TurnsResult(
        machine=machine,
        variants_file=str(args.variants),
        variants=tuple(name for name, _ in variants),
        default=default,
        repeats=args.repeats,
        pauses_ms=tuple(int(p) for p in args.pauses.split(",")),
        text_delay_ms=args.text_delay_ms,
        sets=sets,
    )
    print()
    print(text_table(*table(result)))
    print()
    print("\n".join(conclusions(result)))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if all(r.error is None for s in sets for r in s.rows) else 1
