"""The report of ``voice bench matrix`` (:mod:`voice.bench.matrix.measure`): the console lines and table, the
conclusions (which combination meets human turn-taking timing, with the quality bar), the Markdown and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.bench import plots
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link
from voice.bench.matrix.result import FailedRow, MatrixResult, MeasuredRow, Row
from voice.bench.stats import HUMAN_GAP_MS, TARGET_MS

STAGE_COLUMNS = ("endpoint_silence", "stt", "llm_ttft", "first_clause", "tts_first_audio")


def console_line(row: Row) -> str:
    if isinstance(row, FailedRow):
        return f"{row.name}: FAILED: {row.error}"
    return (
        f"{row.name}: mouth-to-ear p50 {row.p50_ms:.0f} ms, p95 {row.p95_ms:.0f} ms, WER {row.wer}, "
        f"LLM {row.llm_tps_p50} tok/s, RAM {row.ram_peak_mb:.0f} MB ({row.wall_s:.0f} s)"
    )


#: The quality columns of a matrix whose quality runs counted the four outcomes (else "right %" alone).
OUTCOME_COLUMNS = ("right %", "decline %", "asked again %", "wrong %")


def _outcomes_counted(rows: Sequence[Row]) -> bool:
    """Some combination's quality run counted the four outcomes."""
    return any(isinstance(r, MeasuredRow) and r.quality is not None and r.quality.outcomes for r in rows)


def _quality_cells(r: MeasuredRow, counted: bool) -> list[Any]:
    if not counted:
        return [r.quality_right_pct]
    shares = r.quality.outcomes if r.quality is not None else None
    return list(shares) if shares is not None else [r.quality_right_pct, None, None, None]


#: The columns of a matrix whose e2e results measured the work from the pause (:func:`_timed`).
WORK_COLUMNS = ("work from pause p50 / p95 ms", "of decision window p50 / p95")


def _timed(rows: Sequence[Row]) -> bool:
    """Some combination's e2e result measured the work from the pause (results made before it did not)."""
    return any(isinstance(r, MeasuredRow) and r.work_to_first_audio_p50_ms is not None for r in rows)


def _work_cells(r: MeasuredRow) -> list[Any]:
    """The work from the pause (p50 / p95 ms) and its share of the decision window (p50 / p95 %)."""
    p50, p95, window = r.work_to_first_audio_p50_ms, r.work_to_first_audio_p95_ms, r.decision_window_ms
    if p50 is None or p95 is None:
        return [None, None]
    share = None if window is None else f"{100 * p50 / window:.0f} % / {100 * p95 / window:.0f} %"
    return [f"{p50:.0f} / {p95:.0f}", share]


def _window_lines(ok: Sequence[MeasuredRow]) -> list[str]:
    """Which combinations have their reply ready within the decision window (their work hidden in the silence):
    the answer a window long enough for every model no longer gives through mouth-to-ear."""
    timed = [r for r in ok if r.work_to_first_audio_p95_ms is not None and r.decision_window_ms is not None]
    if not timed:
        return []

    def within(r: MeasuredRow, work_ms: float | None) -> bool:
        return work_ms is not None and r.decision_window_ms is not None and work_ms <= r.decision_window_ms

    p95 = [r.name for r in timed if within(r, r.work_to_first_audio_p95_ms)]
    p50 = [r.name for r in timed if within(r, r.work_to_first_audio_p50_ms)]
    return [
        f"Reply ready within the {_windows(timed)} ms decision window (work from the pause, hidden in the "
        f"silence) at p95: {', '.join(p95) or 'none'}; at p50: {', '.join(p50) or 'none'}. The others' work "
        "beyond it is latency."
    ]


def table(rows: Sequence[Row]) -> tuple[list[str], list[list[Any]]]:
    counted, timed = _outcomes_counted(rows), _timed(rows)
    header = [
        "STT",
        "LLM",
        "TTS",
        "m2e p50 ms",
        "m2e p95 ms",
        *[f"{s} p50" for s in STAGE_COLUMNS],
        *(WORK_COLUMNS if timed else ()),
        "WER",
        "LLM tok/s",
        "reply tokens",
        "RAM peak MB",
        "others' CPU %",
        f"≤{TARGET_MS} ms",
        f"≤{HUMAN_GAP_MS} ms",
        *(OUTCOME_COLUMNS if counted else ("right %",)),
        "meets turn-taking",
    ]
    body: list[list[Any]] = []
    for r in rows:
        if isinstance(r, FailedRow):
            body.append([r.stt, r.llm, r.tts, "failed", *[None] * (len(header) - 4)])
            continue
        body.append(
            [
                r.stt,
                r.llm,
                r.tts,
                r.p50_ms,
                r.p95_ms,
                *[r.stages_p50_ms.get(s) for s in STAGE_COLUMNS],
                *(_work_cells(r) if timed else ()),
                None if r.wer is None else f"{r.wer:.3f}",
                r.llm_tps_p50,
                r.reply_tokens_p50,
                r.ram_peak_mb,
                r.other_processes_cpu_percent,
                r.meets_target,
                r.meets_human_gap,
                *_quality_cells(r, counted),
                {True: "yes", False: "no", None: "—"}[r.meets_turn_taking],
            ]
        )
    return header, body


