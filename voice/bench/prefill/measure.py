"""``voice bench prefill``: time to first token against prompt length, with the prefix cached and without.

The prompt is the system prompt followed by a long document (cut from ``benchmarks/prefill_document.txt``
to the wanted length) and one user question — a voice assistant with a knowledge base, or a long
conversation. For each length:

* **uncached**: a fresh context (``reset()``), the whole prompt is evaluated before the first token;
* **cached**: an earlier turn with the same prefix and another question ran just before, so the KV cache
  holds the prefix and only the new question is evaluated — what the server does every turn.

TTFT is measured through the project's own :meth:`LlamaLlm.generate` (tokenizing, the prefix-reuse
rule, prompt evaluation, the first sampled token), with one token generated.
"""

from __future__ import annotations

import argparse
import functools
import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.bench import plots
from voice.bench.clips import BenchError
from voice.bench.llms import llm_settings, load_llm, names
from voice.bench.machine import BENCHMARKS_DIR, Guard, machine_markdown
from voice.bench.markdown import md_table, ratio_of, relative_link, text_table
from voice.bench.prefill.result import LengthTiming, PrefillMeta, PrefillResult, PrefillRow
from voice.bench.scaffold import BenchRun
from voice.bench.stats import Described, describe
from voice.config.config import load_config
from voice.runtime.model_api import ChatMessage, PromptInfo

if TYPE_CHECKING:
    from voice.backends.llm_llama import LlamaLlm

DEFAULT_TEXT = BENCHMARKS_DIR / "prefill_document.txt"
QUESTION = "When does the heating come on at the weekend?"
PREVIOUS_QUESTION = "Which bin goes out this Thursday?"


def fit_document(
    llm: LlamaLlm, system_prompt: str, words: list[str], target: int
) -> tuple[list[ChatMessage], int]:
    """Messages whose rendered prompt is as close to ``target`` tokens as possible without exceeding it."""

    def messages(k: int) -> list[ChatMessage]:
        doc = " ".join(words[:k])
        system = f"{system_prompt}\n\n{doc}" if doc else system_prompt
        return [ChatMessage("system", system), ChatMessage("user", QUESTION)]

    lo, hi = 0, len(words)
    if llm.count_tokens(messages(0)) > target:
        raise BenchError(f"prompt length {target} is shorter than the system prompt and question alone")
    while lo < hi:  # largest k with count_tokens(messages(k)) <= target
        mid = (lo + hi + 1) // 2
        if llm.count_tokens(messages(mid)) <= target:
            lo = mid
        else:
            hi = mid - 1
    msgs = messages(lo)
    return msgs, int(llm.count_tokens(msgs))


def with_question(messages: list[ChatMessage], question: str) -> list[ChatMessage]:
    return [*messages[:-1], ChatMessage("user", question)]


def time_first_token(llm: LlamaLlm, messages: list[ChatMessage]) -> tuple[float, PromptInfo]:
    """Milliseconds from calling ``generate`` to the first generated token, and the prompt split."""
    cancel = threading.Event()
    t0 = time.perf_counter_ns()
    events = llm.generate(messages, max_tokens=1, cancel=cancel)
    info = next(events)
    next(events, None)  # the first token (None if it was end-of-generation: it was still computed)
    t1 = time.perf_counter_ns()
    for _ in events:  # max_tokens=1: ends at once, which frees the instance
        pass
    if not isinstance(info, PromptInfo):
        raise BenchError(f"generate began with {info!r}, not its PromptInfo")
    return (t1 - t0) / 1e6, info


