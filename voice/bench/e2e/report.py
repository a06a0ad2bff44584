"""Console table, Markdown report and PNG of ``voice bench e2e``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voice.bench import plots
from voice.bench.e2e.measure import verdict_lines
from voice.bench.e2e.result import E2eResult, E2eSummary
from voice.bench.e2e.turn import TurnResult, stage_names
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link, text_table
from voice.bench.stats import HUMAN_GAP_MS, TARGET_MS, fmt_ms

ROW_HEADER = (
    f"{'turn':<34} {'m2e ms':>7} {'server':>7} {'recon':>6} {'turns':>5} {'WERn':>5} {'tok':>4} "
    f"{'reply s':>7}  transcript → reply"
)


def split_line(s: E2eSummary) -> str:
    """False endpoints, and what the user heard first on the clips heard as several turns."""
    first = s.split_first_answer_p50_ms
    return (
        f"{s.false_endpoints} false endpoint(s); the first answer came p50 {fmt_ms(first)} ms after the pause "
        f"the server took for an end, and talked over the user in {s.split_turns_interrupting} turn(s)"
    )


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def console_row(t: TurnResult) -> str:
    """One line per turn while the bench runs."""
    label = t.label + (" [first after load]" if t.first_after_load else "")
    if t.mouth_to_ear_ms is None:
        return f"{_short(label, 34):<34} {t.outcome}: {t.error or 'no reply audio'}"
    wer = "—" if t.wer_normalized is None else f"{t.wer_normalized:.2f}"
    tok = "—" if t.reply_tokens is None else str(t.reply_tokens)
    audio = "—" if t.reply_audio_s is None else f"{t.reply_audio_s:.1f}"
    text = f"{_short(t.transcript, 28)!r} → {_short(t.reply_text, 40)!r}"
    row = (
        f"{_short(label, 34):<34} {fmt_ms(t.mouth_to_ear_ms, 7)} {fmt_ms(t.server_total_ms, 7)} "
        f"{fmt_ms(t.reconciliation_error_ms, 6)} {t.turns_heard:>5} {wer:>5} {tok:>4} {audio:>7}  {text}"
    )
    row += f"  UNCERTAIN: {t.uncertain}" if t.uncertain else ""
    return row + (f"  BURST: {t.burst_why}" if t.burst else "")


def _first_name(result: E2eResult) -> str:
    if result.meta.models:
        return "first turn after the models loaded"
    return "first turn of this run (external server: it may have been warm already)"


def _stat_rows(s: E2eSummary) -> list[list[Any]]:
    rows: list[list[Any]] = [["mouth-to-ear (client)", s.p50_ms, s.p95_ms, s.max_ms]]
    described = [
        *[(f"  {name}", d) for name, d in s.stages.items()],
        ("sum of server stages", s.server_total),
        ("reconciliation error", s.reconciliation_error),
        ("  speech-end offset (VAD − clip)", s.speech_end_offset),
        ("  reply lead silence", s.reply_lead_silence),
        ("  residual", s.residual),
        ("LLM TTFT", s.llm_ttft),
        ("LLM ITL (mean per turn)", s.llm_itl),
    ]
    if s.work_to_first_audio is not None:  # a result made before it has none: its table stays as it was
        described.append(("work from the pause to first audio", s.work_to_first_audio))
    rows += [[name, d.p50, d.p95, d.max] for name, d in described]
    return rows


def _wer_pair(s: E2eSummary) -> str:
    raw = "—" if s.wer is None else f"{s.wer:.3f}"
    norm = "—" if s.wer_normalized is None else f"{s.wer_normalized:.3f}"
    return f"{norm} normalized (raw {raw})"


def burst_lines(result: E2eResult) -> list[str]:
    """The buffering check: how many turns' reply audio arrived in a burst (and the compared routes)."""
    s = result.summary()
    lines = []
    if s.n_burst:
        lines.append(
            f"BUFFERED: {s.n_burst} of {s.n_burst_judged} judged turns received their reply audio in a burst "
            "though the server sent it over time: something on the path holds the stream back "
            "(see docs/deploy/README.md)"
        )
    elif s.n_burst_judged:
        lines.append(f"reply audio arrived as it was sent in all {s.n_burst_judged} judged turns (no burst)")
    if result.direct:
        from voice.bench.e2e.compare import added_latency, compare_lines

        direct = [t for t in result.direct if t.phase == "measured"]
        n_direct = sum(1 for t in direct if t.burst)
        lines += compare_lines(added_latency(result.measured, direct), s.n_burst, n_direct)
    return lines


