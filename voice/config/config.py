"""Configuration: a :class:`Config` of frozen sections, loaded from ``config.toml``.

Every section and key is checked: an unknown section or key, or a value of the wrong type, raises
:class:`ConfigError` naming the key; sections and keys left out keep their defaults, which equal the values
in the repository's ``config.toml``. Three layers, each importing only the ones before it:
:mod:`voice.config.sections` (a frozen dataclass per section, with its defaults) ← :mod:`voice.config.checks`
(every rule a value must meet, in one place) ← this module (the :class:`Config`, which runs those checks
whenever one is made, also by :meth:`Config.with_server`, and reading TOML into it). A ``Config`` that exists
is usable. Every name other modules use is importable from here.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from voice.config.checks import ConfigError, check_config
from voice.config.sections import (
    BudgetConfig,
    LlmConfig,
    ServerConfig,
    SttConfig,
    TtsConfig,
    TurnConfig,
    VadConfig,
    WyomingConfig,
)
from voice.config.tomlfile import check_keys, load_toml

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parents[2] / "config.toml"


@dataclass(frozen=True)
class Config:
    server: ServerConfig = field(default_factory=ServerConfig)
    vad: VadConfig = field(default_factory=VadConfig)
    turn: TurnConfig = field(default_factory=TurnConfig)
    stt: SttConfig = field(default_factory=SttConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    tts: TtsConfig = field(default_factory=TtsConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    wyoming: WyomingConfig = field(default_factory=WyomingConfig)

    def __post_init__(self) -> None:
        check_config(server=self.server, vad=self.vad, turn=self.turn, stt=self.stt, llm=self.llm,
                     tts=self.tts, budget=self.budget, wyoming=self.wyoming)  # fmt: skip

    def with_server(self, **changes: Any) -> Config:
        """A copy with some server settings replaced (used by CLI flags)."""
        return dataclasses.replace(self, server=dataclasses.replace(self.server, **changes))

    def with_wyoming(self, **changes: Any) -> Config:
        """A copy with some ``[wyoming]`` settings replaced (used by ``voice wyoming``'s flags)."""
        return dataclasses.replace(self, wyoming=dataclasses.replace(self.wyoming, **changes))


_T = TypeVar("_T")


def _coerce_list(where: str, value: Any, item: type) -> tuple[Any, ...]:
    """A TOML array of whole numbers (``item`` int) or of strings, as a tuple."""
    if item is int:
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise ConfigError(f"{where}: expected a list of whole numbers, got {value!r}")
        return tuple(value)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def _coerce(section: str, key: str, value: Any, annotation: Any) -> Any:
    where = f"[{section}] {key}"
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return _coerce_list(where, value, typing.get_args(annotation)[0])
    if annotation is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type {annotation!r}")  # pragma: no cover


def _section(cls: type[_T], name: str, data: Any) -> _T:
    if not isinstance(data, dict):
        raise ConfigError(f"[{name}] must be a table")
    hints = typing.get_type_hints(cls)
    check_keys(data, (f.name for f in dataclasses.fields(cls)), f"[{name}]", ConfigError)  # type: ignore[arg-type]
    values = {k: _coerce(name, k, v, hints[k]) for k, v in data.items()}
    return cls(**values)


_SECTIONS: dict[str, type[Any]] = {
    "server": ServerConfig,
    "vad": VadConfig,
    "turn": TurnConfig,
    "stt": SttConfig,
    "llm": LlmConfig,
    "tts": TtsConfig,
    "budget": BudgetConfig,
    "wyoming": WyomingConfig,
}


def parse_config(data: dict[str, Any]) -> Config:
    """Build a :class:`Config` from parsed TOML; sections left out keep their defaults."""
    for name in data:
        if name not in _SECTIONS:
            raise ConfigError(f"unknown section [{name}]; known sections: {', '.join(_SECTIONS)}")
    parts = {name: _section(cls, name, data.get(name, {})) for name, cls in _SECTIONS.items()}
    return Config(**parts)  # validated by Config itself


def load_config(path: Path | str | None = None) -> Config:
    """Load and check a config file (default: the repository's ``config.toml``)."""
    p = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    data = load_toml(p, "config file", ConfigError)
    try:
        return parse_config(data)
    except ConfigError as e:
        raise ConfigError(f"{p}: {e}") from None


__all__ = [
    "BudgetConfig",
    "Config",
    "ConfigError",
    "LlmConfig",
    "ServerConfig",
    "SttConfig",
    "TtsConfig",
    "TurnConfig",
    "VadConfig",
    "WyomingConfig",
    "load_config",
    "parse_config",
]
