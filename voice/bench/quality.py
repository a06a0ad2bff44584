"""``voice bench quality`` (text mode): is the reply right, beside how fast it came.

Every question of the set goes straight to the LLM with the configured system prompt, after the item's
earlier turns (their replies kept in the history, as the server keeps them). Greedy decoding, so results
are deterministic for a model and config. Each reply is judged by :mod:`voice.bench.quality_set`.
Spoken length is estimated from the word count at 150 words per minute (Piper's joe-medium speaks ~2.5
words/s at length_scale 1.0).
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from voice.backends.llm_skills import SkillsLlm
from voice.bench.clips import BenchError
from voice.bench.e2e_cmd import output_paths
from voice.bench.llms import llm_settings, load_llm, names
from voice.bench.machine import BENCHMARKS_DIR, finish, machine_info, machine_markdown
from voice.bench.markdown import md_table, text_table
from voice.bench.quality_set import Item, QuestionSetError, judge, load_items
from voice.config import Config, load_config
from voice.stages import ChatMessage, TextDelta

DEFAULT_SET = BENCHMARKS_DIR / "quality_questions.toml"
WORDS_PER_S = 2.5


def ask(llm: Any, config: Config, history: list[ChatMessage], question: str) -> dict[str, Any]:
    """One turn: the reply, its token count, TTFT and reply time (monotonic clock)."""
    messages = [ChatMessage("system", config.llm.system_prompt), *history, ChatMessage("user", question)]
    start_s = time.monotonic()
    first_s: float | None = None
    text, tokens = "", 0
    for ev in llm.generate(messages, max_tokens=config.llm.max_reply_tokens, cancel=threading.Event()):
        if isinstance(ev, TextDelta):
            tokens += 1
            if first_s is None:
                first_s = time.monotonic()
            text += ev.text
    end_s = time.monotonic()
    return {
        "reply": text.strip(),
        "tokens": tokens,
        "ttft_ms": round(((first_s or end_s) - start_s) * 1000, 1),
        "reply_ms": round((end_s - start_s) * 1000, 1),
    }


def run_item(llm: Any, config: Config, item: Item) -> dict[str, Any]:
    history: list[ChatMessage] = []
    for q in item.previous:
        prev = ask(llm, config, history, q)
        history += [ChatMessage("user", q), ChatMessage("assistant", prev["reply"])]
    res = ask(llm, config, history, item.question)
    verdict = judge(item, res["reply"], datetime.now().astimezone())
    words = len(res["reply"].split())
    return {
        "id": item.id,
        "category": item.category,
        "question": item.question,
        **res,
        "right": verdict.right,
        "refusal_expected": item.refusal,
        "refused": verdict.refused,
        "repeats": verdict.repeats,
        "hit_cap": res["tokens"] >= config.llm.max_reply_tokens,
        "words": words,
        "spoken_s_est": round(words / WORDS_PER_S, 1),
        "failed": list(verdict.failed),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def pct(n: int, d: int) -> float | None:
        return round(100 * n / d, 1) if d else None

    refusals = [r for r in rows if r["refusal_expected"]]
    by_cat = {
        c: pct(sum(r["right"] for r in rows if r["category"] == c), sum(r["category"] == c for r in rows))
        for c in dict.fromkeys(r["category"] for r in rows)
    }
    return {
        "items": len(rows),
        "right_pct": pct(sum(r["right"] for r in rows), len(rows)),
        "honest_refusal_pct": pct(sum(r["refused"] for r in refusals), len(refusals)),
        "cap_or_repeat_pct": pct(sum(r["hit_cap"] or r["repeats"] for r in rows), len(rows)),
        "median_spoken_s_est": statistics.median(r["spoken_s_est"] for r in rows),
        "median_ttft_ms": statistics.median(r["ttft_ms"] for r in rows),
        "median_reply_ms": statistics.median(r["reply_ms"] for r in rows),
        "right_pct_by_category": by_cat,
    }


SUMMARY_HEADER = [
    "llm", "items", "right %", "honest refusals %", "cap/repeat %", "median spoken s (est.)",
    "median TTFT ms", "median reply ms",
]  # fmt: skip


def summary_row(name: str, s: dict[str, Any]) -> list[Any]:
    return [
        name, s["items"], s["right_pct"], s["honest_refusal_pct"], s["cap_or_repeat_pct"],
        s["median_spoken_s_est"], s["median_ttft_ms"], s["median_reply_ms"],
    ]  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    parts = ["# voice bench quality (text mode)", "", machine_markdown(result["machine"]), ""]
    parts += [f"Question set: `{result['question_set']}`; system prompt: {result['system_prompt']!r}; "
              f"max_reply_tokens {result['max_reply_tokens']}; greedy.", ""]  # fmt: skip
    parts += [md_table(SUMMARY_HEADER, [summary_row(m["llm"], m["summary"]) for m in result["models"]]), ""]
    for m in result["models"]:
        cats = m["summary"]["right_pct_by_category"]
        parts += [f"## {m['llm']}", "", "Right % by category: "
                  + ", ".join(f"{k} {v}" for k, v in cats.items()), ""]  # fmt: skip
        rows = [
            [r["id"], r["question"], r["reply"], "yes" if r["right"] else "no", "; ".join(r["failed"]),
             r["tokens"], r["ttft_ms"], r["reply_ms"]]
            for r in m["rows"]
        ]  # fmt: skip
        parts += [md_table(["id", "question", "reply", "right", "why not", "tokens", "TTFT ms", "reply ms"],
                           rows, align="llllllrr"), ""]  # fmt: skip
    return "\n".join(parts)


def run(args: argparse.Namespace) -> int:
    json_path, md_path, _ = output_paths(args)
    config = load_config(args.config)
    set_path: Path = args.questions or DEFAULT_SET
    try:
        items = load_items(set_path)
    except QuestionSetError as e:
        raise BenchError(str(e)) from None
    if args.items:
        wanted = {x.strip() for x in args.items.split(",")}
        items = [i for i in items if i.id in wanted or i.category in wanted]
    llm_names = names(args.llm, config.llm.model)
    result: dict[str, Any] = {
        "machine": machine_info(),
        **llm_settings(config),
        "question_set": str(set_path),
        "system_prompt": config.llm.system_prompt,
        "max_reply_tokens": config.llm.max_reply_tokens,
        "skills": config.llm.skills,
        "models": [],
    }
    for name in llm_names:
        print(f"loading {name} …", flush=True)
        llm: Any = load_llm(config, name)
        if config.llm.skills:
            llm = SkillsLlm(llm)
        rows = []
        for item in items:
            row = run_item(llm, config, item)
            print(f"  {'ok ' if row['right'] else 'BAD'} {item.id}: {row['reply'][:90]!r}", flush=True)
            rows.append(row)
        result["models"].append({"llm": name, "summary": summarize(rows), "rows": rows})
        del llm
    finish(result["machine"])
    print(text_table(SUMMARY_HEADER, [summary_row(m["llm"], m["summary"]) for m in result["models"]]))
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if md_path:
        md_path.parent.mkdir(parents=True, exist_ok=True)
        md_path.write_text(markdown(result) + "\n", encoding="utf-8")
    return 0
