"""Locate the configured models in the catalogue, load them with the real backends and warm them up."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from voice.compute import ComputeGate
from voice.config import Config
from voice.engine import Engines
from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, ModelError, locate

log = logging.getLogger("voice.loader")


def model_path(config_name: str, kind: str, root: Path, catalogue: Catalogue) -> Path:
    entry = catalogue.get(config_name)
    if entry.kind != kind:
        raise ModelError(
            f"model {config_name!r} is a {entry.kind} model, but [{kind}] model needs a {kind} model"
        )
    return locate(root, entry)


def load_engines(
    config: Config,
    *,
    models_root: Path = DEFAULT_MODELS_ROOT,
    catalogue_path: Path = DEFAULT_CATALOGUE,
    gate: ComputeGate | None = None,
) -> Engines:
    """Load VAD, STT, LLM and TTS, each warmed up. Raises ModelError naming any missing file."""
    from voice.backends.llm_llama import LlamaLlm
    from voice.backends.stt_whisper import WhisperStt
    from voice.backends.tts_piper import PiperTts
    from voice.backends.vad_silero import SileroVad

    catalogue = Catalogue.load(catalogue_path)
    stt_dir = model_path(config.stt.model, "stt", models_root, catalogue)
    llm_dir = model_path(config.llm.model, "llm", models_root, catalogue)
    tts_dir = model_path(config.tts.model, "tts", models_root, catalogue)

    def timed(what: str, fn):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        out = fn()
        log.info("loaded and warmed %s in %.0f ms", what, (time.perf_counter() - t0) * 1000)
        return out

    vad = timed("VAD (silero v6)", SileroVad)
    stt = timed(f"STT {config.stt.model}", lambda: WhisperStt(stt_dir, config.stt))
    llm = timed(f"LLM {config.llm.model}", lambda: LlamaLlm(llm_dir, config.llm))
    tts = timed(f"TTS {config.tts.model}", lambda: PiperTts(tts_dir, config.tts))
    return Engines(vad=vad, stt=stt, llm=llm, tts=tts, max_queue=config.server.max_queue, gate=gate)
