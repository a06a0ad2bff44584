"""Loading real models for the model-level benches (prefill, speculative, contention) by catalogue name."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.config.config import Config
from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, ModelError, locate

if TYPE_CHECKING:
    from voice.backends.llm_llama import LlamaLlm
    from voice.backends.stt_whisper import WhisperStt


def located_model(name: str, kind: str) -> Path:
    """The folder of catalogue model ``name`` (which must be a ``kind`` model), its files checked."""
    entry = Catalogue.load(DEFAULT_CATALOGUE).get(name)
    if entry.kind != kind:
        raise ModelError(f"model {name!r} is a {entry.kind} model, not a {kind} model")
    return locate(DEFAULT_MODELS_ROOT, entry)


def names(value: str | None, default: str) -> list[str]:
    """A comma-separated list of names, or ``[default]``."""
    items = [x.strip() for x in (value or "").split(",") if x.strip()]
    return items or [default]


def catalogue_names(kind: str) -> list[str]:
    """Every model of ``kind`` in the catalogue, in catalogue order."""
    return [e.name for e in Catalogue.load(DEFAULT_CATALOGUE).entries if e.kind == kind]


def llm_settings(config: Config) -> dict[str, int]:
    """The llama.cpp settings every LLM bench records with its results."""
    return {"n_ctx": config.llm.n_ctx, "n_batch": config.llm.n_batch, "n_threads": config.llm.n_threads}


def load_llm(config: Config, name: str, *, draft_model: Any = None) -> LlamaLlm:
    """A :class:`~voice.backends.llm_llama.LlamaLlm` for catalogue model ``name`` with the config's settings."""
    from voice.backends.llm_llama import LlamaLlm

    llm_config = dataclasses.replace(config.llm, model=name)
    return LlamaLlm(located_model(name, "llm"), llm_config, draft_model=draft_model)


def load_stt(config: Config, name: str) -> WhisperStt:
    from voice.backends.stt_whisper import WhisperStt

    return WhisperStt(located_model(name, "stt"), dataclasses.replace(config.stt, model=name))
