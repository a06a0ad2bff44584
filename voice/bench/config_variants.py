"""The ``--variants FILE`` of the benches that compare settings (``voice bench stt``, ``voice bench pauses``): its
``[[variant]]`` tables, each a ``name`` and keys over the config's, as whole checked configs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError
from voice.config.config import DEFAULT_CONFIG_PATH, Config, ConfigError, parse_config
from voice.config.tomlfile import load_toml

#: ``merge(base, overrides) -> data``: the config file's TOML with a variant's keys (less its name) laid over it;
#: raises :class:`ConfigError` for keys a bench does not let vary.
Merge = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def variant_tables(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each ``[[variant]]`` of ``path`` as (its name, its keys less the name), in the file's order."""
    out = []
    for n, table in enumerate(load_toml(path, "variants file", BenchError).get("variant", [])):
        keys = dict(table)
        out.append((str(keys.pop("name", f"variant {n + 1}")), keys))
    if not out:
        raise BenchError(f"{path}: no [[variant]] tables")
    return out


def load_variants(path: Path, config_path: Path | None, merge: Merge) -> list[tuple[str, Config]]:
    """Each ``[[variant]]`` of ``path`` as (name, config): ``merge`` lays it over the config file (default: the
    repository's). A variant whose config is refused names itself and the keys."""
    base = load_toml(config_path or DEFAULT_CONFIG_PATH, "config file", BenchError)
    out = []
    for name, overrides in variant_tables(path):
        try:
            out.append((name, parse_config(merge(base, overrides))))
        except ConfigError as e:
            raise BenchError(f"{path}: variant {name!r}: {e}") from None
    return out
