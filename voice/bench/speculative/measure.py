"""``voice bench speculative``: greedy decoding with and without prompt-lookup speculative decoding.

llama-cpp-python's :class:`~llama_cpp.llama_speculative.LlamaPromptLookupDecoding` proposes the tokens that
followed the last n-gram wherever it occurred earlier in the context; llama.cpp then evaluates the sampled
token plus the proposals in one batch and keeps the proposals that greedy sampling agrees with. Draft
models make the library compute logits for every evaluated position (``logits_all``), prompt included.

Each prompt is decoded by two model instances (same GGUF, same settings; one with the draft model),
alternating, each time from the same state: the system prompt cached, the user turn evaluated anew. Times
come from the project's :meth:`LlamaLlm.generate`, per token, with the metric definitions of
:class:`voice.wire.report.LlmMetrics`.
"""

from __future__ import annotations

import argparse
import dataclasses
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from voice.bench.clips import BenchError
from voice.bench.llms import load_llm, names
from voice.bench.machine import BENCHMARKS_DIR, Guard
from voice.bench.markdown import (
    ratio_of,
    text_table,
)
from voice.bench.scaffold import BenchRun
from voice.bench.speculative.report import BASELINE, markdown, plot, summary_table
from voice.bench.speculative.result import (
    Decoded,
    KindSummary,
    PromptRow,
    SpeculativeMeta,
    SpeculativeResult,
    SpeedUp,
)
from voice.bench.stats import Described, describe
from voice.config.config import Config, load_config
from voice.config.tomlfile import check_keys, load_toml, optional, required
from voice.runtime.model_api import ChatMessage, TextDelta
from voice.wire.report import LlmMetrics

if TYPE_CHECKING:
    from voice.backends.llm_llama import LlamaLlm

DEFAULT_PROMPTS = BENCHMARKS_DIR / "speculative_prompts.toml"


@dataclass(frozen=True)
class Prompt:
    name: str
    kind: str
    text: str
    max_tokens: int
    system: str | None = None
    """Replaces the configured system prompt for this prompt."""


_PROMPT_KEYS = ("name", "kind", "text", "max_tokens", "system")


def load_prompts(path: Path) -> list[Prompt]:
    """The ``[[prompt]]`` tables of a prompts file; an unknown, missing or mistyped key is a BenchError."""
    data = load_toml(path, "prompts file", BenchError, hint="pass --prompts FILE")
    check_keys(data, ("prompt",), str(path), BenchError)
    tables = data.get("prompt", [])
    if not isinstance(tables, list) or not tables:
        raise BenchError(f"{path}: no [[prompt]] entries")
    out = []
    for i, p in enumerate(tables):
        where = f"{path}: prompt {i + 1}"
        if not isinstance(p, dict):
            raise BenchError(f"{where} must be a table")
        check_keys(p, _PROMPT_KEYS, where, BenchError)
        out.append(
            Prompt(
                required(p, "name", str, where, BenchError),
                required(p, "kind", str, where, BenchError),
                required(p, "text", str, where, BenchError),
                optional(p, "max_tokens", int, where, BenchError, 96),
                optional(p, "system", str, where, BenchError, None),
            )
        )
    return out


def decode(llm: LlamaLlm, system: str, prompt: Prompt) -> Decoded:
    """One greedy reply from the state 'system prompt cached'; per-token times → :class:`LlmMetrics`."""
    llm.warm(ChatMessage("system", system))
    before = llm.draft_stats
    messages = [ChatMessage("system", system), ChatMessage("user", prompt.text)]
    cancel = threading.Event()
    token_ns: list[int] = []
    pieces: list[str] = []
    start = time.perf_counter_ns()
    for ev in llm.generate(messages, max_tokens=prompt.max_tokens, cancel=cancel):
        if isinstance(ev, TextDelta):
            token_ns.append(time.perf_counter_ns())
            pieces.append(ev.text)
    metrics = LlmMetrics.from_marks(start, token_ns)
    out = Decoded(
        text="".join(pieces),
        n_tokens=len(token_ns),
        token_ms=tuple(round((t - start) / 1e6, 2) for t in token_ns),
        ttft_ms=metrics.ttft_ms if metrics else None,
        itl_mean_ms=metrics.itl_mean_ms if metrics else None,
        itl_p95_ms=metrics.itl_p95_ms if metrics else None,
        tps=metrics.tps if metrics else None,
        e2e_ms=metrics.e2e_ms if metrics else None,
    )
    after = llm.draft_stats
    if before is not None and after is not None:
        steps = after.calls - before.calls
        out = dataclasses.replace(
            out,
            decode_steps=steps,
            proposed_tokens=after.proposed_tokens - before.proposed_tokens,
            tokens_per_step=round(len(token_ns) / steps, 2) if steps else None,
        )
    return out


