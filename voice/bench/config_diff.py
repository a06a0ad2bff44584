"""How a run's ``--config`` file differs from the repo's ``config.toml``, for its results file.

A result measured with another config names the file (in its command line), but the file is often a scratch
copy that is gone by the time someone reads the result. The differences, key by key, make the result
reproducible from the commit alone::

    [llm] repeat_penalty = 1.0 (config.toml: 1.1)
    [stt] hotwords = ["Siobhan"] (config.toml: [])
    [server] token = set (config.toml: empty)

Secrets are not written: a key named ``token`` or ending in ``_key``, ``password`` or ``secret`` shows as
``set`` or ``empty`` only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voice.config.tomlfile import load_toml

_SECRET_SUFFIXES = ("token", "_key", "password", "secret")


class _Unreadable(Exception):
    pass


def _flat(table: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for key, value in table.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, (*prefix, key)))
        else:
            out[(*prefix, key)] = value
    return out


def _name(path: tuple[str, ...]) -> str:
    *tables, key = path
    return f"[{'.'.join(tables)}] {key}" if tables else key


def _value(path: tuple[str, ...], value: Any) -> str:
    if path[-1].lower().endswith(_SECRET_SUFFIXES):
        return "set" if value not in ("", None) else "empty"
    return json.dumps(value, ensure_ascii=False, default=str)


def config_changes(path: Path, base: Path) -> tuple[str, ...]:
    """Each key whose value in ``path`` differs from ``base`` (added, changed or left out), in ``base``'s key
    order and then the added keys'; empty when the two say the same. An unreadable file gives one line that
    says so (the bench itself reports the error when it loads the config)."""
    try:
        given = _flat(load_toml(path, "config file", _Unreadable))
        default = _flat(load_toml(base, "config file", _Unreadable))
    except _Unreadable as exc:
        return (f"could not compare: {exc}",)
    out: list[str] = []
    for key in [*default, *(k for k in given if k not in default)]:
        if key not in given:
            out.append(f"{_name(key)}: left out ({base.name}: {_value(key, default[key])})")
        elif key not in default:
            out.append(f"{_name(key)} = {_value(key, given[key])} (not in {base.name})")
        elif given[key] != default[key]:
            out.append(f"{_name(key)} = {_value(key, given[key])} ({base.name}: {_value(key, default[key])})")
    return tuple(out)
