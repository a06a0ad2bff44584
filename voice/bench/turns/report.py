"""The report of ``voice bench turns``: per folder and setting, mouth-to-ear beside the pauses cut short, the
config's own point, the setting a stated rule picks, and the chart of mouth-to-ear against pauses cut (pure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link
from voice.bench.turns.result import TurnsResult, TurnsRow

#: The issue's bar: mouth-to-ear p50 and p95 at most these, and this share of turns within 250 ms.
BAR_P50_MS, BAR_P95_MS, BAR_WITHIN_250_PCT = 300.0, 600.0, 30.0


def _share(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "–"


def _pair(a: float | None, b: float | None) -> str:
    return "–" if a is None or b is None else f"{a:.0f} / {b:.0f}"


def table(result: TurnsResult) -> tuple[list[str], list[list[Any]]]:
    """The table's header and a row per folder and setting."""
    pauses = [str(p) for p in result.pauses_ms]
    header = ["recordings", "setting", "m2e p50 ms", "m2e p95 ms", "≤ 250 ms", "≤ 500 ms",
              "endpoint_silence p50 / p95", "work from the pause p50", "end-of-turn delay p50 / p95",
              *[f"cut, {p} ms pauses" for p in pauses], "long waits"]  # fmt: skip
    rows: list[list[Any]] = []
    for s in result.sets:
        for r in s.rows:
            default = " (config)" if r.variant == result.default else ""
            rows.append([
                Path(s.speech_dir).name, r.variant + default, r.m2e_p50_ms, r.m2e_p95_ms,
                _share(r.within_250_ms, r.turns), _share(r.within_500_ms, r.turns),
                _pair(r.endpoint_silence_p50_ms, r.endpoint_silence_p95_ms), r.work_p50_ms,
                _pair(r.delay_p50_ms, r.delay_p95_ms),
                *[_share(r.cut[p], r.tested[p]) if p in r.cut else "–" for p in pauses],
                _share(r.long_waits, r.finished_turns or 0) if r.long_waits is not None else "–",
            ])  # fmt: skip
    return header, rows


def _by_variant(result: TurnsResult) -> dict[str, list[TurnsRow]]:
    """Each setting's rows over the folders, for the settings measured on every folder."""
    rows: dict[str, list[TurnsRow]] = {v: [] for v in result.variants}
    for s in result.sets:
        for r in s.rows:
            if r.error is None and r.m2e_p50_ms is not None:
                rows[r.variant].append(r)
    return {v: rs for v, rs in rows.items() if len(rs) == len(result.sets)}


def rule_pick(result: TurnsResult) -> str | None:
    """The fastest setting (mouth-to-ear p50 summed over the folders) that cuts no pause under 300 ms on any folder
    and, where the config's point was measured, no larger share of the pauses of 300 ms and more than it does on
    that folder (issue 30's bar: cut-offs no worse than the config's); None when no setting qualifies."""
    measured = _by_variant(result)
    reference = measured.get(result.default) if result.default else None

    def qualifies(rows: list[TurnsRow]) -> bool:
        if any(r.cut_pct(True) for r in rows):
            return False
        if reference is None:
            return True
        pairs = zip(rows, reference, strict=True)
        return all((r.cut_pct(False) or 0.0) <= (ref.cut_pct(False) or 0.0) for r, ref in pairs)

    keep = {v: rs for v, rs in measured.items() if qualifies(rs)}
    return min(keep, key=lambda v: sum(r.m2e_p50_ms or 0.0 for r in keep[v])) if keep else None


def meets_bar(rows: list[TurnsRow]) -> bool:
    """Mouth-to-ear p50 ≤ 300 ms and p95 ≤ 600 ms on every folder, and 30 % of turns within 250 ms."""
    return all(
        r.m2e_p50_ms is not None and r.m2e_p95_ms is not None and r.m2e_p50_ms <= BAR_P50_MS
        and r.m2e_p95_ms <= BAR_P95_MS and r.turns and 100.0 * r.within_250_ms / r.turns >= BAR_WITHIN_250_PCT
        for r in rows
    )  # fmt: skip


def _point(name: str, rows: list[TurnsRow], folders: list[str]) -> str:
    parts = [
        f"{f}: mouth-to-ear p50 {r.m2e_p50_ms} / p95 {r.m2e_p95_ms} ms, pauses under 300 ms cut {r.cut_pct(True)} %, "
        f"300 ms and more {r.cut_pct(False)} %"
        for f, r in zip(folders, rows, strict=True)
    ]
    return f"**{name}**: " + "; ".join(parts)


