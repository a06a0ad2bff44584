"""PNG charts of the benchmarks (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from voice.bench.stats import HUMAN_GAP_MS, TARGET_MS

# A fixed colour per stage, so every chart reads the same.
STAGE_COLOURS = {
    "endpoint_silence": "#9e9e9e",
    "stt_queue": "#d7ccc8",
    "stt": "#1f77b4",
    "llm_queue": "#ffe0b2",
    "llm_ttft": "#ff7f0e",
    "first_clause": "#ffbb78",
    "tts_queue": "#c8e6c9",
    "tts_first_audio": "#2ca02c",
    "send": "#9467bd",
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _target_lines(ax: Any) -> None:
    ax.axhline(TARGET_MS, color="#d62728", linestyle="--", linewidth=1.2, label=f"{TARGET_MS} ms target")
    ax.axhline(
        HUMAN_GAP_MS, color="#2ca02c", linestyle=":", linewidth=1.5, label=f"~{HUMAN_GAP_MS} ms human gap"
    )


def _save(fig: Any, path: Path) -> None:
    plt = _pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def stacked_stages(
    path: Path,
    labels: Sequence[str],
    stages: Sequence[dict[str, float]],
    stage_order: Sequence[str],
    measured: Sequence[float | None],
    title: str,
    *,
    measured_label: str = "client mouth-to-ear",
    extra_label: str = "not in the stage log (reconciliation)",
    xlabel: str = "",
    upper: Sequence[float | None] | None = None,
    upper_label: str = "p95",
) -> None:
    """One bar per item: server stages stacked, a hatched segment for what the client heard beyond their
    sum, and a marker at the client-measured value; target lines at 500 ms and 200 ms."""
    plt = _pyplot()
    n = len(labels)
    fig, ax = plt.subplots(figsize=(max(7.0, 0.42 * n + 3), 5.2))
    xs = list(range(n))
    bottoms = [0.0] * n
    for name in stage_order:
        vals = [s.get(name, 0.0) for s in stages]
        if not any(vals):
            continue
        ax.bar(xs, vals, bottom=bottoms, color=STAGE_COLOURS.get(name), label=name, width=0.75)
        bottoms = [b + v for b, v in zip(bottoms, vals, strict=True)]
    gaps = [
        max(0.0, (m or 0.0) - b) if m is not None else 0.0 for m, b in zip(measured, bottoms, strict=True)
    ]
    if any(g > 0 for g in gaps):
        ax.bar(
            xs,
            gaps,
            bottom=bottoms,
            color="white",
            edgecolor="#555555",
            hatch="///",
            width=0.75,
            label=extra_label,
        )
    mx = [x for x, m in zip(xs, measured, strict=True) if m is not None]
    my = [m for m in measured if m is not None]
    ax.scatter(mx, my, marker="_", s=260, color="black", linewidths=2.2, zorder=5, label=measured_label)
    if upper is not None:
        ux = [x for x, u in zip(xs, upper, strict=True) if u is not None]
        uy = [u for u in upper if u is not None]
        ax.scatter(ux, uy, marker="v", s=40, color="#444444", zorder=5, label=upper_label)
    _target_lines(ax)
    ax.set_xticks(xs)
    longest = max((len(line) for label in labels for line in label.splitlines()), default=0)
    rotate = n > 6 or longest * n > 70
    ax.set_xticklabels(
        labels, rotation=60 if n > 6 else 30 if rotate else 0, ha="right" if rotate else "center", fontsize=8
    )
    ax.set_ylabel("milliseconds")
    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


def lines(
    path: Path,
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    logy: bool = False,
    styles: dict[str, str] | None = None,
    hlines: Mapping[str, float] | None = None,
) -> None:
    """Several named (x, y) series as lines with markers; optional labelled horizontal lines."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for name, (x, y) in series.items():
        ax.plot(list(x), list(y), (styles or {}).get(name, "o-"), label=name)
    for label, value in (hlines or {}).items():
        ax.axhline(value, color="#d62728", linestyle=":", linewidth=1.2, label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    _save(fig, path)


def grouped_bars(
    path: Path,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float]],
    title: str,
    ylabel: str,
    *,
    reference: float | None = None,
    reference_label: str = "",
    annotate: bool = True,
) -> None:
    """Bars grouped by ``groups``, one bar per series; an optional horizontal reference line."""
    plt = _pyplot()
    n, k = len(groups), max(1, len(series))
    width = 0.8 / k
    fig, ax = plt.subplots(figsize=(max(7.0, 1.1 * n * k / 2 + 3), 4.8))
    for j, (name, vals) in enumerate(series.items()):
        xs = [i + (j - (k - 1) / 2) * width for i in range(n)]
        bars = ax.bar(xs, list(vals), width=width, label=name)
        if annotate:
            for b, v in zip(bars, vals, strict=True):
                x = b.get_x() + b.get_width() / 2
                ax.annotate(f"{v:.2g}", (x, b.get_height()), ha="center", va="bottom", fontsize=7)
    if reference is not None:
        ax.axhline(reference, color="black", linestyle="--", linewidth=1, label=reference_label)
    ax.set_xticks(range(n))
    ax.set_xticklabels(groups, rotation=20 if n > 4 else 0, ha="right" if n > 4 else "center", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def tradeoff(
    path: Path,
    points: Sequence[tuple[str, float, float, float]],
    title: str,
    xlabel: str,
    ylabel: str,
) -> None:
    """A labelled point per setting: (name, x, y, y2), y as filled markers and y2 as open ones on the same axes
    (e.g. the end-of-turn delay p50 against the share of short and of long mid-sentence pauses cut short)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 5.4))
    for i, (name, x, y, y2) in enumerate(points):
        colour = f"C{i % 10}"
        ax.plot([x], [y], "o", color=colour, markersize=8, label=f"{i + 1}. {name}")
        ax.plot([x], [y2], "s", color=colour, markersize=7, markerfacecolor="none")
        ax.annotate(str(i + 1), (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.axvline(HUMAN_GAP_MS, color="#2ca02c", linestyle=":", linewidth=1.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)
