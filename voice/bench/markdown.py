"""Small helpers for the Markdown and console tables every bench writes."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from voice.bench.stats import Described


def fixed(x: float | None, digits: int = 3) -> str:
    """``x`` with ``digits`` decimals for a table cell (md_table shows floats with one), "—" for None."""
    return "—" if x is None else f"{x:.{digits}f}"


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None) -> str:
    """A GitHub Markdown table; ``align`` is one letter per column (``l`` / ``r``), default numbers right."""

    def cell(v: Any) -> str:
        if v is None:
            return "—"
        if isinstance(v, float):
            return f"{v:.1f}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"table row has {len(row)} cells, header {len(header)}: {row!r}")
    if align is not None and len(align) != len(header):
        raise ValueError(f"align {align!r} has {len(align)} letters for {len(header)} columns")
    aligns = align or "".join(
        "r" if rows and isinstance(rows[0][i], int | float) else "l" for i in range(len(header))
    )
    sep = ["---:" if a == "r" else "---" for a in aligns]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def text_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain fixed-width table for the console."""

    def cell(v: Any) -> str:
        if v is None:
            return "—"
        if isinstance(v, float):
            return f"{v:.1f}"
        return str(v)

    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"table row has {len(row)} cells, header {len(header)}: {row!r}")
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(header)]
    numeric = [bool(rows) and isinstance(rows[0][i], int | float) for i in range(len(header))]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric, strict=True)
        )

    return "\n".join([line(list(header)), line(["-" * w for w in widths]), *(line(r) for r in cells)])


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def write_json(path: Path, data: Any) -> None:
    """``data`` as indented JSON; a typed value in it (e.g. the machine record in a bench's JSON result) as its
    ``to_json()``."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=_typed_json))


def _typed_json(value: object) -> Any:
    to_json = getattr(value, "to_json", None)
    if to_json is None:
        raise TypeError(f"{type(value).__name__} is not JSON serializable")
    return to_json()


def relative_link(target: Path, from_file: Path) -> str:
    """A link to ``target`` usable from the Markdown file ``from_file``."""
    try:
        return Path(os.path.relpath(target.resolve(), from_file.resolve().parent)).as_posix()
    except ValueError:  # pragma: no cover - other drive on Windows
        return target.as_posix()


class JsonResult(Protocol):
    """A typed bench result: its JSON (the one place where it is a ``dict[str, Any]``)."""

    def to_json(self) -> dict[str, Any]: ...


def fields_json(obj: object) -> dict[str, Any]:
    """A result dataclass's own fields in order, tuples as lists (as JSON holds them), a sample's statistics
    (:class:`~voice.bench.stats.Described`, a leaf of most results) as their JSON, other nested values as they
    are: the start of most ``to_json`` methods."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):  # type: ignore[arg-type]
        value = getattr(obj, f.name)
        if isinstance(value, Described):
            value = value.to_json()
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


Result = TypeVar("Result", bound="dict[str, Any] | JsonResult")
"""A bench's result: a typed one (written through its ``to_json``) or, for the benches not typed yet, its JSON."""


def write_outputs(
    result: Result,
    *,
    png_path: Path | None,
    md_path: Path | None,
    json_path: Path | None,
    plot: Callable[[Result, Path], object] | None,
    markdown: Callable[[Result, Path | None, Path], str],
) -> None:
    """Write a bench result as PNG, Markdown and JSON (each only when its path is given), saying where.
    ``plot=None``: the bench draws no chart (a PNG path is ignored)."""
    if png_path is not None and plot is not None:
        plot(result, png_path)
        print(f"wrote {png_path}")
    if md_path is not None:
        write_text(md_path, markdown(result, png_path, md_path))
        print(f"wrote {md_path}")
    if json_path is not None:
        write_json(json_path, result if isinstance(result, dict) else result.to_json())
        print(f"wrote {json_path}")


def ratio_of(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded to 2 places; None when either is missing or zero."""
    return round(a / b, 2) if a and b else None


def ratio(v: float | None) -> str:
    """A speed or slowdown ratio for tables ("1.23x"; "—" when unknown)."""
    return "—" if v is None else f"{v:.2f}x"
