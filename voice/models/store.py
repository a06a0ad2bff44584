"""Where model files live and whether they are sound: paths, ``locate``, sha256, the verification stamp.

Files are stored as ``<root>/<kind>/<name>/<file name>``, where ``root`` defaults to the repository's
``models`` folder and is a parameter of every function. A verification stamp (``.verified.json`` in each
model folder) records sha256 + size + mtime_ns per file, so big files are not hashed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from voice.models.catalogue import STAMP_NAME, Catalogue, ModelEntry, ModelFile
from voice.models.errors import ModelMissingError, ModelPathError

CHUNK_BYTES = 1 << 20
GGUF_MAGIC = b"GGUF"
#: Model files (and the stamp) are ordinary readable files (``mkstemp`` creates 0600).
FILE_MODE = 0o644


def model_dir(root: Path, entry: ModelEntry) -> Path:
    """``root/kind/name`` (names are checked by the catalogue, so this stays inside root)."""
    return Path(root) / entry.kind / entry.name


def resolve_inside(root: Path, path: Path | str) -> Path:
    """Resolve ``path`` (relative paths are relative to ``root``; symlinks are followed).

    Raises :class:`ModelPathError` naming the path if the result is not inside ``root``.
    """
    root_resolved = Path(root).resolve()
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = root_resolved / candidate
    resolved = candidate.resolve()
    if not resolved.is_relative_to(root_resolved):
        raise ModelPathError(
            f"path {str(path)!r} resolves to {resolved}, which is outside the models folder {root_resolved}"
        )
    return resolved


def pull_hint(entry: ModelEntry) -> str:
    if entry.local:
        return f"it was added from a local file: add it again (voice models remove {entry.name}, voice models add)"
    return f"run: voice models pull {entry.name}"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK_BYTES):
            digest.update(block)
    return digest.hexdigest()


def locate(root: Path, entry: ModelEntry, verify: bool = False) -> Path:
    """Return the model's directory after checking its files.

    Every file must exist with the catalogue's size (cheap); with ``verify=True`` its sha256 is
    checked too. Otherwise :class:`ModelMissingError` names each bad file and the pull command.
    """
    directory = model_dir(root, entry)
    problems: list[str] = []
    for f in entry.files:
        path = directory / f.name
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            problems.append(f"{path} is missing")
            continue
        if not path.is_file():
            problems.append(f"{path} is not a regular file")
        elif size != f.size_bytes:
            problems.append(f"{path} has {size} bytes, expected {f.size_bytes} (incomplete?)")
        elif verify:
            actual = sha256_file(path)
            if actual != f.sha256:
                problems.append(f"{path} is corrupt: sha256 {actual}, expected {f.sha256}")
    if problems:
        lines = "\n  ".join(problems)
        raise ModelMissingError(f"{entry.kind} model {entry.name!r} is not ready:\n  {lines}\n{pull_hint(entry)}")
    return directory


def is_present(root: Path, entry: ModelEntry) -> bool:
    try:
        locate(root, entry)
    except ModelMissingError:
        return False
    return True


def find_gguf(model_dir: Path, name: str) -> Path:
    """The model folder's GGUF file (the first by name), checked to start with the GGUF magic."""
    files = sorted(model_dir.glob("*.gguf"))
    if not files:
        raise ModelMissingError(f"no .gguf file in {model_dir}; run: voice models pull {name}")
    path = files[0]
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise ModelMissingError(
            f"{path} is not a GGUF file (magic {magic!r}, expected {GGUF_MAGIC!r}); "
            f"run: voice models pull {name}"
        )
    return path


# --------------------------------------------------------------------------------------------
# Verification stamp: sha256 + size + mtime_ns per file, so big files are not re-hashed.

Stamp = dict[str, dict[str, Any]]


def read_stamp(directory: Path) -> Stamp:
    try:
        data = json.loads((directory / STAMP_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(v, dict)}


def write_stamp(directory: Path, stamp: Stamp) -> None:
    text = json.dumps({"files": stamp}, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=STAMP_NAME + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, directory / STAMP_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def stamp_record(path: Path, f: ModelFile) -> dict[str, Any]:
    st = path.stat()
    return {"sha256": f.sha256, "size_bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def stamp_matches(path: Path, f: ModelFile, stamp: Stamp) -> bool:
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    return st.st_size == f.size_bytes and stamp.get(f.name) == {
        "sha256": f.sha256,
        "size_bytes": st.st_size,
        "mtime_ns": st.st_mtime_ns,
    }


# --------------------------------------------------------------------------------------------
# Listing


def format_table(root: Path, catalogue: Catalogue) -> str:
    """A plain-text table for ``voice models list``."""
    header = ("NAME", "KIND", "DEFAULT", "SIZE MB", "LICENCE", "PRESENT", "DIR")
    rows = [header]
    for e in catalogue.entries:
        rows.append(
            (
                e.name,
                e.kind,
                "yes" if e.default else "",
                f"{e.size_bytes / 1_000_000:.1f}",
                e.licence,
                "yes" if is_present(root, e) else "no",
                str(model_dir(root, e)),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    right = {3}
    lines = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
