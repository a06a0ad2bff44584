"""``voice bench pauses --variants FILE``: endpointing settings to compare, each a name and ``[turn]`` / ``[vad]``
keys over the config's (``benchmarks/turn_variants.toml``), made into the strategies the bench runs: with the
end-of-turn model when the variant names one, and with the STT when it uses ``[turn] text_evidence`` (the words
of each pause reach the endpointer ``--text-delay-ms`` of audio after it, as the speculative transcript does)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from voice.bench import config_variants
from voice.bench.pauses.strategy import Strategy, Transcriber
from voice.config.config import Config, ConfigError
from voice.turn.endpoint import TurnScorer


def load_variants(path: Path, config_path: Path | None) -> list[tuple[str, Config]]:
    """``[[variant]]`` tables of ``path``: each a ``name`` and ``[variant.turn]`` / ``[variant.vad]`` keys over the
    config's (a config that contradicts itself is refused with the variant's name and the keys)."""

    return config_variants.load_variants(path, config_path, merge_turn_vad)


def merge_turn_vad(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The config file's TOML with a variant's ``[turn]`` / ``[vad]`` keys laid over it (pure); any other key is
    refused."""
    unknown = set(overrides) - {"turn", "vad"}
    if unknown:
        raise ConfigError(f"only [turn] and [vad] keys may vary, not {sorted(unknown)}")
    return {**base, **{s: {**base.get(s, {}), **overrides.get(s, {})} for s in ("turn", "vad")}}


def load_smart_turn(name: str) -> TurnScorer:
    """The catalogue end-of-turn model ``name``, loaded from the models directory (blocking)."""
    from voice.backends.turn_smart import SmartTurn
    from voice.models import DEFAULT_MODELS_ROOT, Catalogue, locate

    return SmartTurn(locate(DEFAULT_MODELS_ROOT, Catalogue.load().get(name))).score


def load_words(name: str, system_prompt: str) -> Callable[[str], float | None]:
    """The catalogue language model ``name`` as a words end-of-turn model reading after ``system_prompt``
    (blocking)."""
    from voice.backends.turn_words import WordsEndModel
    from voice.models import DEFAULT_MODELS_ROOT, Catalogue, locate

    folder = locate(DEFAULT_MODELS_ROOT, Catalogue.load().get(name))
    return WordsEndModel(folder, name, system_prompt).end_probability


def variant_strategies(
    variants: list[tuple[str, Config]],
    text_delay_ms: float,
    load_scorer: Callable[[str], TurnScorer] = load_smart_turn,
    load_words: Callable[[str, str], Callable[[str], float | None]] = load_words,
) -> list[Strategy]:
    """A strategy per variant: its own config, with its own end-of-turn model when it names one (each model loaded
    once, so variants may compare models), the config's STT for the words of each pause when it has
    ``[turn] text_evidence`` (each audio transcribed once), and its words model when it names one."""
    from voice.models import DEFAULT_MODELS_ROOT, Catalogue, locate

    scorers: dict[str, TurnScorer] = {}
    readers: dict[str, Callable[[str], float | None]] = {}  # the words models, each (name, prompt) loaded once
    heard: dict[bytes, str] = {}
    loaded: list[Any] = []  # the STT, loaded once, when a variant needs it
    out = []
    for name, config in variants:
        model_name = config.turn.end_of_turn_model
        if model_name and model_name not in scorers:
            scorers[model_name] = load_scorer(model_name)
        transcribe: Transcriber | None = None
        if config.turn.text_evidence:
            if not loaded:
                from voice.backends.stt_whisper import WhisperStt

                stt_dir = locate(DEFAULT_MODELS_ROOT, Catalogue.load().get(config.stt.model))
                loaded.append(WhisperStt(stt_dir, config.stt))

            def transcribe(audio: np.ndarray) -> str:
                key = audio.tobytes()
                if key not in heard:
                    heard[key] = loaded[0].transcribe(audio)
                return str(heard[key])

        words_key = f"{config.turn.reads_words}\n{config.llm.system_prompt}"
        if config.turn.reads_words and words_key not in readers:
            readers[words_key] = load_words(config.turn.reads_words, config.llm.system_prompt)
        words_end = readers.get(words_key)
        out.append(Strategy(name, config, scorers.get(model_name), transcribe, text_delay_ms, words_end))
    return out
