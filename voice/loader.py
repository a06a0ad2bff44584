"""Locate the configured models in the catalogue, load them with the real backends and warm them up."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from voice.config.config import Config
from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, ModelError
from voice.models.preflight import check_model_files
from voice.runtime.compute import ComputeGate
from voice.runtime.model_api import ChatMessage, Llm
from voice.runtime.runtime import ModelRuntime
from voice.skills import answer as skills

log = logging.getLogger("voice.loader")
_B = TypeVar("_B")


def _remote(section: str, uri: str, make: Callable[[], _B]) -> _B:
    """A backend on a Wyoming server; one that cannot be reached or used is a ModelError naming it."""
    from voice.wyoming.client import WyomingClientError

    t0 = time.perf_counter()
    try:
        backend = make()
    except WyomingClientError as e:
        raise ModelError(f'[{section}] backend = "wyoming": {e}') from None
    elapsed_ms = (time.perf_counter() - t0) * 1000
    log.info("connected to the %s Wyoming server %s in %.0f ms", section.upper(), uri, elapsed_ms)
    return backend


def load_runtime(
    config: Config,
    *,
    models_root: Path = DEFAULT_MODELS_ROOT,
    catalogue_path: Path = DEFAULT_CATALOGUE,
    gate: ComputeGate | None = None,
) -> ModelRuntime:
    """Load VAD, STT, LLM and TTS, each warmed up. Raises ModelError naming any missing file."""
    from voice.backends.llm_llama import LlamaLlm
    from voice.backends.stt_whisper import WhisperStt
    from voice.backends.stt_wyoming import WyomingStt
    from voice.backends.tts_piper import PiperTts
    from voice.backends.tts_wyoming import WyomingTts
    from voice.backends.vad_silero import SileroVad
    from voice.conversation.skills_llm import SkillsLlm

    catalogue = Catalogue.load(catalogue_path)
    # Fails in milliseconds, naming the file, before seconds are spent loading the other models.
    stt_dir, llm_dir, tts_dir, *extra_dirs = check_model_files(config, models_root, catalogue)
    turn_dir = extra_dirs.pop(0) if config.turn.end_of_turn_model else None
    words_dir = extra_dirs.pop(0) if config.turn.reads_words else None

    def timed(what: str, fn, folder: Path | None = None):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            out = fn()
        except ModelError:
            raise
        except Exception as e:  # a file that passed the checks but the library cannot read
            where = f" from {folder}" if folder is not None else ""
            raise ModelError(
                f"cannot load {what}{where}: {type(e).__name__}: {e}. The files may be corrupt: delete the folder "
                "and run `voice models pull` again"
            ) from e
        log.info("loaded and warmed %s in %.0f ms", what, (time.perf_counter() - t0) * 1000)
        return out

    vad = timed("VAD (silero v6)", SileroVad)
    if config.stt.backend == "wyoming":
        stt = _remote("stt", config.stt.uri, lambda: WyomingStt(config.stt))
    else:
        stt = timed(f"STT {config.stt.model}", lambda: WhisperStt(stt_dir, config.stt), stt_dir)
    llm: Llm
    if config.llm.backend == "openai":
        from voice.backends.llm_openai import OpenAiLlm

        where = f"LLM {config.llm.model} on {config.llm.base_url}"
        llm = timed(where, lambda: OpenAiLlm(config.llm))
    else:
        llm = timed(f"LLM {config.llm.model}", lambda: LlamaLlm(llm_dir, config.llm), llm_dir)
    if config.llm.skills:
        llm = SkillsLlm.of(llm, config.llm)
        t0 = time.perf_counter()
        skills.load_data()  # else on the first question about a country or an element (~0.1 s)
        log.info("loaded the skills' data (countries, elements) in %.0f ms", (time.perf_counter() - t0) * 1000)
    if config.tts.backend == "wyoming":
        tts = _remote("tts", config.tts.uri, lambda: WyomingTts(config.tts))
    else:
        tts = timed(f"TTS {config.tts.model}", lambda: PiperTts(tts_dir, config.tts), tts_dir)
    turn = None
    if turn_dir is not None:
        from voice.backends.turn_smart import SmartTurn

        name = config.turn.end_of_turn_model
        turn = timed(f"end-of-turn model {name}", lambda: SmartTurn(turn_dir), turn_dir)
    words = None
    if words_dir is not None:
        from voice.backends.turn_words import WordsEndModel

        name = config.turn.reads_words
        words = timed(
            f"words end-of-turn model {name}",
            lambda: WordsEndModel(words_dir, name, config.llm.system_prompt),
            words_dir,
        )
    runtime = ModelRuntime(
        vad=vad,
        stt=stt,
        llm=llm,
        tts=tts,
        max_queue=config.server.max_queue,
        gate=gate,
        turn_score=turn.score if turn is not None else None,
        words_end=words.end_probability if words is not None else None,
    )
    timed("each model on its own thread", lambda: runtime.warm_threads(ChatMessage("system", config.llm.system_prompt)))
    return runtime