def measure_length(llm: LlamaLlm, messages: list[ChatMessage], repeats: int, guard: Guard) -> LengthTiming:
    other = with_question(messages, PREVIOUS_QUESTION)

    def uncached_run() -> tuple[float, PromptInfo]:
        llm.reset_cache()
        ms, info = time_first_token(llm, messages)
        if info.reused_tokens:
            raise BenchError(
                f"uncached run reused {info.reused_tokens} tokens: reset did not clear the cache"
            )
        return ms, info

    def cached_run() -> tuple[float, PromptInfo]:
        time_first_token(llm, other)  # the previous turn: leaves the shared prefix in the KV cache
        return time_first_token(llm, messages)

    def one_round(r: int) -> dict[str, tuple[float, PromptInfo]]:
        order = ("uncached", "cached") if r % 2 == 0 else ("cached", "uncached")
        return {what: (uncached_run() if what == "uncached" else cached_run()) for what in order}

    one_round(0)  # warm-up, not recorded
    rounds: list[dict[str, tuple[float, PromptInfo]]] = []
    for r in range(1, repeats + 1):
        rounds.append(guard.run(functools.partial(one_round, r), f"round {r}"))
    uncached = [x["uncached"][0] for x in rounds]
    cached = [x["cached"][0] for x in rounds]
    evaluated_cached = [x["cached"][1].evaluated_tokens for x in rounds]
    reused_cached = [x["cached"][1].reused_tokens for x in rounds]
    u, c = describe(uncached), describe(cached)
    return LengthTiming(
        uncached_ms=u,
        cached_ms=c,
        uncached_samples_ms=tuple(round(x, 2) for x in uncached),
        cached_samples_ms=tuple(round(x, 2) for x in cached),
        cached_evaluated_tokens=max(evaluated_cached) if evaluated_cached else None,
        cached_reused_tokens=min(reused_cached) if reused_cached else None,
        ratio_p50=ratio_of(u.p50, c.p50),
    )


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    config = load_config(args.config)
    text_path: Path = args.text or DEFAULT_TEXT
    if not text_path.is_file():
        raise BenchError(f"prompt text {text_path} not found; pass --text FILE (any long plain text)")
    words = text_path.read_text(encoding="utf-8").split()
    try:
        lengths = sorted({int(x) for x in args.lengths.split(",") if x.strip()})
    except ValueError:
        raise BenchError(f"--lengths must be comma-separated integers, got {args.lengths!r}") from None
    meta = PrefillMeta(
        machine=bench.begin(),
        **llm_settings(config),
        llm_ttft_budget_ms=config.budget.llm_ttft_ms,
        repeats=args.repeats,
        text=str(text_path),
        question=QUESTION,
        previous_question=PREVIOUS_QUESTION,
    )
    rows: list[PrefillRow] = []
    for name in names(args.llm, config.llm.model):
        print(f"loading {name} …", flush=True)
        llm = load_llm(config, name)
        for target in lengths:
            if target + 1 > llm.n_ctx:
                print(f"  {target} tokens: skipped, does not fit n_ctx {llm.n_ctx}")
                continue
            doc_words = words
            while True:
                messages, n_tokens = fit_document(llm, config.llm.system_prompt, doc_words, target)
                if n_tokens >= target * 0.9 or len(doc_words) > 20 * len(words):
                    break
                doc_words = doc_words + words  # the text is too short for this length: repeat it
            res = measure_length(llm, messages, args.repeats, bench.guard())
            uncached_p50 = res.uncached_ms.p50
            tps = round(n_tokens / uncached_p50 * 1000) if uncached_p50 else None
            rows.append(PrefillRow(name, target, n_tokens, res, tps))
            print(
                f"  {n_tokens:5d} prompt tokens: TTFT uncached p50 {uncached_p50:.0f} ms, cached p50 "
                f"{res.cached_ms.p50:.0f} ms ({res.cached_evaluated_tokens} tokens evaluated) → "
                f"{res.ratio_p50}x",
                flush=True,
            )
        del llm
    result = PrefillResult(meta, tuple(rows))
    print()
    print(text_table(*_table(rows)))
    bench.end(result, markdown=markdown, plot=plot)
    return 0 if rows else 1


def _table(rows: Sequence[PrefillRow]) -> tuple[list[str], list[list[Any]]]:
    header = [
        "LLM",
        "prompt tokens",
        "uncached p50 ms",
        "uncached p95 ms",
        "cached p50 ms",
        "cached p95 ms",
        "evaluated when cached",
        "uncached / cached",
        "prefill tok/s",
    ]
    body = [
        [
            r.llm,
            r.prompt_tokens,
            r.timing.uncached_ms.p50,
            r.timing.uncached_ms.p95,
            r.timing.cached_ms.p50,
            r.timing.cached_ms.p95,
            r.timing.cached_evaluated_tokens,
            f"{r.timing.ratio_p50}x",
            r.prefill_tokens_per_s,
        ]
        for r in rows
    ]
    return header, body