def conclusions(result: TurnsResult) -> list[str]:
    measured = _by_variant(result)
    folders = [Path(s.speech_dir).name for s in result.sets]
    out = []
    if result.default in measured:
        out.append(f"- The config's point (the setting with no keys of its own): {_point(result.default, measured[result.default], folders)}.")  # noqa: E501
    else:
        out.append("- The config's own point is not among the settings measured on every folder.")
    pick = rule_pick(result)
    if pick is None:
        out.append("- The rule (the fastest setting that cuts no pause under 300 ms on any folder, and no more of the "
                   "longer pauses than the config's point) picks none.")  # fmt: skip
    else:
        same = " It is the config's." if pick == result.default else " It is not the config's point."
        point = _point(pick, measured[pick], folders)
        out.append(f"- The rule (the fastest mouth-to-ear p50, summed over the folders, of the settings that cut no "
                   f"pause under 300 ms on any folder and no larger share of the pauses of 300 ms and more than the "
                   f"config's point) picks {point}.{same}")  # fmt: skip
    met = [v for v, rs in measured.items() if meets_bar(rs)]
    out.append(
        f"- Mouth-to-ear p50 ≤ {BAR_P50_MS:.0f} ms, p95 ≤ {BAR_P95_MS:.0f} ms and {BAR_WITHIN_250_PCT:.0f} % of turns "
        f"within 250 ms on every folder: {', '.join(met) if met else 'no setting'}."
    )
    return out


def markdown(result: TurnsResult, png: Path | None, md: Path | None) -> str:
    header, rows = table(result)
    folders = ", ".join(f"`{s.speech_dir}` ({len(s.clips)} clips)" for s in result.sets)
    out = [
        f"# End-of-turn settings: mouth-to-ear against pauses cut short ({result.machine.date})", "",
        f"Settings: `{result.variants_file}`, each a name and `[turn]` / `[vad]` keys over the config's. Folders: "
        f"{folders}. Per folder: `voice bench pauses --variants` (offline Silero VAD and the server's endpointer, "
        f"mid-sentence pauses of {', '.join(str(p) for p in result.pauses_ms)} ms spliced into every clip; the "
        f"pause's words reach the endpointer {result.text_delay_ms:.0f} ms of audio after it) and, per setting, "
        f"`voice bench e2e --repeats {result.repeats}` in its own process with that setting's config (the whole "
        "loop, real sockets, real time). The runs went one after another in one sitting.", "",
        "## Answer", "", *conclusions(result), "",
    ]  # fmt: skip
    if png is not None:
        out += [f"![turn-taking]({relative_link(png, md) if md else png.as_posix()})", ""]
    out += [
        md_table(header, rows), "",
        "- **m2e** = mouth-to-ear at the client (first audible reply sample − the clip's speech end), over the e2e "
        "run's turns; **≤ 250 / ≤ 500 ms** = turns within that, of the turns measured.",
        "- **endpoint_silence** = the server's wait for the end of the turn (its stage); **work from the pause** = "
        "the reply's work from its start to its first audio ready (a speculative reply starts at the pause).",
        "- **end-of-turn delay** = offline, the endpoint − where the speech of the whole clip ended (the VAD's lag + "
        "the silence waited); **cut** = clips whose turn ended inside a mid-sentence pause of that length, of the "
        "clips tested at it; **long waits** = finished clips that waited the end-of-turn model's long window.",
        "",
        machine_markdown(result.machine),
    ]  # fmt: skip
    return "\n".join(out)


def plot(result: TurnsResult, path: Path) -> None:
    """Every setting on every folder: mouth-to-ear p50 against the share of pauses cut short (filled: under
    300 ms; open: 300 ms and more)."""
    from voice.bench.plots import tradeoff

    points = [
        (f"{r.variant} [{Path(s.speech_dir).name}]", r.m2e_p50_ms, r.cut_pct(True) or 0.0, r.cut_pct(False) or 0.0)
        for s in result.sets
        for r in s.rows
        if r.m2e_p50_ms is not None
    ]
    tradeoff(
        path,
        points,
        "End-of-turn settings: mouth-to-ear against pauses cut short",
        "mouth-to-ear p50, ms (whole loop, real time)",
        "pauses cut short, % (filled: under 300 ms; open: 300 ms and more)",
    )
