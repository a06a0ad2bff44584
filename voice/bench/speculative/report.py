"""The report of ``voice bench speculative`` (:mod:`voice.bench.speculative.measure`): the summary table, the
Markdown and the chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voice.bench import plots
from voice.bench.machine import machine_markdown
from voice.bench.markdown import (
    md_table,
    ratio,
    relative_link,
)
from voice.bench.speculative.result import KindSummary, SpeculativeResult

BASELINE = "baseline"
"""The variant without speculative decoding, the reference of every ratio."""


def summary_table(summary: Sequence[KindSummary]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "LLM",
        "replies",
        "decoding",
        "tokens",
        "TTFT ms",
        "ITL ms",
        "tokens/s",
        "E2E ms",
        "tokens/s speed-up",
        "E2E speed-up",
        "TTFT ratio",
        "tokens per step",
        "same output",
    ]
    body = [
        [
            s.llm,
            s.kind,
            s.variant,
            s.tokens_p50,
            s.ttft_ms_p50,
            s.itl_ms_p50,
            s.tps_p50,
            s.e2e_ms_p50,
            ratio(s.tps_speedup) if s.variant != BASELINE else "1x (ref)",
            ratio(s.e2e_speedup) if s.variant != BASELINE else "1x (ref)",
            ratio(s.ttft_ratio) if s.variant != BASELINE else "1x (ref)",
            s.tokens_per_step if s.variant != BASELINE else 1.0,
            s.same_outputs,
        ]
        for s in summary
    ]
    return header, body


def markdown(result: SpeculativeResult, png: Path | None, md: Path | None) -> str:
    meta, rows, summary = result.meta, result.rows, result.summary
    out = [
        "# Speculative decoding (prompt lookup): tokens/s, ITL and TTFT with and without",
        "",
        machine_markdown(meta.machine),
        "",
        f"Greedy decoding (temperature {meta.temperature}), llama.cpp n_ctx {meta.n_ctx}, n_batch "
        f"{meta.n_batch}, {meta.n_threads} threads; prompt lookup with max n-gram {meta.ngram} and "
        f"{', '.join(map(str, meta.draft_tokens))} draft tokens; {meta.repeats} repeats after a warm-up round.",
        "",
        "## Summary (medians over the prompts of each kind)",
        "",
        md_table(*summary_table(summary), align="lllrrrrrrrrrl"),
        "",
    ]
    for s in summary:
        if s.variant == BASELINE or s.e2e_speedup is None:
            continue
        faster = "faster" if s.e2e_speedup > 1 else "SLOWER"
        out.append(
            f"- **{s.llm}, {s.kind} replies, {s.variant}**: whole reply {ratio(s.e2e_speedup)} "
            f"({faster}), tokens/s {ratio(s.tps_speedup)}, TTFT {ratio(s.ttft_ratio)} the baseline's; "
            f"{s.tokens_per_step} tokens per decode step; "
            f"same output as the baseline for {s.same_outputs} prompts."
        )
    if png is not None:
        out += ["", f"![speed-ups]({relative_link(png, md) if md else png.as_posix()})"]
    out += [
        "",
        "## Every prompt",
        "",
        md_table(
            [
                "LLM",
                "prompt",
                "kind",
                "decoding",
                "tokens",
                "TTFT p50 ms",
                "ITL p50 ms",
                "tokens/s p50",
                "E2E p50 ms",
                "E2E speed-up",
                "same output",
            ],
            [
                [
                    r.llm,
                    r.prompt,
                    r.kind,
                    r.variant,
                    r.n_tokens,
                    r.ttft_ms.p50,
                    r.itl_mean_ms.p50,
                    r.tps.p50,
                    r.e2e_ms.p50,
                    ratio(r.speedup.e2e_speedup if r.speedup else None) if r.variant != BASELINE else "ref",
                    "yes" if r.same_output_as_baseline else f"no (from char {r.first_difference_at_char})",
                ]
                for r in rows
            ],
            align="llllrrrrrrl",
        ),
        "",
        "## Replies (baseline)",
        "",
        *[f"- {r.llm} / {r.prompt}: {r.text!r}" for r in rows if r.variant == BASELINE],
        "",
        "## Method",
        "",
        "- Each reply starts from the same state: system prompt in the KV cache (`LlamaLlm.warm`), user turn "
        "evaluated anew; baseline and speculative instances alternate, their order rotating every round.",
        "- **TTFT** = `generate` called → first token; **ITL** = mean gap between tokens; **tokens/s** = "
        "1000 / ITL; **E2E** = TTFT + (N−1)·ITL = first → last token time from the start (voice/wire/report.py).",
        "- **E2E speed-up** = baseline / speculative time to the N-th token, N = the tokens both produced "
        "(the whole reply when outputs match; above 1 is faster); **tokens/s speed-up** = "
        "speculative tokens/s / baseline tokens/s. **TTFT ratio** above 1 means the speculative instance is "
        "slower to the first token (it computes logits for every prompt position).",
        "- **tokens per step** = generated tokens / batched decode steps (1 = no proposal accepted).",
        "- **same output**: greedy decoding should give identical text; a difference comes from batched and "
        "single-token evaluation rounding differently, and is reported, not hidden.",
    ]
    return "\n".join(out)


def plot(result: SpeculativeResult, path: Path) -> None:
    summary = [s for s in result.summary if s.variant != BASELINE]
    groups = [f"{s.llm}\n{s.kind}" for s in summary if s.variant == summary[0].variant]
    series: dict[str, list[float]] = {}
    for s in summary:
        series.setdefault(f"{s.variant} E2E speed-up", []).append(s.e2e_speedup or 0.0)
    m = result.meta.machine
    plots.grouped_bars(
        path,
        groups,
        series,
        f"Prompt-lookup speculative decoding: whole-reply speed-up vs baseline\n"
        f"{m.cpu_model}, {m.cores_usable} cores, {m.date}",
        "baseline E2E / speculative E2E (above 1 = faster)",
        reference=1.0,
        reference_label="no change",
    )
