"""``voice demo``: start the server in-process, speak questions into it over a real websocket in real
time, save the spoken answer and print each turn's latency report."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import numpy as np
import soxr

from voice.audio import analyse_speech, load_audio, pcm16_to_float, write_wav
from voice.client import SpokenClip, converse
from voice.config.config import Config
from voice.runtime.runtime import ModelRuntime

log = logging.getLogger("voice.demo")

DEFAULT_QUESTIONS = ("What is the largest ocean?", "And what is the longest river in Africa?")
"""Two questions for the LLM (capitals are a skill's since 2026-12-05): the second turn reuses the first's KV."""
LEAD_IN_S = 0.3


def synthesize_question(runtime: ModelRuntime, text: str, rate_hz: int = 16_000) -> SpokenClip:
    """Speak ``text`` with the project's own TTS, as a 16 kHz clip with a short silent lead-in."""
    pcm = pcm16_to_float(np.concatenate(list(runtime.tts.synthesize(text))).astype("<i2").tobytes())
    audio = soxr.resample(pcm, runtime.tts.sample_rate, rate_hz).astype(np.float32)
    audio = np.concatenate([np.zeros(int(LEAD_IN_S * rate_hz), np.float32), audio])
    return SpokenClip(audio, rate_hz, analyse_speech(audio, rate_hz).last_voiced_sample)


def clip_utterance(path: Path, rate_hz: int = 16_000) -> SpokenClip:
    audio = load_audio(path, rate_hz)
    return SpokenClip(audio, rate_hz, analyse_speech(audio, rate_hz).last_voiced_sample)


async def _demo(
    config: Config, runtime: ModelRuntime, utterances: list[SpokenClip], out: Path, as_json: bool
) -> int:
    from voice.serve.server import VoiceServer

    server = VoiceServer(config, runtime)
    await server.start()
    try:
        conv = await converse(server.url, utterances)
    finally:
        await server.shutdown()
    if conv.errors:
        for e in conv.errors:
            log.error("server error: %s: %s", e.get("code"), e.get("message"))
    rc = 0
    for n, (tid, turn) in enumerate(sorted(conv.turns.items())):
        m2e = turn.mouth_to_ear_ms()
        if turn.pcm:
            path = out if n == 0 else out.with_name(f"{out.stem}-{n + 1}{out.suffix}")
            write_wav(path, turn.pcm, turn.sample_rate)
        else:
            path = None
        if turn.report is None:
            rc = 1
            continue
        report = {k: v for k, v in turn.report.items() if k != "type"}
        report["mouth_to_ear_ms"] = None if m2e is None else round(m2e, 1)
        if as_json:
            print(json.dumps(report), flush=True)
            continue
        print(f"\nturn {tid}")
        print(f"  you said:   {turn.transcript!r}")
        print(f"  assistant:  {' '.join(turn.reply_text)!r}")
        if path is not None:
            print(f"  reply audio: {path} ({report.get('reply_audio_ms', 0) / 1000:.1f} s)")
        stages = report["stages_ms"]
        width = max(len(s) for s in stages) if stages else 10
        alloc = config.budget.allocations_ms()
        print(f"  {'stage':<{width}}  {'ms':>8}  {'budget':>6}")
        for name, ms in stages.items():
            flag = "  over" if name in report["over_budget"] else ""
            print(f"  {name:<{width}}  {ms:8.1f}  {alloc.get(name, 0):6d}{flag}")
        total = report["total_ms"]
        total_s = "n/a" if total is None else f"{total:8.1f}"
        verdict = (
            "" if total is None else ("  OVER target" if total > report["target_ms"] else "  within target")
        )
        print(f"  {'total (server)':<{width}}  {total_s}  {report['target_ms']:6d}{verdict}")
        if m2e is not None:
            print(f"  mouth-to-ear measured by the client: {m2e:.1f} ms")
        llm = report.get("llm")
        if llm:
            print(
                f"  LLM: TTFT {llm['ttft_ms']:.1f} ms, ITL mean {llm['itl_mean_ms']:.1f} ms / p95 "
                f"{llm['itl_p95_ms']:.1f} ms ({llm['tps']:.0f} tokens/s), E2E {llm['e2e_ms']:.1f} ms, "
                f"{llm['n_tokens']} tokens"
            )
        print(
            f"  prompt tokens: {report['prompt_tokens_reused']} reused from the cache, "
            f"{report['prompt_tokens_evaluated']} evaluated"
        )
    return rc


def run_demo(
    config: Config, *, speech: Path | None, questions: list[str] | None, out: Path, as_json: bool
) -> int:
    from voice.loader import load_runtime

    runtime = load_runtime(config)
    if speech is not None:
        utterances = [clip_utterance(speech)]
    else:
        utterances = [synthesize_question(runtime, q) for q in (questions or DEFAULT_QUESTIONS)]
    if not as_json:
        print(f"speaking {len(utterances)} question(s) into the server in real time …", file=sys.stderr)
    return asyncio.run(_demo(config, runtime, utterances, out, as_json))
