"""``voice bench quality --fit-ask-again RESULT.json …``: what each ``[stt] ask_again_llm_below_logprob`` would have
done to stored spoken results, without running a model.

In the server, words no skill takes (the LLM's to answer) whose STT confidence is under that bar are asked again
before the LLM sees them (:mod:`voice.turn.ask_again`). Replayed on a stored spoken row the LLM answered
(``by = "llm"``) under the bar, its reply becomes ``[stt] ask_again_reply`` and it counts as asked again. Every row
first gets the configured ``[llm] not_sure`` gate replayed (:func:`~voice.bench.quality.not_sure.not_sure_row`), so
"off" is today's server and each bar is measured against it.

Two approximations, stated in the report: a row's STT confidence is the lowest over its turns (a follow-up's earlier
turns included), and a follow-up whose earlier turn would have been asked again would have gone on differently,
which a replay cannot show.

``--fit-ask-again-words`` does the same for ``[stt] ask_again_llm_below_word_prob`` (:data:`WORD_PROB`: the least
likely word's probability, which the STT reads only with that bar on: to fit it afresh, run with a bar under every
one tried, such as 0.01), after replaying the configured mean bar too; its points keep the field name
``below_logprob`` (shared with the ``not_sure`` fit's JSON) for a probability.

The rule that picks the bar is the one :func:`voice.bench.quality.not_sure.choose` applies, fixed before a set it is
judged on is run: the lowest wrong share with right at most 3 points below off, the least strict on ties.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from voice.bench.clips import BenchError
from voice.bench.markdown import text_table, write_outputs
from voice.bench.quality.not_sure import Point, choose, not_sure_row, points_table, rows_of, tally, written
from voice.bench.quality.question_set import Item
from voice.bench.quality.result import SpokenRow
from voice.bench.scaffold import Outputs
from voice.config.config import load_config

THRESHOLDS = tuple(round(-0.05 * k, 2) for k in range(4, 13))
"""-0.2 … -0.6 in steps of 0.05 (-0.6 is today's general bar, ``ask_again_below_logprob``)."""


@dataclass(frozen=True)
class Signal:
    """What a bar is set on: the config key, the row's value and the bars tried, strictest first (the rule takes
    the last of equal ones: the least strict)."""

    key: str
    value: Callable[[SpokenRow], float | None]
    bars: tuple[float, ...]
    flag: str


MEAN_LOGPROB = Signal("ask_again_llm_below_logprob", lambda r: r.stt_avg_logprob, THRESHOLDS, "--fit-ask-again")
WORD_PROB = Signal(
    "ask_again_llm_below_word_prob",
    lambda r: r.stt_min_word_prob,
    tuple(round(0.05 * k, 2) for k in range(10, 0, -1)),
    "--fit-ask-again-words",
)
"""``--fit-ask-again-words``: the least likely word's probability, bars 0.5 … 0.05; the configured mean
log-probability bar is replayed first, so off is today's server."""


@dataclass(frozen=True)
class AskAgainFit:
    sources: tuple[str, ...]
    rows: int
    scored: int
    """Rows the LLM answered with an STT confidence (the only ones a bar can touch)."""
    ask_again_reply: str
    not_sure_below_logprob: float | None
    """The ``[llm] not_sure`` gate replayed on every row first (None: off)."""
    points: tuple[Point, ...]
    """Off (today's server) first, then each of :data:`THRESHOLDS`."""
    chosen: float | None
    written: str = ""
    signal: str = MEAN_LOGPROB.key
    """The ``[stt]`` key fitted (results before the word fit lack it: the mean log-probability's)."""
    logprob_below: float | None = None
    """Fitting another signal: the mean log-probability bar replayed first (None: that fit, or off)."""

    def to_json(self) -> dict[str, Any]:
        d = {**vars(self), "points": [p.to_json() for p in self.points]}
        if self.signal == MEAN_LOGPROB.key:
            del d["signal"], d["logprob_below"]
        return d


def asked_again_row(
    row: SpokenRow, below: float | None, reply: str, signal: Signal = MEAN_LOGPROB
) -> SpokenRow | None:
    """``row`` as the bar ``below`` on ``signal`` would have left it: None when untouched (off, a skill's reply,
    asked again already, no confidence, or at or over the bar), else asked again."""
    lp = signal.value(row)
    if below is None or row.by != "llm" or row.asked_again or lp is None or lp >= below:
        return None
    return dataclasses.replace(
        row, reply=reply, right=False, refused=False, asked_again=True, failed=(*row.failed, "asked to say it again")
    )


def fit(
    rows: Sequence[tuple[SpokenRow, Item]],
    sources: Sequence[str],
    *,
    reply: str,
    not_sure_below: float | None,
    not_sure_reply: str,
    now: datetime,
    signal: Signal = MEAN_LOGPROB,
    logprob_below: float | None = None,
) -> AskAgainFit:
    """Each bar of ``signal`` on ``rows``, after the ``not_sure`` gate and (fitting another signal) the mean
    log-probability bar ``logprob_below`` are replayed."""
    today = [not_sure_row(row, item, not_sure_below, not_sure_reply, now) or row for row, item in rows]
    if signal is not MEAN_LOGPROB:
        today = [asked_again_row(row, logprob_below, reply) or row for row in today]
    points = tuple(
        tally(below, [(row, asked_again_row(row, below, reply, signal)) for row in today])
        for below in (None, *signal.bars)
    )
    scored = sum(r.by == "llm" and not r.asked_again and signal.value(r) is not None for r in today)
    return AskAgainFit(
        tuple(sources), len(rows), scored, reply, not_sure_below, points, choose(points), signal=signal.key,
        logprob_below=logprob_below if signal is not MEAN_LOGPROB else None,
    )  # fmt: skip


def spoken_rows_of(path: Path, signal: Signal = MEAN_LOGPROB) -> list[tuple[SpokenRow, Item]]:
    rows = rows_of(path, signal.flag)
    spoken = [(row, item) for row, item in rows if isinstance(row, SpokenRow)]
    if len(spoken) != len(rows):
        raise BenchError(f"{signal.flag} {path}: a text-mode result; the STT's confidence is in spoken results only")
    if not any(signal.value(row) is not None for row, _ in spoken):
        raise BenchError(f"{signal.flag} {path}: no row records {signal.key}'s signal (a result from before it)")
    return spoken


def markdown(result: AskAgainFit) -> str:
    gate = "off" if result.not_sure_below_logprob is None else f"at {result.not_sure_below_logprob:g}"
    also = ""
    if result.signal != MEAN_LOGPROB.key:
        bar = "off" if result.logprob_below is None else f"at {result.logprob_below:g}"
        also = f" and the `[stt] ask_again_llm_below_logprob` bar ({bar})"
    return "\n".join([
        f"# `[stt] {result.signal}` bars on stored spoken replies",
        "",
        f"{result.rows} replies from {len(result.sources)} results, {result.scored} written by the LLM with the "
        f"STT's confidence. Under a bar, such a reply becomes {result.ask_again_reply!r} (asked again). Every row "
        f"first has the `[llm] not_sure` gate ({gate}){also} replayed, so off is today's server.",
        "",
        "Approximations: a row's STT confidence is the lowest over its turns, and a follow-up asked again in an "
        "earlier turn would have gone on differently.",
        "",
        *(f"- `{s}`" for s in result.sources),
        "",
        *points_table(f"[stt] {result.signal}", "asked again instead", result.points, result.chosen),
        "",
        result.written,
    ])  # fmt: skip


def run(args: argparse.Namespace) -> int:
    words = bool(getattr(args, "fit_ask_again_words", None))
    signal = WORD_PROB if words else MEAN_LOGPROB
    paths: list[Path] = args.fit_ask_again_words if words else args.fit_ask_again
    config = load_config(args.config)
    rows = [r for p in paths for r in spoken_rows_of(p, signal)]
    now = datetime.now().astimezone()
    llm = config.llm
    result = dataclasses.replace(
        fit(
            rows,
            [str(p) for p in paths],
            reply=config.stt.ask_again_reply,
            not_sure_below=llm.not_sure_below_logprob if llm.not_sure else None,
            not_sure_reply=llm.not_sure_reply,
            now=now,
            signal=signal,
            logprob_below=(
                max(config.stt.ask_again_below_logprob, config.stt.ask_again_llm_below_logprob)
                if config.stt.ask_again
                else None
            ),
        ),
        written=written(now),
    )
    head = ["bar", "asked again instead", "right lost", "wrong caught", "right %", "asked again %", "wrong %"]
    print(text_table(head, [[str(p.below_logprob), str(p.replaced), str(p.right_lost), str(p.wrong_caught),
                             str(p.shares.right_pct), str(p.shares.asked_again_pct), str(p.shares.wrong_pct)]
                            for p in result.points]))  # fmt: skip
    print(f"chosen: {result.chosen}")
    out = Outputs.from_args(args)
    write_outputs(result, png_path=None, md_path=out.md, json_path=out.json, plot=None,
                  markdown=lambda r, _png, _md: markdown(r) + "\n")  # fmt: skip
    return 0