_OUTCOMES_NOTE = (
    "; every reply of the quality run is in exactly one of four outcomes, which add up to 100 %: **right**, "
    "else **asked again** (the STT was unsure and the reply asked to say it again), else **decline** (an honest "
    '"I can\'t …" or "I don\'t know" with no answer after it), else **wrong** (a wrong answer given)'
)


def _p50(r: MeasuredRow) -> float:
    """The mouth-to-ear p50 of a row :func:`conclusions` kept (one that has it)."""
    assert r.p50_ms is not None
    return r.p50_ms


def _right(r: MeasuredRow) -> float:
    """The quality of a row :func:`conclusions` rated (one that has it)."""
    assert r.quality is not None and r.quality.quality_right_pct is not None
    return r.quality.quality_right_pct


def conclusions(rows: Sequence[Row], quality_bar_pct: float | None = None) -> list[str]:
    ok = [r for r in rows if isinstance(r, MeasuredRow) and r.p50_ms is not None]
    if not ok:
        return ["no combination produced a measurement"]
    best = min(ok, key=_p50)
    meets = [r for r in ok if r.meets_target == "yes"]
    meets_p50 = [r for r in ok if r.meets_target in ("yes", "p50 only")]
    human = [r for r in ok if r.meets_human_gap in ("yes", "p50 only")]

    def name(r: MeasuredRow) -> str:
        return r.name

    out = [
        f"Fastest: {name(best)}, mouth-to-ear p50 {_p50(best):.0f} ms, p95 {best.p95_ms:.0f} ms "
        f"({_p50(best) / TARGET_MS:.1f}x the {TARGET_MS} ms target, {_p50(best) / HUMAN_GAP_MS:.1f}x "
        f"the ~{HUMAN_GAP_MS} ms human gap).",
        f"Meet {TARGET_MS} ms at p95: {', '.join(map(name, meets)) or 'none'}; at p50: "
        f"{', '.join(map(name, meets_p50)) or 'none'}.",
        f"Meet the ~{HUMAN_GAP_MS} ms human gap at p50: {', '.join(map(name, human)) or 'none'}.",
    ]
    out += _window_lines(ok)
    if quality_bar_pct is None:
        out.append("Judge speed next to quality: a model that answers badly can answer fast (see what each LLM said).")
        return out
    rated = [r for r in ok if r.quality_right_pct is not None]
    good = [r for r in rated if r.quality is not None and r.quality.meets_quality]
    both = [r for r in good if r.meets_turn_taking]
    out.append(
        f"Meet human turn-taking timing (the {TARGET_MS} ms target at p50 or better AND at least "
        f"{quality_bar_pct:g} % of the quality set right): {', '.join(map(name, both)) or 'none'}."
    )
    if good:
        pick, why = min(good, key=_p50), f"the fastest of those at least {quality_bar_pct:g} % right"
    elif [r for r in rated if r in meets_p50]:
        pick = max((r for r in rated if r in meets_p50), key=_right)
        why = f"none is {quality_bar_pct:g} % right; the most accurate within {TARGET_MS} ms at p50"
    elif rated:
        pick, why = max(rated, key=_right), "none is fast or right enough; the most accurate"
    else:
        return [*out, "No LLM could be rated for quality (see the quality logs)."]
    out.append(
        f"Best trade-off: {name(pick)} ({why}): {_right(pick):g} % right, mouth-to-ear p50 "
        f"{_p50(pick):.0f} ms, p95 {pick.p95_ms:.0f} ms."
    )
    return out


