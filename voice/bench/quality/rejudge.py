"""``voice bench quality --rejudge RESULT.json``: a committed result judged again by the question set's checks as
they are now, without running a model.

When a check is found too loose or too strict, every earlier result that used it is wrong by the same items; this
re-scores their stored replies, so the fix reaches them instead of a note saying "one item high". The run's
machine record, replies, transcripts and timings are kept as they were; the verdicts, the summaries and a line
saying when and with which checks it was judged again are new. The summaries count the four outcomes (right /
honest decline / asked again / wrong) whatever the result counted when it ran, so an older result judged again
reports them too; a reply that is the config's ``[stt] ask_again_reply`` counts as asked again (a spoken one too:
a result made before the turn's report counted the reply check's ask-again in ``asked_again`` missed it).

Two kinds of row keep their verdict (right or not; whether the reply declines is judged again): clock items
(their check needs the moment the reply was given, which the result does not keep), and a row that asked to say
it again (never right, whatever the checks say, as when it ran). An item of the result that the set no longer
has, or asks differently, is an error: its reply answers another question.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from voice.bench.clips import BenchError
from voice.bench.machine import REPO_ROOT, git_commit
from voice.bench.markdown import text_table, write_outputs
from voice.bench.quality.declines import declines
from voice.bench.quality.measure import DEFAULT_SET, as_stt_writes, asks_to_say_it_again, summarize
from voice.bench.quality.question_set import Item, QuestionSetError, judge, load_items
from voice.bench.quality.report import markdown, spoken_table, text_summary_table
from voice.bench.quality.result import (
    ModelQuality,
    QualityResult,
    Row,
    SpokenResult,
    SpokenRow,
    Summary,
    TextResult,
    TextRow,
    TextSummary,
)
from voice.bench.quality.spoken import summarize_spoken
from voice.bench.scaffold import Outputs
from voice.config.config import load_config

#: Options that ask models (or choose what they are asked): meaningless when judging stored replies again.
MODEL_OPTIONS = ("spoken", "stt", "speech", "voices", "llm", "items", "as_transcribed")


@dataclass(frozen=True)
class Change:
    """An item whose verdict the current checks give differently."""

    llm: str
    id: str
    right_before: bool
    right_now: bool
    failed: tuple[str, ...]

    def text(self) -> str:
        yes = {True: "right", False: "wrong"}
        why = f" ({'; '.join(self.failed)})" if self.failed else ""
        return f"{self.llm} `{self.id}` {yes[self.right_before]} → {yes[self.right_now]}{why}"


def _item_for(row_id: str, question: str, items: Mapping[str, Item], as_transcribed: bool) -> Item:
    item = items.get(row_id.partition("@")[0])  # a recording's row is "<item id>@<file>"
    if item is None:
        raise BenchError(
            f"item {row_id!r} of the result is not in the question set: its reply can't be judged again"
        )
    asked = as_stt_writes(item).question if as_transcribed else item.question
    if asked != question:
        raise BenchError(
            f"item {row_id!r} asked {question!r} in the result but asks {asked!r} in the question set: its reply "
            "answers another question"
        )
    return item


def _judged_again(row: Row, item: Item, now: datetime, ask_again_reply: str | None) -> Row:
    """``row`` with the verdict of ``item``'s checks; a clock item's row, or one that asked to say it again, as it
    was but for whether it declines. A row whose reply is ``ask_again_reply`` or a skill's that asks again
    (:func:`~voice.skills.answer.asks_again`) asked to say it again."""
    if not row.asked_again and asks_to_say_it_again(row.reply, ask_again_reply):
        failed = (*row.failed, "asked to say it again")
        row = dataclasses.replace(row, asked_again=True, right=False, failed=failed)
    if item.clock or row.asked_again:
        return dataclasses.replace(row, refused=declines(row.reply))
    v = judge(item, row.reply, now)
    return dataclasses.replace(
        row,
        right=v.right,
        refusal_expected=item.refusal,
        refused=v.refused,
        repeats=v.repeats,
        failed=v.failed,
    )


def rejudge(
    result: TextResult | SpokenResult, items: Sequence[Item], *, note: str, ask_again_reply: str | None = None
) -> tuple[TextResult | SpokenResult, list[Change]]:
    """``result`` judged by ``items``' checks, and the items whose verdict changed; ``note`` says when, from
    what and with which checks (it goes into the result's ``rejudged``); a reply that is ``ask_again_reply``
    asked to say it again."""
    by_id = {i.id: i for i in items}
    changes: list[Change] = []
    if result.mode == "spoken":
        spoken = cast("SpokenResult", result)
        models_s = _models(spoken.models, summarize_spoken, by_id, (False, ask_again_reply), changes)
        return dataclasses.replace(spoken, models=models_s, rejudged=_summary(note, changes)), changes
    text = cast("TextResult", result)
    models_t = _models(text.models, _summarize_text, by_id, (text.as_transcribed, ask_again_reply), changes)
    return dataclasses.replace(text, models=models_t, rejudged=_summary(note, changes)), changes


def _summarize_text(rows: Sequence[TextRow]) -> TextSummary:
    return summarize(rows, outcomes=True)


def _models(
    models: Sequence[ModelQuality[Summary, Row]],
    summarize_rows: Callable[[Sequence[Row]], Summary],
    items: Mapping[str, Item],
    asked: tuple[bool, str | None],
    changes: list[Change],
) -> tuple[ModelQuality[Summary, Row], ...]:
    """Each model's rows judged again and summarized anew; the verdicts that changed are added to ``changes``.
    ``asked``: whether the questions were written as the STT writes them, and the reply that asks again."""
    now = datetime.now().astimezone()  # no clock item is judged again: any moment will do
    as_transcribed, ask_again_reply = asked
    out = []
    for m in models:
        rows = tuple(
            _judged_again(r, _item_for(r.id, r.question, items, as_transcribed), now, ask_again_reply)
            for r in m.rows
        )
        changes += _changes(m.llm, m.rows, rows)
        out.append(ModelQuality(m.llm, summarize_rows(rows), rows))
    return tuple(out)


def _changes(
    llm: str, before: Sequence[TextRow | SpokenRow], after: Sequence[TextRow | SpokenRow]
) -> list[Change]:
    pairs = zip(before, after, strict=True)
    return [Change(llm, b.id, b.right, a.right, a.failed) for b, a in pairs if a.right != b.right]


def _summary(note: str, changes: Sequence[Change]) -> str:
    return f"{note}. Verdicts changed: {'; '.join(c.text() for c in changes) if changes else 'none'}."


def note_for(source: Path, question_set: Path) -> str:
    """When, from which result and with which checks (the set at the current commit)."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    checks = f"`{_shown(question_set)}` at commit `{git_commit()}`"
    return f"Judged again on {at} from `{source}` with the checks of {checks}"


def _shown(path: Path) -> Path:
    """``path`` relative to the repository when it is inside it."""
    try:
        return path.resolve().relative_to(REPO_ROOT)
    except ValueError:
        return path


def run(args: argparse.Namespace) -> int:
    """``voice bench quality --rejudge RESULT.json [--questions SET] [--config CONFIG] [--out PREFIX]``."""
    given = [f"--{k.replace('_', '-')}" for k in MODEL_OPTIONS if getattr(args, k, None)]
    if given:
        raise BenchError(f"--rejudge runs no model: {', '.join(given)} can't go with it")
    source: Path = args.rejudge
    try:
        data = json.loads(source.read_text())
    except (OSError, ValueError) as e:
        raise BenchError(f"--rejudge {source}: {e}") from None
    try:
        result = QualityResult.from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BenchError(
            f"--rejudge {source}: can't be read as a voice bench quality result (no {e})"
        ) from None
    set_path: Path = args.questions or DEFAULT_SET
    try:
        items = load_items(set_path)
    except QuestionSetError as e:
        raise BenchError(str(e)) from None
    out = Outputs.from_args(args)
    if source.resolve() in {p.resolve() for p in (out.json, out.md) if p is not None}:
        raise BenchError(f"--rejudge: write beside {source}, not over it (another --out)")
    ask_again_reply = load_config(getattr(args, "config", None)).stt.ask_again_reply
    judged, changes = rejudge(result, items, note=note_for(source, set_path), ask_again_reply=ask_again_reply)
    print(f"{len(changes)} verdict(s) changed" + "".join(f"\n  {c.text()}" for c in changes))
    if result.mode == "spoken":
        print(text_table(*spoken_table(cast("SpokenResult", judged).models)))
    else:
        print(text_table(*text_summary_table(cast("TextResult", judged).models)))
    write_outputs(judged, png_path=None, md_path=out.md, json_path=out.json, plot=None,
                  markdown=lambda r, _png, _md: markdown(r) + "\n")  # fmt: skip
    return 0
