"""``voice bench contention``: do the models fight over the cores, and does the compute gate stop it?

Whisper (CTranslate2) transcribes a real clip and llama.cpp generates a fixed number of tokens:

* each **alone**;
* **both at once, no gate** (``ComputeGate(enabled=False)``): what happens when two turns, or a turn and
  the next one's transcription, overlap by accident;
* **both at once, through the gate** (``ComputeGate()``), used exactly as ``voice/runtime/runtime.py`` does: the
  whole STT call in one ``slot(Priority.STT)``, every LLM step (``next()``) in its own ``slot(Priority.LLM)``.

Both jobs start from a barrier; each one's wall time runs from there to its end, the makespan until both
are done. Modes are interleaved and their order rotated every round, after one warm-up round.

``--wait-policies`` repeats the whole measurement in a subprocess per OpenMP thread wait policy (both
libraries run on libgomp — two separate copies, which do not know about each other's threads). The project
pins ``GOMP_SPINCOUNT=300000`` when unset (``voice/backends/__init__.py``), which would override a policy's own
spin count, so each policy sets the spin count libgomp documents for it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from voice.audio import load_audio
from voice.bench.clips import BenchError, default_speech_dir
from voice.bench.contention.report import console, markdown, plot
from voice.bench.contention.result import (
    TOGETHER_MODES,
    ContentionResult,
    ContentionSummary,
    PolicyRun,
    Together,
)
from voice.bench.llms import load_llm, load_stt
from voice.bench.machine import Guard
from voice.bench.markdown import ratio_of
from voice.bench.scaffold import BenchRun
from voice.bench.stats import describe
from voice.config.config import load_config
from voice.runtime.compute import ComputeGate, Priority
from voice.runtime.model_api import ChatMessage

MODES = ("stt alone", "llm alone", "both, no gate", "both, gate")
LLM_PROMPT = "Tell me a long story about a lighthouse keeper and the storm that changed her life."

POLICIES: dict[str, dict[str, str | None]] = {
    "project": {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None},
    "PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"},
    "ACTIVE": {"OMP_WAIT_POLICY": "ACTIVE", "GOMP_SPINCOUNT": "30000000000"},
}
POLICY_NOTES = {
    "project": "OMP_WAIT_POLICY unset, GOMP_SPINCOUNT=300000 (set by voice.backends: libgomp's own default, "
    "spin ~0.3 M iterations, well under a millisecond to a few ms, then sleep)",
    "PASSIVE": "OMP_WAIT_POLICY=PASSIVE, GOMP_SPINCOUNT=0 (idle threads sleep at once)",
    "ACTIVE": "OMP_WAIT_POLICY=ACTIVE, GOMP_SPINCOUNT=30000000000 (libgomp's ACTIVE default: idle threads spin "
    "for minutes)",
}


def _timed_together(jobs: dict[str, Callable[[], float]]) -> tuple[dict[str, float], dict[str, float], float]:
    """Run the jobs in threads released by one barrier. Each job returns the ms it waited for the gate.

    Returns each job's wall ms, its gate wait ms, and the makespan ms."""
    barrier = threading.Barrier(len(jobs))
    spans: dict[str, tuple[int, int]] = {}
    waits: dict[str, float] = {}
    errors: list[BaseException] = []

    def worker(name: str, fn: Callable[[], float]) -> None:
        barrier.wait()
        t0 = time.perf_counter_ns()
        try:
            waits[name] = fn()
        except BaseException as e:  # reported after join
            errors.append(e)
        spans[name] = (t0, time.perf_counter_ns())

    threads = [threading.Thread(target=worker, args=(n, f), name=f"bench-{n}") for n, f in jobs.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    walls = {n: (b - a) / 1e6 for n, (a, b) in spans.items()}
    makespan = (max(b for _, b in spans.values()) - min(a for a, _ in spans.values())) / 1e6
    return walls, waits, makespan


@contextlib.contextmanager
def _slot(gate: ComputeGate, priority: Priority, waited: list[int]) -> Iterator[None]:
    """``gate.slot(priority)``, adding the time spent waiting for it to ``waited[0]`` (ns)."""
    t0 = time.perf_counter_ns()
    with gate.slot(priority):
        waited[0] += time.perf_counter_ns() - t0
        yield


def _record(into: dict[str, list[float]], walls: dict[str, float], waits: dict[str, float], span: float) -> None:
    """One round's wall and wait times of each model, and the makespan."""
    for k, v in walls.items():
        into[k].append(v)
        into[f"{k}_wait"].append(waits[k])
    into["makespan"].append(span)


def measure(
    config_path: Path | None,
    stt_name: str | None,
    llm_name: str | None,
    clip: Path,
    tokens: int,
    repeats: int,
    guard: Guard | None = None,
) -> PolicyRun:
    """Load the models and measure every mode ``repeats`` times (in this process, with its environment)."""
    config = load_config(config_path)
    stt_name = stt_name or config.stt.model
    llm_name = llm_name or config.llm.model
    audio = load_audio(clip, 16_000)
    print(f"loading STT {stt_name} and LLM {llm_name} …", flush=True)
    stt = load_stt(config, stt_name)
    llm = load_llm(config, llm_name)
    prompt, _ = llm.tokens([ChatMessage("system", config.llm.system_prompt), ChatMessage("user", LLM_PROMPT)])
    transcript = stt.transcribe(audio)

    def stt_job(gate: ComputeGate) -> Callable[[], float]:
        def job() -> float:
            waited = [0]
            with _slot(gate, Priority.STT, waited):
                stt.transcribe(audio)
            return waited[0] / 1e6

        return job

    def llm_job(gate: ComputeGate) -> Callable[[], float]:
        def job() -> float:
            waited = [0]
            llm.reset_cache()
            steps = llm.greedy_steps(prompt)
            try:
                for _ in range(tokens):
                    with _slot(gate, Priority.LLM, waited):
                        next(steps)
            finally:
                steps.close()
            return waited[0] / 1e6

        return job

    off = ComputeGate(enabled=False)
    samples: dict[str, dict[str, list[float]]] = {
        m: {"stt": [], "llm": [], "stt_wait": [], "llm_wait": [], "makespan": []} for m in MODES
    }
    for r in range(repeats + 1):  # round 0 is a warm-up
        order = list(MODES[r % len(MODES) :] + MODES[: r % len(MODES)])
        for mode in order:

            def one(mode: str = mode) -> tuple[dict[str, float], dict[str, float], float]:
                if mode == "stt alone":
                    return _timed_together({"stt": stt_job(off)})
                if mode == "llm alone":
                    return _timed_together({"llm": llm_job(off)})
                gate = ComputeGate(enabled=mode == "both, gate")
                return _timed_together({"stt": stt_job(gate), "llm": llm_job(gate)})

            walls, waits, span = guard.run(one, f"{mode}, round {r}") if guard is not None and r else one()
            if r:
                _record(samples[mode], walls, waits, span)
        print(f"  round {r}/{repeats} done" + (" (warm-up)" if r == 0 else ""), flush=True)
    return PolicyRun(
        stt=stt_name,
        llm=llm_name,
        clip=str(clip),
        clip_s=round(len(audio) / 16_000, 2),
        transcript=transcript,
        tokens=tokens,
        repeats=repeats,
        effective_env={k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")},
        stt_cpu_threads=config.stt.cpu_threads,
        llm_n_threads=config.llm.n_threads,
        samples_ms={m: {k: [round(x, 1) for x in v] for k, v in d.items() if v} for m, d in samples.items()},
        summary=summarize(samples),
        guard=guard.summary() if guard is not None else None,
    )


def _together(
    d: dict[str, list[float]], stt_alone_p50: float | None, llm_alone_p50: float | None, serial: float
) -> Together:
    """One mode in which both jobs ran at once, against each job alone and both one after the other."""
    stt, llm, span = (describe(d[k]) for k in ("stt", "llm", "makespan"))
    stt_busy = describe([w - g for w, g in zip(d["stt"], d["stt_wait"], strict=True)])
    llm_busy = describe([w - g for w, g in zip(d["llm"], d["llm_wait"], strict=True)])
    return Together(
        stt_ms=stt,
        llm_ms=llm,
        stt_wait_ms=describe(d["stt_wait"]),
        llm_wait_ms=describe(d["llm_wait"]),
        stt_compute_ms=stt_busy,
        llm_compute_ms=llm_busy,
        stt_compute_slowdown=ratio_of(stt_busy.p50, stt_alone_p50),
        llm_compute_slowdown=ratio_of(llm_busy.p50, llm_alone_p50),
        makespan_ms=span,
        stt_slowdown=ratio_of(stt.p50, stt_alone_p50),
        llm_slowdown=ratio_of(llm.p50, llm_alone_p50),
        makespan_vs_serial=ratio_of(span.p50, serial),
    )


def summarize(samples: dict[str, dict[str, list[float]]]) -> ContentionSummary:
    stt_alone = describe(samples["stt alone"]["stt"])
    llm_alone = describe(samples["llm alone"]["llm"])
    serial = (stt_alone.p50 or 0) + (llm_alone.p50 or 0)
    no_gate, gate = (_together(samples[m], stt_alone.p50, llm_alone.p50, serial) for m in TOGETHER_MODES)
    return ContentionSummary(stt_alone, llm_alone, round(serial, 1), no_gate, gate)


def _child_env(policy: str) -> dict[str, str]:
    env = dict(os.environ)
    for k, v in POLICIES[policy].items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    clip: Path = args.clip or (args.speech or default_speech_dir()) / "jfk.wav"
    if not clip.is_file():
        raise BenchError(f"clip {clip} not found; pass --clip FILE (a recording of a few seconds of speech)")
    machine = bench.begin()
    results: dict[str, PolicyRun] = {}
    if args.wait_policies:
        policies = [p.strip() for p in args.wait_policies.split(",") if p.strip()]
        unknown = [p for p in policies if p not in POLICIES]
        if unknown:
            raise BenchError(f"unknown wait policy {unknown[0]!r}; choose from {', '.join(POLICIES)}")
        for policy in policies:
            print(f"== wait policy {policy}: {POLICY_NOTES[policy]}", flush=True)
            with tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / "child.json"
                cmd = [
                    sys.executable,
                    "-m",
                    "voice.cli",
                    "--log-level",
                    "WARNING",
                    "bench",
                    "contention",
                    "--clip",
                    str(clip),
                    "--tokens",
                    str(args.tokens),
                    "--repeats",
                    str(args.repeats),
                    "--json",
                    str(out),
                ]
                if args.max_load is not None:  # the child re-measures disturbed runs itself
                    cmd += ["--max-load", str(args.max_load), "--wait-max", str(args.wait_max)]
                for flag, value in (("--config", args.config), ("--stt", args.stt), ("--llm", args.llm)):
                    if value:
                        cmd += [flag, str(value)]
                rc = subprocess.run(cmd, env=_child_env(policy), check=False).returncode
                if rc != 0 or not out.is_file():
                    raise BenchError(f"the {policy} run failed (exit code {rc})")
                child = json.loads(out.read_text(encoding="utf-8"))
            res = PolicyRun.from_json(child["results"]["current environment"])
            results[policy] = dataclasses.replace(res, policy_note=POLICY_NOTES[policy])
    else:
        res = measure(args.config, args.stt, args.llm, clip, args.tokens, args.repeats, bench.guard())
        env = ", ".join(f"{k}={v}" for k, v in res.effective_env.items() if v is not None) or "none"
        results["current environment"] = dataclasses.replace(
            res, policy_note=f"this process's environment ({env})"
        )
    result = ContentionResult(machine, results)
    print()
    print(console(result))
    bench.end(result, markdown=markdown, plot=plot)
    return 0
