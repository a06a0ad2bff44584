"""``voice bench kv``: what a long conversation and many sessions at the KV memory bound do to TTFT.

Text mode, through the project's own :meth:`LlamaLlm.generate` (template, the prefix-reuse rule, the
per-conversation KV states of ``[llm] kv_cache_mb``) and :func:`~voice.conversation.history.fit_prompt` (history trimmed
to the context window), greedy, replies of up to ``max_reply_tokens``:

* **long**: one conversation of ``--long-turns`` turns. The history grows until it no longer fits
  ``n_ctx``; then the oldest exchanges are dropped down to half the window and that turn evaluates the
  trimmed prompt afresh. TTFT, prompt tokens and evaluated tokens per turn.
* **sessions**: ``--sessions`` conversations taking turns round-robin (each speaks after all the others),
  ``--turns`` each, once per KV bound in ``--bounds-mb`` (0 = no saved states, today's single live
  context). Below the bound every session's next turn evaluates only its new tokens; once the states of all
  sessions no longer fit, the least recently used are evicted and those sessions evaluate their history
  again. TTFT of the turns after each session's first, evictions and re-evaluated tokens per bound, and the
  cost of saving and restoring a state against the prefill it saves.

TTFT here is the time from calling ``generate`` to its first text delta (restore + prompt evaluation + the
first sampled token), with no other stage running.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.bench import plots
from voice.bench.clips import BenchError
from voice.bench.kv.result import BoundSummary, KvMeta, KvResult, LongConversation, TurnTiming
from voice.bench.llms import llm_settings, load_llm
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, relative_link, text_table
from voice.bench.scaffold import BenchRun
from voice.config.config import Config, load_config
from voice.conversation.history import History, fit_prompt
from voice.runtime.model_api import ChatMessage, PromptInfo, TextDelta

if TYPE_CHECKING:
    from voice.backends.llm_llama import LlamaLlm

QUESTIONS = (
    "What is the capital of France, and what is it known for?",
    "How far is the Moon from the Earth?",
    "Give me a tip for sleeping better.",
    "Why is the sky blue during the day?",
    "What should I cook tonight with rice and eggs?",
    "How do bees make honey?",
    "What is a good name for a grey cat?",
    "Explain what a black hole is in simple words.",
    "How many legs does a spider have?",
    "What is the tallest mountain in Europe?",
    "How can I keep basil fresh for longer?",
    "Why do leaves change colour in autumn?",
)


def one_turn(
    llm: LlamaLlm, system: ChatMessage, history: History, question: str, session: int, turn: int
) -> TurnTiming:
    """Ask ``question`` in the conversation ``history`` (trimmed to fit), time the first token, keep the reply."""
    history.add("user", question)
    cfg = llm.config
    messages, dropped = fit_prompt(
        system, history, llm.count_tokens, n_ctx=llm.n_ctx, reply_tokens=cfg.max_reply_tokens
    )
    t0 = time.perf_counter_ns()
    ttft_ns: int | None = None
    info: PromptInfo | None = None
    reply: list[str] = []
    for ev in llm.generate(messages, max_tokens=cfg.max_reply_tokens, cancel=threading.Event()):
        if isinstance(ev, PromptInfo):
            info = ev
        elif isinstance(ev, TextDelta):
            if ttft_ns is None:
                ttft_ns = time.perf_counter_ns() - t0
            reply.append(ev.text)
    history.add("assistant", "".join(reply) or "…")
    assert info is not None
    return TurnTiming(
        session=session,
        turn=turn,
        ttft_ms=None if ttft_ns is None else round(ttft_ns / 1e6, 2),
        prompt_tokens=info.prompt_tokens,
        evaluated_tokens=info.evaluated_tokens,
        reevaluated_tokens=info.kv_reevaluated_tokens,
        restore_ms=info.kv_restore_ms,
        trimmed_messages=dropped,
        kv_cache_mb=round(info.kv_cache_bytes / 2**20, 2),
    )


def long_conversation(llm: LlamaLlm, turns: int) -> list[TurnTiming]:
    system = ChatMessage("system", llm.config.system_prompt)
    history = History()
    return [one_turn(llm, system, history, QUESTIONS[k % len(QUESTIONS)], 0, k + 1) for k in range(turns)]


def interleaved_sessions(llm: LlamaLlm, sessions: int, turns: int) -> list[TurnTiming]:
    system = ChatMessage("system", llm.config.system_prompt)
    histories = [History() for _ in range(sessions)]
    out = []
    for k in range(turns):
        for s in range(sessions):
            out.append(one_turn(llm, system, histories[s], QUESTIONS[(s + 3 * k) % len(QUESTIONS)], s, k + 1))
    return out


def _load(config: Config, kv_cache_mb: int) -> LlamaLlm:
    cfg = dataclasses.replace(config, llm=dataclasses.replace(config.llm, kv_cache_mb=kv_cache_mb))
    return load_llm(cfg, cfg.llm.model)


LONG_HEADER = ("turn", "prompt tok", "evaluated", "trimmed msgs", "ttft ms")
BOUND_HEADER = (
    "kv_cache_mb",
    "p50 ttft ms",
    "p95 ttft ms",
    "evaluated p50",
    "prompt p50",
    "evictions",
    "turns evicted",
    "re-evaluated tok",
    "MB in use (max)",
    "save ms",
    "restore ms",
)


def _bound_row(b: BoundSummary) -> list[Any]:
    t = b.ttft_after_first_turn
    return [
        b.kv_cache_mb,
        t.p50,
        t.p95,
        b.evaluated_after_first_turn.p50,
        b.prompt_tokens_after_first_turn.p50,
        b.evictions,
        b.turns_evicted,
        b.reevaluated_tokens,
        b.kv_cache_mb_max,
        b.save_ms_mean,
        b.restore_ms_mean,
    ]


def _long_rows(long: LongConversation) -> list[list[Any]]:
    return [[t.turn, t.prompt_tokens, t.evaluated_tokens, t.trimmed_messages, t.ttft_ms] for t in long.turns]


def markdown(result: KvResult, png: Path | None, md_path: Path) -> str:
    m = result.meta
    long = result.long
    out = [
        "# voice bench kv: TTFT at the KV memory bound",
        "",
        f"LLM {m.llm} ({m.llm_settings}), replies up to {m.max_reply_tokens} tokens, greedy.",
        "",
        f"## {m.sessions} sessions taking turns, {m.turns} turns each, per KV bound",
        "",
        "TTFT and tokens of each session's turns after its first (its history is then in a saved state, or not).",
        "",
        md_table(BOUND_HEADER, [_bound_row(b) for b in result.bounds]),
        "",
        f"## One long conversation, {len(long.turns)} turns (n_ctx {m.llm_settings['n_ctx']}, "
        f"kv_cache_mb {long.kv_cache_mb})",
        "",
        f"Turns that trimmed the history: {list(long.trim_turns)}. TTFT p50 {long.ttft.p50} ms, "
        f"p95 {long.ttft.p95} ms, max {long.ttft.max} ms.",
        "",
        md_table(LONG_HEADER, _long_rows(long)),
        "",
    ]
    if png is not None:
        out += [f"![TTFT at the KV bound]({relative_link(png, md_path)})", ""]
    out += ["## Method", "", result.method, "", machine_markdown(m.machine)]
    return "\n".join(out) + "\n"


def plot(result: KvResult, path: Path) -> None:
    plt = plots._pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    bounds = result.bounds
    labels = [str(b.kv_cache_mb) for b in bounds]
    xs = list(range(len(bounds)))
    ttft = [b.ttft_after_first_turn for b in bounds]
    for q, values, style in (("p50", [d.p50 for d in ttft], "o-"), ("p95", [d.p95 for d in ttft], "s--")):
        left.plot(xs, [v or 0 for v in values], style, label=f"{q} TTFT")
    left.set_xticks(xs)
    left.set_xticklabels(labels)
    left.set_xlabel("[llm] kv_cache_mb (0 = off)")
    left.set_ylabel("TTFT, ms")
    left.set_title(f"{result.meta.sessions} sessions taking turns: turns after the first", fontsize=10)
    left.grid(alpha=0.3)
    left.legend(fontsize=8)
    turns = result.long.turns
    right.plot([t.turn for t in turns], [t.ttft_ms or 0 for t in turns], "o-", label="TTFT ms")
    for t in turns:
        if t.trimmed_messages:
            right.axvline(t.turn, color="#d62728", linestyle=":", linewidth=1)
    right.set_xlabel("turn of one conversation (dotted: history trimmed)")
    right.set_ylabel("TTFT, ms")
    right.set_title("a long conversation through the context window", fontsize=10)
    right.grid(alpha=0.3)
    plots._save(fig, path)


def run(args: argparse.Namespace) -> int:
    bench = BenchRun(args)
    config = load_config(args.config)
    if args.n_ctx:
        config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, n_ctx=args.n_ctx))
    if args.llm:
        config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, model=args.llm))
    try:
        bounds = [int(x) for x in str(args.bounds_mb).split(",") if x.strip()]
    except ValueError:
        raise BenchError(f"--bounds-mb takes comma-separated integers, got {args.bounds_mb!r}") from None
    if not bounds or min(bounds) < 0:
        raise BenchError("--bounds-mb needs sizes of 0 (off) or more")
    meta = KvMeta(
        machine=bench.begin(),
        llm=config.llm.model,
        llm_settings=llm_settings(config),
        max_reply_tokens=config.llm.max_reply_tokens,
        sessions=args.sessions,
        turns=args.turns,
    )
    summaries = []
    for mb in bounds:
        llm = _load(config, mb)
        timings = interleaved_sessions(llm, args.sessions, args.turns)
        stats = llm.kv_stats()
        b = BoundSummary.of(mb, timings, stats if mb else None)
        summaries.append(b)
        print(text_table(BOUND_HEADER, [_bound_row(b)]), flush=True)
        del llm
        gc.collect()
    long_mb = config.llm.kv_cache_mb
    llm = _load(config, long_mb)
    long = LongConversation.of(long_mb, long_conversation(llm, args.long_turns))
    print(text_table(LONG_HEADER, _long_rows(long)))
    result = KvResult(meta, (__doc__ or "").strip(), tuple(summaries), long)
    bench.end(result, markdown=markdown, plot=plot)
    return 0
