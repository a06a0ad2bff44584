"""The report of ``voice bench contention`` (:mod:`voice.bench.contention.measure`): the tables per mode and
per wait policy, the console summary, the Markdown and the chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voice.bench import plots
from voice.bench.contention.result import ContentionResult, PolicyRun
from voice.bench.machine import guard_markdown, machine_markdown
from voice.bench.markdown import md_table, ratio, relative_link


def _table(res: PolicyRun) -> tuple[list[str], list[list[Any]]]:
    s = res.summary
    header = [
        "mode",
        f"STT {res.stt} ({res.clip_s} s clip) p50 / p95 ms",
        "STT slowdown",
        f"LLM {res.llm} ({res.tokens} tokens) p50 / p95 ms",
        "LLM slowdown",
        "STT / LLM gate wait p50 ms",
        "STT / LLM compute slowdown",
        "both done p50 ms",
        "vs one after the other",
    ]
    sa, la = s.stt_alone_ms, s.llm_alone_ms
    rows: list[list[Any]] = [
        [
            "alone",
            f"{sa.p50:.0f} / {sa.p95:.0f}",
            "1x",
            f"{la.p50:.0f} / {la.p95:.0f}",
            "1x",
            "0 / 0",
            "1x / 1x",
            f"{s.serial_makespan_p50_ms:.0f} (sum)",
            "1x",
        ],
    ]
    for mode, m in s.together():
        rows.append(
            [
                "together, no gate" if mode == "both, no gate" else "together, through the gate",
                f"{m.stt_ms.p50:.0f} / {m.stt_ms.p95:.0f}",
                ratio(m.stt_slowdown),
                f"{m.llm_ms.p50:.0f} / {m.llm_ms.p95:.0f}",
                ratio(m.llm_slowdown),
                f"{m.stt_wait_ms.p50:.0f} / {m.llm_wait_ms.p50:.0f}",
                f"{ratio(m.stt_compute_slowdown)} / {ratio(m.llm_compute_slowdown)}",
                f"{m.makespan_ms.p50:.0f}",
                ratio(m.makespan_vs_serial),
            ]
        )
    return header, rows


def _policy_table(results: dict[str, PolicyRun]) -> tuple[list[str], list[list[Any]]]:
    first = next(iter(results.values())).summary
    ref = {"stt": first.stt_alone_ms.p50, "llm": first.llm_alone_ms.p50}

    def cell(value: float | None, job: str) -> str:
        if value is None:
            return "—"
        alone = ref[job]
        return f"{value:.0f} ({value / alone:.2f}x)" if alone else f"{value:.0f}"

    header = ["policy", "STT alone", "LLM alone", "STT, no gate", "LLM, no gate", "STT, gate", "LLM, gate",
              "both done: no gate / gate"]  # fmt: skip
    rows = []
    for name, res in results.items():
        s = res.summary
        ng, g = s.no_gate, s.gate
        rows.append(
            [
                name,
                cell(s.stt_alone_ms.p50, "stt"),
                cell(s.llm_alone_ms.p50, "llm"),
                cell(ng.stt_ms.p50, "stt"),
                cell(ng.llm_ms.p50, "llm"),
                cell(g.stt_ms.p50, "stt"),
                cell(g.llm_ms.p50, "llm"),
                f"{ng.makespan_ms.p50:.0f} / {g.makespan_ms.p50:.0f}",
            ]
        )
    return header, rows


def _headline(name: str, res: PolicyRun) -> str:
    ng, g = res.summary.no_gate, res.summary.gate
    return (
        f"{name}: without the gate STT ran {ratio(ng.stt_slowdown)} and the LLM {ratio(ng.llm_slowdown)} "
        f"slower than alone (both done in {ratio(ng.makespan_vs_serial)} the time of running them one after "
        f"the other); through the gate STT {ratio(g.stt_slowdown)}, LLM {ratio(g.llm_slowdown)} "
        f"(it waits for the transcription; its own compute {ratio(g.llm_compute_slowdown)}), both done in "
        f"{ratio(g.makespan_vs_serial)}."
    )


def console(result: ContentionResult) -> str:
    from voice.bench.markdown import text_table

    parts = []
    for name, res in result.results.items():
        parts += [f"{name}: {res.policy_note}", text_table(*_table(res)), _headline(name, res), ""]
    return "\n".join(parts)


def markdown(result: ContentionResult, png: Path | None, md: Path | None) -> str:
    first = next(iter(result.results.values()))
    out = [
        "# Contention: STT and LLM on the same cores, with and without the compute gate",
        "",
        machine_markdown(result.machine),
        "",
        f"STT `{first.stt}` transcribes `{Path(first.clip).name}` ({first.clip_s} s; heard: "
        f"{first.transcript!r}); LLM `{first.llm}` generates {first.tokens} tokens greedily from a "
        f"fresh context. Threads: STT {first.stt_cpu_threads}, LLM "
        f"{first.llm_n_threads}. {first.repeats} repeats per mode after a warm-up round; "
        "slowdowns are p50 / p50 of the same job alone, measured in the same run.",
        "",
        "## Headline",
        "",
        *[f"- {_headline(name, res)}" for name, res in result.results.items()],
        "",
    ]
    if png is not None:
        out += [f"![slowdowns]({relative_link(png, md) if md else png.as_posix()})", ""]
    if len(result.results) > 1:
        out += [
            "## Policies side by side",
            "",
            "p50 wall times in ms; in brackets, the ratio to the same job alone under the first policy — so "
            "a policy that slows a model down even when it runs alone (the other library's idle threads "
            "still spinning) shows here.",
            "",
            md_table(*_policy_table(result.results), align="lrrrrrrr"),
            "",
        ]
    for name, res in result.results.items():
        note = guard_markdown(res.guard)
        out += [f"## {name}", "", res.policy_note + ".", *(["", note] if note else []), ""]
        out += [md_table(*_table(res), align="lrrrrrrrr"), ""]
    out += [
        "## Method",
        "",
        "- **alone**: one job on an otherwise idle process. **together, no gate**: both released by one "
        "barrier with `ComputeGate(enabled=False)`. **together, through the gate**: `ComputeGate()` used as "
        "`voice/runtime/runtime.py` uses it: the whole `transcribe` call holds `slot(Priority.STT)`, every LLM "
        "`next()` holds `slot(Priority.LLM)`; STT outranks LLM, so it waits at most one token, and the LLM "
        "waits for the whole transcription.",
        "- **slowdown** = p50 wall time in the mode / p50 wall time alone. **gate wait** = time the job spent "
        "blocked in `gate.slot()`; **compute slowdown** = p50 of (wall − gate wait) / p50 alone: how much the "
        "other model slowed this one's own work down (≈1x when they never run at once). **both done** = from "
        "the barrier until the later job ends; *vs one after the other* compares it with STT alone + LLM "
        "alone (p50s).",
        "- The LLM job is `Llama.reset()` then the prompt evaluated and exactly the given number of tokens "
        "generated (end-of-sequence ignored), so every run does the same work. Its first step evaluates the "
        "prompt; when it holds the gate at the start, the STT waits for that whole step (a step is not "
        "preemptible), which shows as STT gate wait. In the server a new turn's STT usually meets the LLM "
        "mid-reply and waits one token.",
    ]
    return "\n".join(out)


def plot(result: ContentionResult, path: Path) -> None:
    groups: list[str] = []
    stt: list[float] = []
    llm: list[float] = []
    for name, res in result.results.items():
        for m, label in ((res.summary.no_gate, "no gate"), (res.summary.gate, "gate")):
            groups.append(f"{name}\n{label}")
            stt.append(m.stt_slowdown or 0.0)
            llm.append(m.llm_slowdown or 0.0)
    mach = result.machine
    plots.grouped_bars(
        path,
        groups,
        {"STT slowdown vs alone": stt, "LLM slowdown vs alone": llm},
        f"STT and LLM at the same time: slowdown vs alone\n{mach.cpu_model}, {mach.cores_usable} cores, "
        f"{mach.date}",
        "wall time / wall time alone (p50)",
        reference=1.0,
        reference_label="as fast as alone",
    )