def console_summary(result: E2eResult) -> str:
    s = result.summary()
    lines = [
        "",
        f"mouth-to-ear over {s.n_measured} measured turns ({s.n_failed} failed, {s.n_uncertain} "
        "uncertain and left out), milliseconds:",
        text_table(["", "p50", "p95", "max"], _stat_rows(s)),
        "",
    ]
    first = result.first_turn
    if first is not None:
        tag = "included in" if first.phase == "measured" else "not in"
        lines.append(
            f"{_first_name(result)} ({first.clip}, {tag} the statistics): mouth-to-ear "
            f"{fmt_ms(first.mouth_to_ear_ms)} ms, server stages {fmt_ms(first.server_total_ms)} ms"
        )
    wer = _wer_pair(s)
    tok = s.reply_tokens.p50
    audio = s.reply_audio_s.p50
    tps = s.llm_tps.p50
    lines.append(
        f"STT word error rate {wer} (all clips pooled); reply p50 {fmt_ms(tok)} tokens, "
        f"{audio if audio is not None else '—'} s of audio; LLM p50 {fmt_ms(tps)} tokens/s"
    )
    if s.split_clips:
        lines.append(f"heard as more than one turn (last turn measured): {', '.join(s.split_clips)}")
        lines.append(split_line(s))
    lines += burst_lines(result)
    lines += verdict_lines(s)
    return "\n".join(lines)


def _turn_rows(turns: list[TurnResult], stages: list[str]) -> list[list[Any]]:
    rows = []
    for t in turns:
        rows.append(
            [
                t.label,
                t.mouth_to_ear_ms,
                *[t.stages_ms.get(s) for s in stages],
                t.server_total_ms,
                t.reconciliation_error_ms,
                t.speech_end_offset_ms,
                t.reply_lead_silence_ms,
                t.residual_ms,
                t.turns_heard,
                t.outcome + (" (uncertain)" if t.uncertain else ""),
            ]
        )
    return rows


def _heard_and_said(turns: list[TurnResult]) -> list[str]:
    """The table of each measured turn's words, with the end-of-turn evidence when the server reported it (results
    made before it keep the table they had)."""
    evidence = any(t.turn_score is not None or t.turn_words_p is not None for t in turns)
    headers = ["turn", "reference", "transcript", "WER raw", "WER norm.", *(["end: score / words"] * evidence),
               "reply", "tokens", "reply s"]  # fmt: skip
    rows = [
        [
            t.label,
            t.reference,
            t.transcript,
            None if t.wer is None else f"{t.wer:.2f}",
            None if t.wer_normalized is None else f"{t.wer_normalized:.2f}",
            *([end_evidence(t.turn_score, t.turn_words_p)] * evidence),
            t.reply_text,
            t.reply_tokens,
            t.reply_audio_s,
        ]
        for t in turns
    ]
    out = [md_table(headers, rows, align="l" * (len(headers) - 2) + "rr")]
    if evidence:
        out += [
            "",
            "*end: score / words*: the end-of-turn model's probability that the turn was complete, and the words "
            "model's that the transcript at the pause ends it (`[turn] words_model`), as the turn report gives "
            "them; with the endpoint's wait, why the turn ended when it did (– : none).",
        ]
    return out


def end_evidence(score: float | None, words_p: float | None) -> str | None:
    """A turn's end-of-turn evidence as the per-turn table shows it: "0.91 / 0.240"; None with neither."""
    if score is None and words_p is None:
        return None
    return f"{'–' if score is None else f'{score:.2f}'} / {'–' if words_p is None else f'{words_p:.3f}'}"


def _abbrev(stage: str) -> str:
    return (
        stage.replace("endpoint_silence", "endpoint")
        .replace("tts_first_audio", "tts_first")
        .replace("_", " ")
    )


