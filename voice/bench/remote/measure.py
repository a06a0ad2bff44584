"""``voice bench remote``: the LLM in this process vs the same LLM through an OpenAI-compatible server.

Two parts, in one sitting:

1. **Text** (the quality question set, :mod:`voice.bench.quality.measure`): every question to the in-process LLM and
   then through the server, item by item. Greedy decoding both ways, so the replies should be the same
   text: the report counts identical replies, judges both with the set's checks, and gives TTFT (request →
   first token received) and reply time.
2. **Mouth-to-ear** (:mod:`voice.bench.e2e.measure`, skipped with ``--no-e2e``): the recordings spoken in real time
   into an in-process server whose LLM is in-process, then into one whose ``[llm] backend`` is "openai".

Without ``--url`` it starts ``python -m llama_cpp.server`` on loopback with the configured catalogue model
and the same n_ctx / threads (:mod:`voice.bench.llama_server`): the same engine and model both ways, so the
difference is the HTTP hop, the server's own request handling, and the lost compute gate (the server's
decode threads and this process's STT/TTS threads share the cores without one scheduler). With ``--url``
(and ``--model``) any running server is measured instead (vLLM on a GPU box, say). The result is typed in
:mod:`voice.bench.remote.result`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError, default_speech_dir, load_clips
from voice.bench.e2e import measure as e2e
from voice.bench.e2e import turn as e2e_turn
from voice.bench.e2e.result import summarize
from voice.bench.e2e.turn import TurnResult
from voice.bench.llms import llm_settings, load_llm, located_model
from voice.bench.machine import machine_markdown
from voice.bench.markdown import md_table, text_table
from voice.bench.quality import measure as quality
from voice.bench.quality.question_set import Item, QuestionSetError, load_items
from voice.bench.quality.result import TextRow
from voice.bench.remote.result import E2eBackend, E2eComparison, RemoteResult, TextBackend, TextComparison
from voice.bench.scaffold import BenchRun
from voice.config.config import Config, load_config

BACKENDS = ("in-process", "server")


@contextlib.contextmanager
def _server(config: Config, url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from voice.bench.llama_server import llama_server
    from voice.models import find_gguf

    path = find_gguf(located_model(config.llm.model, "llm"), config.llm.model)
    with llama_server(path, config.llm) as srv:
        yield srv.base_url


def remote_config(config: Config, base_url: str, model: str | None) -> Config:
    """``config`` with ``[llm] backend = "openai"`` at ``base_url``."""
    llm = dataclasses.replace(config.llm, backend="openai", base_url=base_url, model=model or config.llm.model)
    return dataclasses.replace(config, llm=llm)


def compare_text(config: Config, remote: Config, items: Sequence[Item], say: Callable[[str], None]) -> TextComparison:
    """Each item through both LLMs (skills off: the LLM answers everything)."""
    from voice.backends.llm_openai import OpenAiLlm

    local_llm = load_llm(config, config.llm.model)
    remote_llm = OpenAiLlm(remote.llm)
    rows: dict[str, list[TextRow]] = {b: [] for b in BACKENDS}
    same = 0
    for item in items:
        a = quality.run_item(local_llm, config, item)
        b = quality.run_item(remote_llm, remote, item)
        rows["in-process"].append(a)
        rows["server"].append(b)
        same += a.reply == b.reply
        mark = "same" if a.reply == b.reply else "DIFF"
        say(f"  {mark} {item.id}: ttft {a.ttft_ms:.0f} / {b.ttft_ms:.0f} ms  {b.reply[:70]!r}")
    remote_llm.close()
    backends = {name: TextBackend(quality.summarize(r), tuple(r)) for name, r in rows.items()}
    return TextComparison(same, len(items), backends)


def compare_e2e(
    config: Config, remote: Config, args: argparse.Namespace, say: Callable[[str], None]
) -> E2eComparison:
    """The recordings spoken into an in-process server with each LLM backend."""
    from voice.loader import load_runtime

    clips, warnings = load_clips(args.speech or default_speech_dir(), args.clips.split(",") if args.clips else None)
    for w in warnings:
        say(f"warning: {w}")
    opts = e2e.E2eOptions(repeats=args.repeats, warmup=args.warmup, reply_timeout_s=60.0)
    backends: dict[str, E2eBackend] = {}
    for name, cfg in zip(BACKENDS, (config, remote), strict=True):
        say(f"mouth-to-ear, LLM {name}: {len(clips)} clip(s) × {args.repeats} (+{args.warmup} warm-up)")
        runtime = load_runtime(cfg)
        try:
            plan = e2e_turn.make_plan(clips, opts.repeats, opts.warmup)
            turns = asyncio.run(
                e2e.run_plan_in_process(cfg, runtime, plan, opts, lambda r: say("    " + e2e_row(r)))
            )
        finally:
            runtime.close()
        measured = [t for t in turns if t.phase != "warmup"]
        backends[name] = E2eBackend(summarize(measured), tuple(turns))
    return E2eComparison(backends)


def e2e_row(r: TurnResult) -> str:
    m2e = "-" if r.mouth_to_ear_ms is None else f"{r.mouth_to_ear_ms:.0f} ms"
    return f"{r.clip} ({r.phase}): mouth-to-ear {m2e}, {r.outcome}"


HEADER = [
    "LLM", "same replies", "right %", "TTFT p50 ms (text)", "reply p50 ms (text)",
    "mouth-to-ear p50 ms", "mouth-to-ear p95 ms", "llm_ttft p50 ms (e2e)", "turns",
]  # fmt: skip


def rows(result: RemoteResult) -> list[list[Any]]:
    text = result.text
    e2e_part = result.e2e.backends if result.e2e is not None else {}
    out = []
    for name in BACKENDS:
        q = text.backends[name].summary
        s = e2e_part[name].summary if name in e2e_part else None
        out.append([
            name, f"{text.same_replies}/{text.items}", q.judged.right_pct, q.median_ttft_ms, q.median_reply_ms,
            *((s.p50_ms, s.p95_ms, s.llm_ttft.p50, s.n_measured) if s is not None else (None,) * 4),
        ])  # fmt: skip
    return out


def markdown(result: RemoteResult, png: Path | None, md: Path) -> str:
    parts = ["# voice bench remote: in-process LLM vs the same LLM through a server", ""]
    parts += [machine_markdown(result.machine), ""]
    parts += [f"Server: {result.server}; model {result.model}; greedy (temperature "
              f"{result.temperature}); {result.settings}.", ""]  # fmt: skip
    parts += [md_table(HEADER, rows(result)), ""]
    backends = result.text.backends
    diffs = [
        (a.id, a.reply, b.reply)
        for a, b in zip(backends["in-process"].rows, backends["server"].rows, strict=True)
        if a.reply != b.reply
    ]
    if diffs:
        parts += ["## Replies that differ", "", md_table(["id", "in-process", "server"], diffs), ""]
    return "\n".join(parts)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, skills=False, backend="llama"))
    try:
        items = load_items(args.questions or quality.DEFAULT_SET)
    except QuestionSetError as e:
        raise BenchError(str(e)) from None
    if args.items:
        wanted = {x.strip() for x in args.items.split(",")}
        items = [i for i in items if i.id in wanted or i.category in wanted]
    if not items:
        raise BenchError(f"no question matches --items {args.items!r} (ids or categories of the set)")

    def say(msg: str) -> None:
        print(msg, flush=True)

    bench = BenchRun(args, say=say)
    machine = bench.begin()
    with _server(config, args.url) as base_url:
        remote = remote_config(config, base_url, args.model)
        say(f"text: {len(items)} question(s), in-process then through {base_url}, item by item")
        text = compare_text(config, remote, items, say)
        result = RemoteResult(
            machine=machine,
            settings=llm_settings(config),
            server=args.url or f"python -m llama_cpp.server on loopback ({base_url})",
            model=remote.llm.model,
            temperature=config.llm.temperature,
            text=text,
            e2e=None if args.no_e2e else compare_e2e(config, remote, args, say),
        )
    print(text_table(HEADER, rows(result)))
    bench.end(result, markdown=markdown)
    return 0