def markdown(result: PrefillResult, png: Path | None, md: Path | None) -> str:
    meta, rows = result.meta, result.rows
    out = [
        "# Prefill: time to first token vs prompt length, prefix cached and not",
        "",
        machine_markdown(meta.machine),
        "",
        f"llama.cpp settings: n_ctx {meta.n_ctx}, n_batch {meta.n_batch}, {meta.n_threads} threads. "
        f"{meta.repeats} repeats per cell after one warm-up round; cached and uncached runs alternate.",
        "",
    ]
    if png is not None:
        out += [f"![TTFT vs prompt length]({relative_link(png, md) if md else png.as_posix()})", ""]
    header, body = _table(rows)
    out += [md_table(header, body, align="lrrrrrrrr"), ""]
    for name in dict.fromkeys(r.llm for r in rows):
        mine = [r for r in rows if r.llm == name]
        if not mine:
            continue
        big, small = mine[-1], mine[0]
        out.append(
            f"- **{name}**: at {big.prompt_tokens} prompt tokens a fresh context takes "
            f"{big.timing.uncached_ms.p50:.0f} ms to the first token, the same turn after a cached prefix "
            f"{big.timing.cached_ms.p50:.0f} ms ({big.timing.ratio_p50}x). From {small.prompt_tokens} to "
            f"{big.prompt_tokens} tokens, uncached TTFT grows {small.timing.uncached_ms.p50:.0f} → "
            f"{big.timing.uncached_ms.p50:.0f} ms (the whole prompt is evaluated), cached only "
            f"{small.timing.cached_ms.p50:.0f} → {big.timing.cached_ms.p50:.0f} ms (the same few new "
            "tokens, attending to a longer cache)."
        )
    out += [
        "",
        "## Method",
        "",
        f"- Prompt = system prompt + the first words of `{Path(meta.text).name}` (as many as fit the length) "
        f"+ the question {meta.question!r}, rendered with the model's chat template.",
        "- **uncached**: `reset()` (empty KV cache), then the whole prompt is evaluated.",
        f"- **cached**: just before, a turn with the same prefix and the question {meta.previous_question!r} "
        "ran, so only the new question (and the template's glue) is evaluated: the column *evaluated when "
        "cached* shows how many tokens that was.",
        "- **TTFT** = from calling `LlamaLlm.generate` to the first generated token (tokenizing, prefix "
        "matching, prompt evaluation, sampling), one token generated. p50/p95 over the repeats.",
        "- **prefill tok/s** = prompt tokens / uncached TTFT.",
    ]
    return "\n".join(out)


def _p50(d: Described) -> float:
    """The p50 to draw; a missing one is a gap in the line (NaN, as matplotlib draws None)."""
    p50 = d.p50
    return math.nan if p50 is None else p50


def plot(result: PrefillResult, path: Path) -> None:
    series: dict[str, tuple[list[float], list[float]]] = {}
    styles: dict[str, str] = {}
    for name in dict.fromkeys(r.llm for r in result.rows):
        mine = [r for r in result.rows if r.llm == name]
        xs = [float(r.prompt_tokens) for r in mine]
        series[f"{name} uncached"] = (xs, [_p50(r.timing.uncached_ms) for r in mine])
        series[f"{name} cached prefix"] = (xs, [_p50(r.timing.cached_ms) for r in mine])
        styles[f"{name} uncached"] = "o-"
        styles[f"{name} cached prefix"] = "s--"
    m = result.meta.machine
    plots.lines(
        path,
        series,
        f"TTFT (p50) vs prompt length — {m.cpu_model}, {m.cores_usable} cores, {m.date}",
        "prompt tokens",
        "time to first token (ms, log scale)",
        logy=True,
        styles=styles,
        hlines={f"LLM TTFT budget ({budget} ms)": float(budget)}
        if (budget := result.meta.llm_ttft_budget_ms)
        else None,
    )
