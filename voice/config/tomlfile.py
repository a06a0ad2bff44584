"""Reading the project's TOML files (the config, the model catalogue, bench prompts) the same way.

:func:`load_toml` turns a missing or malformed file into the caller's error type naming the file;
:func:`check_keys` and :func:`required` make an unknown key, a missing key or a value of the wrong type an
error naming the table and the key. Each caller passes its own exception class, so a user sees
``ConfigError``, ``ModelError`` or ``BenchError`` as before.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

_T = TypeVar("_T")
_D = TypeVar("_D")


def load_toml(path: Path | str, what: str, error: type[Exception], *, hint: str = "") -> dict[str, Any]:
    """The parsed file; ``error(message)`` if it is missing, unreadable or not TOML (``hint`` is appended)."""
    suffix = f"; {hint}" if hint else ""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}{suffix}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} {path} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}{suffix}") from None


def check_keys(table: Mapping[str, object], allowed: Iterable[str], where: str, error: type[Exception]) -> None:
    """``error`` naming the first key of ``table`` that is not in ``allowed``."""
    known = sorted(set(allowed))
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise error(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(known)})")


def required(table: Mapping[str, object], key: str, typ: type[_T], where: str, error: type[Exception]) -> _T:
    """``table[key]``, which must be there and of type ``typ`` (a bool is not accepted as an int)."""
    if key not in table:
        raise error(f"{where}: missing required key {key!r}")
    return _typed(table[key], key, typ, where, error)


def optional(
    table: Mapping[str, object], key: str, typ: type[_T], where: str, error: type[Exception], default: _D
) -> _T | _D:
    """``table[key]`` if present (then of type ``typ``), else ``default``."""
    return _typed(table[key], key, typ, where, error) if key in table else default


def _typed(value: object, key: str, typ: type[_T], where: str, error: type[Exception]) -> _T:
    # bool is a subclass of int: never accept it where a number is expected.
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise error(f"{where}: key {key!r} must be of type {typ.__name__}, got {type(value).__name__}")
    return value