def _first_difference(a: str, b: str) -> int | None:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def run_model(
    config: Config,
    name: str,
    prompts: list[Prompt],
    drafts: list[int],
    ngram: int,
    repeats: int,
    guard: Guard,
) -> list[PromptRow]:
    from voice.backends.llm_llama import prompt_lookup_draft

    variants: dict[str, LlamaLlm] = {BASELINE: load_llm(config, name)}
    for k in drafts:
        variants[f"prompt-lookup {k}"] = load_llm(config, name, draft_model=prompt_lookup_draft(ngram, k))
    system = config.llm.system_prompt
    runs: dict[tuple[str, str], list[Decoded]] = {}
    order = list(variants)
    for r in range(repeats + 1):  # round 0 is a warm-up, not recorded
        for prompt in prompts:
            rotated = order[r % len(order) :] + order[: r % len(order)]

            def one(
                prompt: Prompt = prompt, rotated: list[str] = rotated, llms: dict[str, LlamaLlm] = variants
            ) -> dict[str, Decoded]:
                return {v: decode(llms[v], prompt.system or system, prompt) for v in rotated}

            results = guard.run(one, f"{name} {prompt.name} round {r}") if r else one()
            if r:
                for v, res in results.items():
                    runs.setdefault((prompt.name, v), []).append(res)
        print(f"  {name}: round {r}/{repeats} done", flush=True)
    rows = prompt_rows(name, prompts, list(variants), runs)
    del variants
    return rows


def prompt_rows(
    name: str, prompts: list[Prompt], variants: list[str], runs: dict[tuple[str, str], list[Decoded]]
) -> list[PromptRow]:
    """A row per prompt and variant from the replies ``runs`` holds for each (the repeats)."""
    rows = []
    for prompt in prompts:
        base = runs[(prompt.name, BASELINE)]
        for v in variants:
            rs = runs[(prompt.name, v)]
            text = rs[0].text
            diff = _first_difference(text, base[0].text)
            ttft_ms, tps = described(rs, "ttft_ms"), described(rs, "tps")
            row = PromptRow(
                llm=name,
                prompt=prompt.name,
                kind=prompt.kind,
                variant=v,
                n_tokens=rs[0].n_tokens,
                same_output_as_baseline=diff is None,
                first_difference_at_char=diff,
                deterministic_across_repeats=all(x.text == text for x in rs),
                text=text,
                ttft_ms=ttft_ms,
                itl_mean_ms=described(rs, "itl_mean_ms"),
                tps=tps,
                e2e_ms=described(rs, "e2e_ms"),
                speedup=None if v == BASELINE else speedup(rs, base, ttft_ms.p50, tps.p50),
            )
            rows.append(row)
    return rows


def described(runs: list[Decoded], key: str) -> Described:
    """``describe`` of the repeats' ``key`` (those that have it)."""
    return describe([v for x in runs if (v := getattr(x, key)) is not None])


