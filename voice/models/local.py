"""Bring your own model: ``voice models add FILE.gguf`` registers a local GGUF like a catalogue model.

The file is copied (or hard-linked with ``link=True``) into ``<root>/llm/<name>/``, hashed on the way, stamped
as verified, and recorded in ``local.toml`` beside the catalogue (``models/local.toml``, not tracked by git).
:meth:`voice.models.Catalogue.load` reads that file too, so ``[llm] model = "<name>"``, ``voice bench matrix
--llm <name>`` and ``voice bench quality --llm <name>`` take the model like any other. A local model cannot be
pulled again (there is no source to pull it from): if its file is lost, add it again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from voice.config.tomlfile import load_toml
from voice.models.catalogue import LOCAL_CATALOGUE_NAME, Catalogue, ModelEntry, ModelFile, parse_local
from voice.models.errors import ModelError
from voice.models.store import CHUNK_BYTES, FILE_MODE, GGUF_MAGIC, model_dir, stamp_record, write_stamp

_INVALID = re.compile(r"[^A-Za-z0-9._-]+")


def name_for(path: Path) -> str:
    """A catalogue name from a file name: ``Qwen2.5-1.5B-Instruct-Q4_K_M.gguf`` → ``qwen2.5-1.5b-instruct-q4_k_m``."""
    name = _INVALID.sub("-", path.stem).strip("-._").lower()
    if not name:
        raise ModelError(f"cannot make a model name from {path.name!r}; give one with --name")
    return name


def _check_gguf(path: Path) -> None:
    if not path.is_file():
        raise ModelError(f"{path} is not a file")
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"{path} is not a GGUF file (it starts with {magic!r}, a GGUF starts with {GGUF_MAGIC!r}); "
            "llama.cpp models are .gguf files"
        )


def _copy_hashing(src: Path, dest: Path) -> str:
    """Copy ``src`` to ``dest`` through a temporary file beside it; returns the sha256 of what was written."""
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as inp:
            while block := inp.read(CHUNK_BYTES):
                digest.update(block)
                out.write(block)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return digest.hexdigest()


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def _toml_entry(entry: ModelEntry) -> str:
    f = entry.files[0]
    q = json.dumps  # a JSON string is a valid TOML basic string for the characters used here
    return (
        "[[model]]\n"
        f"name = {q(entry.name)}\nkind = {q(entry.kind)}\ndefault = false\n"
        f"description = {q(entry.description)}\nlicence = {q(entry.licence)}\n"
        f"provenance = {q(entry.provenance)}\nsize_bytes = {entry.size_bytes}\n\n"
        "[[model.file]]\n"
        f"name = {q(f.name)}\nsha256 = {q(f.sha256)}\nsize_bytes = {f.size_bytes}\n"
    )


def _write_local(path: Path, entries: list[ModelEntry]) -> None:
    header = "# Models added with `voice models add` on this machine (not tracked by git; see voice/models/local.py).\n"
    text = header + "".join("\n" + _toml_entry(e) for e in entries)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(tmp, FILE_MODE)
    os.replace(tmp, path)


def _local_entries(catalogue_path: Path) -> list[ModelEntry]:
    path = catalogue_path.parent / LOCAL_CATALOGUE_NAME
    if not path.exists():
        return []
    return list(parse_local(load_toml(path, "local model list", ModelError), path))


def add_gguf(
    root: Path, catalogue_path: Path, source: Path, *, name: str | None = None, link: bool = False
) -> ModelEntry:
    """Register ``source`` (a GGUF file) as LLM ``name`` (default: from its file name); returns its entry.

    Raises :class:`ModelError` naming what is wrong: not a GGUF, a name already in the catalogue, a
    hard link across file systems. Nothing is registered unless the file was stored and hashed.
    """
    source = Path(source).expanduser()
    _check_gguf(source)
    name = name or name_for(source)
    catalogue = Catalogue.load(catalogue_path)
    if name in {e.name for e in catalogue.entries}:
        raise ModelError(
            f"a model named {name!r} already exists (voice models list); choose another with --name"
        )
    size = source.stat().st_size
    file_name = "model.gguf"
    stub = ModelEntry(
        name=name,
        kind="llm",
        default=False,
        description=f"local GGUF {source.name}",
        licence="see the model's own licence",
        provenance=f"added with voice models add from {source.resolve()} on {datetime.now(UTC):%Y-%m-%d}",
        files=(ModelFile(name=file_name, sha256="0" * 64, size_bytes=size, parts=(), url=None),),
        local=True,
    )
    directory = model_dir(root, stub)
    directory.mkdir(parents=True, exist_ok=False)  # a leftover folder of that name is not overwritten
    dest = directory / file_name
    try:
        if link:
            try:
                os.link(source, dest)
            except OSError as e:
                raise ModelError(f"cannot hard-link {source} into {directory} ({e}); add it without --link") from e
            sha = _hash(dest)
        else:
            sha = _copy_hashing(source, dest)
        f = ModelFile(name=file_name, sha256=sha, size_bytes=size, parts=(), url=None)
        entry = dataclasses.replace(stub, files=(f,))
        write_stamp(directory, {file_name: stamp_record(dest, f)})
        _write_local(catalogue_path.parent / LOCAL_CATALOGUE_NAME, [*_local_entries(catalogue_path), entry])
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return entry


def remove_local(root: Path, catalogue_path: Path, name: str) -> Path:
    """Forget local model ``name`` and delete its folder; returns the folder. Catalogue models are refused."""
    entries = _local_entries(catalogue_path)
    matches = [e for e in entries if e.name == name]
    if not matches:
        known = ", ".join(e.name for e in entries) or "none"
        raise ModelError(f"{name!r} is not a model added with voice models add (added models: {known})")
    directory = model_dir(root, matches[0])
    _write_local(catalogue_path.parent / LOCAL_CATALOGUE_NAME, [e for e in entries if e.name != name])
    shutil.rmtree(directory, ignore_errors=True)
    return directory