def markdown(result: MatrixResult, png: Path | None, md: Path | None) -> str:
    meta, rows = result.meta, result.rows
    out = [
        "# Model matrix: which combination meets human turn-taking timing?",
        "",
        machine_markdown(meta.machine),
        "",
        f"Every combination ran `voice bench e2e` in its own process, one after another: "
        f"{len(meta.clips)} clips from `{meta.speech_dir}`, {meta.repeats} repeats each after "
        f"{meta.warmup} warm-up turn(s), each clip in its own session, in real time. Verdicts: **yes** = p95 "
        "within the limit, **p50 only** = the median turn is within it but the slow tail is not, **no** = the "
        f"median turn misses it. Targets: {TARGET_MS} ms (the project's) and ~{HUMAN_GAP_MS} ms, the typical gap "
        "between turns in human conversation (Stivers et al. 2009, PNAS).",
        "",
        "## Answer",
        "",
        *[f"- {line}" for line in conclusions(rows, meta.quality_bar_pct)],
        "",
    ]
    if png is not None:
        out += [f"![matrix]({relative_link(png, md) if md else png.as_posix()})", ""]
    header, body = table(rows)
    counted = _outcomes_counted(rows)
    align = "lll" + "r" * (len(header) - 4) + "l" if counted else "lll" + "r" * (len(header) - 5) + "ll"
    out += [
        "## Results (ms unless stated)",
        "",
        md_table(header, body, align=align),
        "",
        "- **m2e** = mouth-to-ear measured at the client (first audible reply sample − the clip's speech end); "
        "stage columns are p50s of the server's stages (they need not add up to the m2e p50).",
        *([_WORK_NOTE.format(windows=_windows(rows))] if _timed(rows) else []),
        "- **WER** = STT word error rate over all clips pooled (what the assistant heard vs transcripts.tsv).",
        f"- **right %** = the share of the quality question set answered right in {meta.quality_mode} "
        "mode (`voice bench quality`, greedy; text mode: the LLM alone, so the same for every STT; spoken mode: "
        "the questions spoken by espeak-ng through the whole loop with that STT; an honest refusal is right "
        "where the item expects one)" + (_OUTCOMES_NOTE if counted else "") + "; **meets turn-taking** = the "
        f"{TARGET_MS} ms target met at p50 or better and right % at or over the bar "
        f"({meta.quality_bar_pct if meta.quality_bar_pct is not None else 'not measured'}).",
        "- **LLM tok/s** = p50 over turns of 1000 / mean inter-token latency, measured inside the running "
        "pipeline (TTS interleaves with decoding through the compute gate, so it is lower than alone).",
        "- **RAM peak** = `ru_maxrss` of the combination's process (models + server + client), from `wait4`.",
        "- **others' CPU %** = share of the machine's CPU time other processes used while the combination ran "
        "(with `--max-load`, turns they disturbed by more than 10% were spoken again: "
        + ", ".join(f"{r.stt}+{r.llm}: {r.redone_turns or 0}" for r in rows if isinstance(r, MeasuredRow))
        + " turns redone).",
        "",
        "## What the LLMs said (quality next to speed)",
        "",
        "The first measured reply of each combination to each clip. `gemma3-270m` is a *base* model (not "
        "instruction tuned) with no chat template: the backend falls back to a plain `User:`/`Assistant:` "
        "prompt and it continues text rather than answering — judge its speed with that in mind.",
        "",
    ]
    measured = [r for r in rows if isinstance(r, MeasuredRow)]
    clips = list(dict.fromkeys(c for r in measured for c in r.examples))
    seen_llm: set[str] = set()
    for r in measured:
        if r.llm in seen_llm:
            continue
        seen_llm.add(r.llm)
        out += [f"**{r.llm}** (with {r.stt}):", ""]
        out += [f"- {Path(c).stem}: {_clip_text(r.examples.get(c, '—'))!r}" for c in clips]
        out.append("")
    failed = [r for r in rows if isinstance(r, FailedRow)]
    if failed:
        out += [
            "## Failed",
            "",
            *[f"- {r.name}: {r.error}" for r in failed],
            "",
        ]
    return "\n".join(out)


_WORK_NOTE = (
    "- **work from pause** = the server's work on the reply, from its start to its first audio being ready (the "
    "TTS's first chunk), p50 / p95 over turns: a speculative reply starts at the pause (`[turn] "
    "speculate_after_ms` of silence), another at the endpoint. The stages after the endpoint are 0 when that "
    "work ends inside the silence, so only this tells a fast model from a slow one there. **of decision window** "
    "= that work as a share of the silence between the pause and the end of a turn scored complete: `[turn] "
    "complete_silence_ms` − `[turn] speculate_after_ms` (`[vad] silence_ms` − `speculate_after_ms` without an "
    "end-of-turn model) of the configuration the combination ran with ({windows} ms). Over 100 %, the excess "
    "is latency; a shorter window would show it (a turn scored unfinished waits longer, and a pause found on "
    "energy starts the work earlier)."
)


def _windows(rows: Sequence[Row]) -> str:
    """The decision windows of the rows (one, unless their configurations differed), or ``unknown``."""
    found = sorted({w for r in rows if isinstance(r, MeasuredRow) and (w := r.decision_window_ms) is not None})
    return " / ".join(f"{w:g}" for w in found) or "unknown"


def _clip_text(text: str, n: int = 200) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def plot(result: MatrixResult, path: Path) -> None:
    rows = [r for r in result.rows if isinstance(r, MeasuredRow)]
    m = result.meta.machine
    plots.stacked_stages(
        path,
        [f"{r.stt}\n{r.llm}" for r in rows],
        [r.stages_p50_ms for r in rows],
        list(dict.fromkeys(k for r in rows for k in r.stages_p50_ms)),
        [r.p50_ms for r in rows],
        f"Mouth-to-ear by model combination (stage p50s stacked; TTS {', '.join(result.meta.models['tts'])})"
        f"\n{m.cpu_model}, {m.cores_usable} cores, {m.date}",
        measured_label="mouth-to-ear p50 (client)",
        extra_label="rest of the p50 (not in stage p50s)",
        upper=[r.p95_ms for r in rows],
        upper_label="mouth-to-ear p95",
    )