def markdown(result: E2eResult, plot_path: Path | None = None, md_path: Path | None = None) -> str:
    s = result.summary()
    meta, method = result.meta, result.meta.method
    models = meta.models or {}
    model_text = ", ".join(f"{k.upper()} `{v}`" for k, v in models.items()) if models else "external server"
    out = [
        f"# Mouth-to-ear latency — {model_text}",
        "",
        machine_markdown(result.machine),
        "",
        f"Server: {meta.server}. Speech: `{meta.speech_dir}` ({len(result.clips)} clips), "
        f"{method.repeats} repeat(s) each after {method.warmup} warm-up turn(s).",
        "",
        "## Verdict",
        "",
        *[f"- {line}" for line in verdict_lines(s)],
        "",
    ]
    if plot_path is not None:
        link = relative_link(plot_path, md_path) if md_path else plot_path.as_posix()
        out += [f"![stages per turn]({link})", ""]
    out += [
        f"## Summary over {s.n_measured} measured turns (ms)",
        "",
        md_table(["", "p50", "p95", "max"], _stat_rows(s), align="lrrr"),
        "",
    ]
    wer = _wer_pair(s)
    wer_mean = "—" if s.wer_mean is None else f"{s.wer_mean:.3f}"
    out += [
        f"- STT word error rate (all clips pooled): **{wer}** (raw mean per clip {wer_mean}); normalized: "
        f"{'—' if method.wer_normalized is None else method.wer_normalized}; raw: {method.wer}.",
        f"- Uncertain turns (left out of every statistic above, never counted within target): "
        f"{s.n_uncertain}"
        + ("".join(f"; {u.clip} #{u.repeat}: {u.why}" for u in s.uncertain) + "." if s.uncertain else "."),
        f"- Reply length p50: {fmt_ms(s.reply_tokens.p50)} tokens, "
        f"{s.reply_audio_s.p50} s of audio; LLM p50 {fmt_ms(s.llm_tps.p50)} tokens/s.",
        f"- Turns within {TARGET_MS} ms: {s.within_target} of {s.n_measured}; within {HUMAN_GAP_MS} ms: "
        f"{s.within_human_gap}.",
        f"- Failed turns: {s.n_failed}"
        + (": " + "; ".join(f"{f.clip} #{f.repeat} {f.outcome}" for f in s.failed) if s.failed else "")
        + ".",
        f"- Client pacing: worst frame lateness against real time before a measured endpoint "
        f"{s.send_lag_before_endpoint_max_ms:.1f} ms (only that can shift a measurement); "
        f"{s.send_lag_max_ms:.1f} ms at any time, while the models ran.",
    ]
    if s.split_clips:
        out.append(
            f"- Heard by the server as more than one turn (the last turn is measured, its speech end is the "
            f"clip's): {', '.join(s.split_clips)}."
        )
        out.append(f"- {split_line(s)}")
    first = result.first_turn
    if first is not None:
        tag = "included in" if first.phase == "measured" else "not in"
        out.append(
            f"- {_first_name(result).capitalize()} ({first.clip}, {tag} the statistics): mouth-to-ear "
            f"{fmt_ms(first.mouth_to_ear_ms)} ms, server stages {fmt_ms(first.server_total_ms)} ms."
        )
    out += [f"- {line[0].upper()}{line[1:]}." for line in burst_lines(result)]
    if result.direct:
        out += _compare_table(result)
    stages = stage_names(result.turns)
    out += [
        "",
        "## Every measured turn (ms)",
        "",
        md_table(
            [
                "turn",
                "mouth-to-ear",
                *[_abbrev(x) for x in stages],
                "server sum",
                "recon. error",
                "speech-end offset",
                "reply lead",
                "residual",
                "turns heard",
                "outcome",
            ],
            _turn_rows(result.measured, stages),
            align="l" + "r" * (len(stages) + 7) + "l",
        ),
        "",
        "## What was heard and said",
        "",
        *_heard_and_said(result.measured),
        "",
        "## Method",
        "",
        *[f"- **{k}**: {v}" for k, v in method.parts()],
        f"- **RAM peak** of the bench process: {meta.ram_peak_mb} MB.",
    ]
    if result.warnings:
        out += ["", "## Warnings", "", *[f"- {w}" for w in result.warnings]]
    return "\n".join(out)


def _compare_table(result: E2eResult) -> list[str]:
    from voice.bench.e2e.compare import added_latency

    direct = {(t.clip, t.repeat): t for t in result.direct if t.phase == "measured"}
    cmp = added_latency(result.measured, list(direct.values()))
    proxied = {(t.clip, t.repeat): t for t in result.measured}
    rows = []
    for p in cmp.pairs:
        key = (p.clip, p.repeat)
        a, b = proxied[key].reconciliation_error_ms, direct[key].reconciliation_error_ms
        outside = None if a is None or b is None else round(a - b, 1)
        added = round(p.proxied_ms - p.direct_ms, 1)
        rows.append([f"{Path(p.clip).stem}#{p.repeat}", p.proxied_ms, p.direct_ms, added, outside])
    d, o = cmp.added_ms, cmp.added_outside_server_ms
    return [
        "",
        f"## Through the proxy vs direct ({cmp.n_pairs} pairs, ms)",
        "",
        f"Added by the proxy to mouth-to-ear: p50 **{fmt_ms(d.p50)} ms**, p95 {fmt_ms(d.p95)} ms. Outside the "
        f"server's stages (mouth-to-ear − server stages, proxied − direct; the server's own variation removed): "
        f"p50 **{fmt_ms(o.p50)} ms**, p95 {fmt_ms(o.p95)} ms.",
        "",
        md_table(
            ["turn", "proxied", "direct", "added", "added outside the server"], rows, align="lrrrr"
        ),
    ]


def plot(result: E2eResult, path: Path) -> None:
    turns = result.measured or result.turns
    models = result.meta.models or {}
    what = " / ".join(models.values()) if models else "external server"
    plots.stacked_stages(
        path,
        [t.label for t in turns],
        [t.stages_ms for t in turns],
        stage_names(turns),
        [t.mouth_to_ear_ms for t in turns],
        f"Mouth-to-ear per turn — {what}\n{result.machine.cpu_model}, "
        f"{result.machine.cores_usable} cores, {result.machine.date}",
    )
