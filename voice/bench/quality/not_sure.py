"""``voice bench quality --fit-not-sure RESULT.json …``: what each ``[llm] not_sure_below_logprob`` would have done
to stored results, without running a model.

Every row of a ``voice bench quality`` result written since 2026-12-06's seventeenth session keeps how sure the
LLM was of its reply's first sentence (``answer_logprob_mean``; :mod:`voice.conversation.answer_confidence`). For
each threshold, the rows under it get ``[llm] not_sure_reply`` instead and are judged again by their question
set's checks, so the table says, over all the results given together, how many replies each threshold replaces,
how many right answers it costs, how many wrong ones it turns into an honest "I'm not sure", and the four
outcomes' shares (right / honest decline / asked again / wrong).

The rule that picks the threshold is fixed here, before a set it is judged on is run: **the threshold with the
lowest wrong share whose right share is at most 3 points below the share without it** (the issue's "keep right %
within 3 points"); the least strict such threshold when several tie. Rows that asked to say it again, and rows a
skill answered, are never replaced (the server's gate does not touch them either).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from voice.bench.clips import BenchError
from voice.bench.machine import REPO_ROOT, git_commit
from voice.bench.markdown import md_table, text_table, write_outputs
from voice.bench.quality.question_set import (
    Item,
    OutcomeShares,
    QuestionSetError,
    judge,
    load_items,
    outcome,
    outcome_shares,
)
from voice.bench.quality.result import QualityResult, SpokenRow, TextRow
from voice.bench.scaffold import Outputs
from voice.config.config import load_config

THRESHOLDS = tuple(round(-0.05 * k, 2) for k in range(2, 31))
"""-0.1 … -1.5 in steps of 0.05."""
MAX_RIGHT_LOSS_POINTS = 3.0


@dataclass(frozen=True)
class Point:
    """What one threshold (None: off) does to the rows."""

    below_logprob: float | None
    replaced: int
    """Replies that become ``not_sure_reply``."""
    right_lost: int
    """Of those, replies that were right."""
    wrong_caught: int
    """Of those, replies that were wrong (neither right, nor a decline, nor asking again)."""
    shares: OutcomeShares

    def to_json(self) -> dict[str, Any]:
        return {**{k: v for k, v in vars(self).items() if k != "shares"}, **self.shares.to_json()}


@dataclass(frozen=True)
class Fit:
    sources: tuple[str, ...]
    rows: int
    scored: int
    """Rows the LLM answered with log-probabilities (the only ones a threshold can touch)."""
    not_sure_reply: str
    points: tuple[Point, ...]
    """Off first, then each of :data:`THRESHOLDS`."""
    chosen: float | None
    written: str = ""
    """When, by which command and at which commit (no model ran: the replies' own runs have their machines)."""
    typed: bool = False
    """The results are text mode's: the threshold is ``not_sure_typed_below_logprob``, not the spoken one."""

    @property
    def key(self) -> str:
        """The config key the threshold is for."""
        return f"[llm] not_sure{'_typed' if self.typed else ''}_below_logprob"

    def to_json(self) -> dict[str, Any]:
        return {**vars(self), "points": [p.to_json() for p in self.points]}


Row = TypeVar("Row", bound=TextRow | SpokenRow)


def not_sure_row(row: Row, item: Item, below: float | None, reply: str, now: datetime) -> Row | None:
    """``row`` as the gate at ``below`` would have left it: None when untouched (off, a skill's reply, asked
    again, or at or over the threshold), else replaced by ``reply`` and judged again."""
    lp = row.answer_logprob_mean
    if below is None or lp is None or lp >= below or row.asked_again:
        return None
    v = judge(item, reply, now)
    return dataclasses.replace(row, reply=reply, right=v.right, refused=v.refused, failed=v.failed)


def tally(below: float | None, pairs: Sequence[tuple[Row, Row | None]]) -> Point:
    """The :class:`Point` of rows before and after (None: untouched)."""
    changed = [(before, after) for before, after in pairs if after is not None]
    return Point(
        below,
        len(changed),
        sum(before.right for before, _ in changed),
        sum(outcome(before) == "wrong" for before, _ in changed),
        outcome_shares([before if after is None else after for before, after in pairs]),
    )


def point(rows: Sequence[tuple[TextRow | SpokenRow, Item]], below: float | None, reply: str, now: datetime) -> Point:
    """The rows with the threshold ``below`` applied (None: as they are)."""
    return tally(below, [(row, not_sure_row(row, item, below, reply, now)) for row, item in rows])


def choose(points: Sequence[Point]) -> float | None:
    """The threshold :mod:`this module <voice.bench.quality.not_sure>` says to pick (None: none pays)."""
    off = points[0].shares
    if off.right_pct is None or off.wrong_pct is None:
        return None
    best: Point | None = None
    for p in points[1:]:
        right, wrong = p.shares.right_pct, p.shares.wrong_pct
        if right is None or wrong is None or right < off.right_pct - MAX_RIGHT_LOSS_POINTS:
            continue
        if wrong >= off.wrong_pct:
            continue  # catches nothing
        if best is None or best.shares.wrong_pct is None or wrong <= best.shares.wrong_pct:
            best = p
    return best.below_logprob if best else None


def fit(rows: Sequence[tuple[TextRow | SpokenRow, Item]], sources: Sequence[str], reply: str, now: datetime) -> Fit:
    points = tuple(point(rows, below, reply, now) for below in (None, *THRESHOLDS))
    scored = sum(r.answer_logprob_mean is not None for r, _ in rows)
    return Fit(tuple(sources), len(rows), scored, reply, points, choose(points))


def rows_of(path: Path, option: str = "--fit-not-sure") -> list[tuple[TextRow | SpokenRow, Item]]:
    """The rows of a stored ``voice bench quality`` result, each with its item (errors name ``option``)."""
    try:
        result = QualityResult.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise BenchError(f"{option} {path}: can't be read as a voice bench quality result ({e})") from None
    set_path = Path(result.question_set)
    if not set_path.exists():
        set_path = REPO_ROOT / "benchmarks" / set_path.name
    try:
        items = {i.id: i for i in load_items(set_path)}
    except QuestionSetError as e:
        raise BenchError(f"{option} {path}: {e}") from None
    rows: list[tuple[TextRow | SpokenRow, Item]] = []
    for model in result.models:
        for row in model.rows:
            item = items.get(row.id.partition("@")[0])
            if item is None:
                raise BenchError(f"{option} {path}: item {row.id!r} is not in {set_path}")
            rows.append((row, item))
    return rows


def points_table(setting: str, replaced: str, points: Sequence[Point], chosen: float | None) -> list[str]:
    """The Markdown lines of a fit's table (one row per point: ``setting``'s value, ``replaced`` replies, right lost,
    wrong caught, the four outcomes) and the rule's pick; :mod:`voice.bench.quality.ask_again_fit` writes its own
    fit with them too."""
    head = [f"`{setting}`", replaced, "right lost", "wrong caught", "right %", "decline %", "asked again %", "wrong %"]
    body = [
        ["off" if p.below_logprob is None else f"{p.below_logprob:g}", p.replaced, p.right_lost, p.wrong_caught,
         *p.shares.values()]
        for p in points
    ]  # fmt: skip
    pick = "none pays" if chosen is None else f"**{chosen:g}**"
    return [
        md_table(head, body, align="l" + "r" * 7),
        "",
        f"The rule (lowest wrong share with right at most {MAX_RIGHT_LOSS_POINTS:g} points below off) picks: {pick}.",
    ]


def written(now: datetime) -> str:
    """When, by which command and at which commit a fit was written (no model ran)."""
    return f"Written {now:%Y-%m-%d %H:%M %Z} by `voice {' '.join(sys.argv[1:])}` at commit `{git_commit()}`."


def markdown(result: Fit) -> str:
    return "\n".join([
        "# `[llm] not_sure` thresholds on stored replies",
        "",
        f"{result.rows} replies from {len(result.sources)} results, {result.scored} written by the LLM with "
        f"log-probabilities. Replaced by {result.not_sure_reply!r} and judged again.",
        "",
        *(f"- `{s}`" for s in result.sources),
        "",
        *points_table(result.key, "replaced", result.points, result.chosen),
        "",
        result.written,
    ])  # fmt: skip


def run(args: argparse.Namespace) -> int:
    paths: list[Path] = args.fit_not_sure
    reply = load_config(args.config).llm.not_sure_reply
    of_path = {p: rows_of(p) for p in paths}
    rows = [r for p in paths for r in of_path[p]]
    typed = {p: isinstance(found[0][0], TextRow) for p, found in of_path.items() if found}
    if len(set(typed.values())) > 1:
        spoken = ", ".join(str(p) for p, t in typed.items() if not t)
        raise BenchError(
            f"--fit-not-sure: {spoken} are spoken results and the others typed; fit each kind alone, since "
            "[llm] not_sure_below_logprob and not_sure_typed_below_logprob are separate bars"
        )
    now = datetime.now().astimezone()
    result = dataclasses.replace(
        fit(rows, [str(p) for p in paths], reply, now), written=written(now), typed=any(typed.values())
    )
    head = ["threshold", "replaced", "right lost", "wrong caught", "right %", "wrong %"]
    print(text_table(head, [[str(p.below_logprob), str(p.replaced), str(p.right_lost), str(p.wrong_caught),
                             str(p.shares.right_pct), str(p.shares.wrong_pct)] for p in result.points]))  # fmt: skip
    print(f"chosen: {result.chosen}")
    out = Outputs.from_args(args)
    write_outputs(result, png_path=None, md_path=out.md, json_path=out.json, plot=None,
                  markdown=lambda r, _png, _md: markdown(r) + "\n")  # fmt: skip
    return 0