def speedup(rs: list[Decoded], base: list[Decoded], s_ttft: float | int | None, s_tps: float | int | None) -> SpeedUp:
    """A speculative variant's replies ``rs`` against the baseline's on the same prompt."""
    # Whole-reply time over the tokens both produced (outputs may diverge and differ in length).
    n = min(min(x.n_tokens for x in rs), min(x.n_tokens for x in base))
    b_e2e = float(np.median([x.token_ms[n - 1] for x in base])) if n else None
    s_e2e = float(np.median([x.token_ms[n - 1] for x in rs])) if n else None
    return SpeedUp(
        tokens_per_step=float(np.median([x.tokens_per_step or 0 for x in rs])),
        compared_tokens=n,
        e2e_common_baseline_ms=b_e2e,
        e2e_common_speculative_ms=s_e2e,
        tps_speedup=ratio_of(s_tps, row_p50(base, "tps")),
        e2e_speedup=ratio_of(b_e2e, s_e2e),
        ttft_ratio=ratio_of(s_ttft, row_p50(base, "ttft_ms")),
    )


def row_p50(runs: list[Decoded], key: str) -> float | None:
    vals = [v for x in runs if (v := getattr(x, key)) is not None]
    return float(np.median(vals)) if vals else None


def _median2(values: Iterable[float | int | None]) -> float | None:
    """The median of the values that are not None, 2 decimals; None when there are none."""
    vals = [v for v in values if v is not None]
    return round(float(np.median(vals)), 2) if vals else None


def summarize(rows: list[PromptRow]) -> list[KindSummary]:
    """Per model, kind and variant: medians over prompts of the per-prompt p50s and speed-ups."""
    out = []
    keys = dict.fromkeys((r.llm, r.kind, r.variant) for r in rows)
    for llm, kind, variant in keys:
        mine = [r for r in rows if (r.llm, r.kind, r.variant) == (llm, kind, variant)]
        ups = [r.speedup for r in mine if r.speedup is not None]
        out.append(
            KindSummary(
                llm=llm,
                kind=kind,
                variant=variant,
                prompts=len(mine),
                tokens_p50=_median2(r.n_tokens for r in mine),
                ttft_ms_p50=_median2(r.ttft_ms.p50 for r in mine),
                itl_ms_p50=_median2(r.itl_mean_ms.p50 for r in mine),
                tps_p50=_median2(r.tps.p50 for r in mine),
                e2e_ms_p50=_median2(r.e2e_ms.p50 for r in mine),
                tps_speedup=_median2(u.tps_speedup for u in ups),
                e2e_speedup=_median2(u.e2e_speedup for u in ups),
                ttft_ratio=_median2(u.ttft_ratio for u in ups),
                tokens_per_step=_median2(u.tokens_per_step for u in ups),
                same_outputs=f"{sum(r.same_output_as_baseline for r in mine)}/{len(mine)}",
            )
        )
    return out


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    config = load_config(args.config)
    prompts = load_prompts(args.prompts or DEFAULT_PROMPTS)
    try:
        drafts = [int(x) for x in args.draft_tokens.split(",") if x.strip()]
    except ValueError:
        raise BenchError(
            f"--draft-tokens must be comma-separated integers, got {args.draft_tokens!r}"
        ) from None
    meta = SpeculativeMeta(
        machine=bench.begin(),
        n_ctx=config.llm.n_ctx,
        n_batch=config.llm.n_batch,
        n_threads=config.llm.n_threads,
        temperature=config.llm.temperature,
        draft_tokens=tuple(drafts),
        ngram=args.ngram,
        repeats=args.repeats,
        prompts_file=str(args.prompts or DEFAULT_PROMPTS),
        system_prompt=config.llm.system_prompt,
    )
    if config.llm.temperature != 0:
        print(f"note: temperature {config.llm.temperature} in the config; outputs may differ between runs")
    rows: list[PromptRow] = []
    for name in names(args.llm, config.llm.model):
        print(f"loading {name} (baseline and {len(drafts)} prompt-lookup variant(s)) …", flush=True)
        rows += run_model(config, name, prompts, drafts, args.ngram, args.repeats, bench.guard())
    summary = summarize(rows)
    result = SpeculativeResult(meta, tuple(summary), tuple(rows))
    print()
    print(text_table(*summary_table(summary)))
    bench.end(result, markdown=markdown, plot=plot)
    return 0
