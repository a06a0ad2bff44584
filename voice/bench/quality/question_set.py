"""The question set of ``voice bench quality`` and how a reply is judged right (pure, no models).

Items come from a TOML file (``benchmarks/quality_questions.toml``); see the comment at its top for the keys.
A reply is *right* when it passes every check the item states. Clock checks are made against the ``now``
given to :func:`judge`, so that a reply is judged against the time it was produced.

Every reply has exactly one of four :data:`OUTCOMES` (:func:`outcome`): right; else asked to say it again; else
an honest decline (:func:`~voice.bench.quality.declines.declines`: "I can't …", "I don't know", and nothing
done anyway); else wrong.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from voice.bench.quality.declines import declines
from voice.config.tomlfile import load_toml
from voice.conversation.loops import repeats

CATEGORIES = ("knowledge", "clock", "arithmetic", "followup", "cannot", "ramble", "timer")
CLOCKS = ("time", "date", "weekday", "year", "month")
_KEYS = {"id", "category", "question", "previous", "any", "all", "none", "regex", "clock", "refusal"}

OUTCOMES = ("right", "declined", "asked_again", "wrong")
"""What became of a reply, each exactly one of these: right (passes the item's checks), asked the user to say it
again, honestly declined ("I can't …", "I don't know"), or wrong (anything else: confidently wrong)."""
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class QuestionSetError(ValueError):
    """The question file is malformed; the message names the item and the key."""


@dataclass(frozen=True)
class Item:
    id: str
    category: str
    question: str
    previous: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    all_of: tuple[str, ...] = ()
    none_of: tuple[str, ...] = ()
    regex: str = ""
    clock: str = ""
    refusal: bool = False


@dataclass(frozen=True)
class Verdict:
    right: bool
    refused: bool
    """The reply honestly declines (:func:`~voice.bench.quality.declines.declines`), whether or not that was the
    right answer."""
    repeats: bool
    """Some run of three words occurs three or more times (a loop)."""
    failed: tuple[str, ...]
    """The checks that failed, for the report."""


def _strings(raw: dict[str, object], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QuestionSetError(f"{where}: {key} must be a list of strings")
    return tuple(str(v) for v in value)


def load_items(path: Path) -> list[Item]:
    data = load_toml(path, "question set", QuestionSetError)
    raw_items = data.get("item")
    if not isinstance(raw_items, list) or not raw_items:
        raise QuestionSetError(f"{path}: no [[item]] tables")
    items: list[Item] = []
    seen: set[str] = set()
    for n, raw in enumerate(raw_items, start=1):
        where = f"{path} item {n} ({raw.get('id', '?')})"
        unknown = set(raw) - _KEYS
        if unknown:
            raise QuestionSetError(f"{where}: unknown key(s) {sorted(unknown)}")
        for key in ("id", "category", "question"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                raise QuestionSetError(f"{where}: {key} must be a non-empty string")
        if raw["id"] in seen:
            raise QuestionSetError(f"{where}: duplicate id")
        seen.add(raw["id"])
        if raw["category"] not in CATEGORIES:
            raise QuestionSetError(f"{where}: category must be one of {CATEGORIES}")
        clock = raw.get("clock", "")
        if clock and clock not in CLOCKS:
            raise QuestionSetError(f"{where}: clock must be one of {CLOCKS}")
        regex = raw.get("regex", "")
        try:
            re.compile(regex)
        except re.error as e:
            raise QuestionSetError(f"{where}: bad regex {regex!r}: {e}") from None
        item = Item(
            id=raw["id"],
            category=raw["category"],
            question=raw["question"],
            previous=_strings(raw, "previous", where),
            any_of=_strings(raw, "any", where),
            all_of=_strings(raw, "all", where),
            none_of=_strings(raw, "none", where),
            regex=regex,
            clock=clock,
            refusal=bool(raw.get("refusal", False)),
        )
        if not (item.any_of or item.all_of or item.regex or item.clock or item.refusal):
            raise QuestionSetError(f"{where}: states no check (any, all, regex, clock or refusal)")
        items.append(item)
    return items


def _times(now: datetime) -> list[str]:
    """The current minute (±1) written as 24-hour and 12-hour clock times."""
    out = []
    for delta in (-1, 0, 1):
        t = now + timedelta(minutes=delta)
        out.append(f"{t.hour}:{t.minute:02d}")
        out.append(f"{t.hour:02d}:{t.minute:02d}")  # "01:30" (the lookbehind refuses "1:30" inside it)
        out.append(f"{(t.hour % 12) or 12}:{t.minute:02d}")
    return out


def clock_ok(kind: str, reply: str, now: datetime) -> bool:
    low = reply.lower()
    if kind == "time":
        return any(re.search(rf"(?<!\d){re.escape(t)}(?!\d)", low) for t in _times(now))
    if kind == "date":
        day = rf"(?<!\d){now.day}(st|nd|rd|th)?(?!\d)"
        return MONTHS[now.month - 1] in low and re.search(day, low) is not None
    if kind == "weekday":
        return WEEKDAYS[now.weekday()] in low and not any(
            w in low for w in WEEKDAYS if w != WEEKDAYS[now.weekday()]
        )
    if kind == "year":
        return str(now.year) in low
    if kind == "month":
        return MONTHS[now.month - 1] in low
    raise ValueError(f"unknown clock check {kind!r}")


_MONEY_IN_WORDS = re.compile(r"\b(\d+) (dollars?|euros?|pounds?) and (\d{1,2}) (?:cents?|pence)\b", re.IGNORECASE)
_SYMBOL = {"dollar": "$", "euro": "€", "pound": "£"}


def money_as_decimals(reply: str) -> str:
    """``reply`` with each amount the skills say in words written as checks write it: "12 dollars and 60 cents" →
    "$12.60" (a check for "12.60" or /7[.,]20/ must not fail a right answer for its wording; a check that refuses
    "6.30" must refuse "6 dollars and 30 cents" too)."""

    def decimal(m: re.Match[str]) -> str:
        return f"{_SYMBOL[m.group(2).lower().rstrip('s')]}{m.group(1)}.{int(m.group(3)):02d}"

    return _MONEY_IN_WORDS.sub(decimal, reply)


def judge(item: Item, reply: str, now: datetime) -> Verdict:
    forms = {reply, money_as_decimals(reply)}  # a check passes on either wording, a "none" fails on either
    lows = [f.lower() for f in forms]
    failed: list[str] = []
    refused = declines(reply)
    if item.any_of and not any(a.lower() in low for a in item.any_of for low in lows):
        failed.append(f"none of {list(item.any_of)}")
    failed += [f"missing {a!r}" for a in item.all_of if not any(a.lower() in low for low in lows)]
    failed += [f"contains {a!r}" for a in item.none_of if any(a.lower() in low for low in lows)]
    if item.regex and not any(re.search(item.regex, f, re.IGNORECASE) for f in forms):
        failed.append(f"no match for /{item.regex}/")
    if item.clock and not clock_ok(item.clock, reply, now):
        failed.append(f"wrong or no {item.clock}")
    if item.refusal and not refused:
        failed.append("does not say it cannot")
    loop = repeats(reply)
    if loop:
        failed.append("repeats itself")
    return Verdict(right=not failed, refused=refused, repeats=loop, failed=tuple(failed))


def pct(n: int, d: int) -> float | None:
    """``n`` of ``d`` as a percentage with one decimal (None when ``d`` is 0)."""
    return round(100 * n / d, 1) if d else None


class _DeclineCheck:
    """``REFUSAL.search(reply)``, the way the loose regex this replaced was called: truthy when the reply honestly
    declines (:func:`~voice.bench.quality.declines.declines`)."""

    def search(self, reply: str) -> bool:
        return declines(reply)


REFUSAL = _DeclineCheck()
"""For callers of the old regex (tests/test_capabilities.py); new code calls :func:`declines`."""


class Judged(Protocol):
    """A judged row of either mode of ``voice bench quality``: what :func:`judged_summary` reads of it."""

    @property
    def category(self) -> str: ...
    @property
    def by(self) -> str: ...
    @property
    def right(self) -> bool: ...
    @property
    def refusal_expected(self) -> bool: ...
    @property
    def refused(self) -> bool: ...
    @property
    def repeats(self) -> bool: ...
    @property
    def hit_cap(self) -> bool: ...
    @property
    def asked_again(self) -> bool: ...


def outcome(row: Judged) -> str:
    """Which of :data:`OUTCOMES` a judged row is: right, else asked again, else an honest decline, else wrong."""
    if row.right:
        return "right"
    if row.asked_again:
        return "asked_again"
    return "declined" if row.refused else "wrong"


@dataclass(frozen=True)
class OutcomeShares:
    """The share of some replies in each of the four :data:`OUTCOMES`, in % with one decimal (None when there were
    no replies); they add up to 100 (± rounding)."""

    right_pct: float | None
    declined_pct: float | None
    asked_again_pct: float | None
    wrong_pct: float | None

    def to_json(self) -> dict[str, float | None]:
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutcomeShares:
        return cls(data["right_pct"], data["declined_pct"], data["asked_again_pct"], data["wrong_pct"])

    def values(self) -> tuple[float | None, ...]:
        return self.right_pct, self.declined_pct, self.asked_again_pct, self.wrong_pct


def outcome_shares(rows: Sequence[Judged]) -> OutcomeShares:
    counts = Counter(outcome(r) for r in rows)
    right, declined, asked_again, wrong = (pct(counts[o], len(rows)) for o in OUTCOMES)
    return OutcomeShares(right, declined, asked_again, wrong)


@dataclass(frozen=True)
class JudgedSummary:
    """What both modes of ``voice bench quality`` report of their judged rows. Percentages have one decimal;
    None when there was nothing to count."""

    items: int
    """Items asked."""
    right_pct: float | None
    """Share of the replies judged right."""
    honest_refusal_pct: float | None
    """Share of the items whose right answer is "I can't" where the reply said so."""
    cap_or_repeat_pct: float | None
    """Share of the replies that hit the token cap or repeated themselves."""
    by_skill_pct: float | None
    """Share of the items a skill (or the timers) answered, not the LLM."""
    right_pct_by_category: dict[str, float | None]
    """``right_pct`` per category, in the order the categories first appear."""
    outcomes: OutcomeShares | None = None
    """The four outcomes' shares (its ``right_pct`` is the one above); None in results made before they were
    counted, whose JSON has no ``declined_pct``."""
    outcomes_by_category: dict[str, OutcomeShares] = field(default_factory=dict)
    """:attr:`outcomes` per category (empty when it is None)."""

    def to_json(self) -> dict[str, Any]:
        """The summary's JSON; the outcomes' keys (``declined_pct``, ``asked_again_pct`` and ``wrong_pct`` after
        ``right_pct``, ``outcome_pct_by_category`` at the end) only when they were counted."""
        o = self.outcomes
        shares = {} if o is None else {k: v for k, v in o.to_json().items() if k != "right_pct"}
        by_category = {c: s.to_json() for c, s in self.outcomes_by_category.items()}
        return {
            "items": self.items,
            "right_pct": self.right_pct,
            **shares,
            "honest_refusal_pct": self.honest_refusal_pct,
            "cap_or_repeat_pct": self.cap_or_repeat_pct,
            "by_skill_pct": self.by_skill_pct,
            "right_pct_by_category": dict(self.right_pct_by_category),
            **({} if o is None else {"outcome_pct_by_category": by_category}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgedSummary:
        """From a summary's JSON (which may hold more keys: the mode's own; older results lack the outcomes)."""
        counted = "declined_pct" in data
        return cls(
            items=data["items"],
            right_pct=data["right_pct"],
            honest_refusal_pct=data["honest_refusal_pct"],
            cap_or_repeat_pct=data["cap_or_repeat_pct"],
            by_skill_pct=data["by_skill_pct"],
            right_pct_by_category=dict(data["right_pct_by_category"]),
            outcomes=OutcomeShares.from_json(data) if counted else None,
            outcomes_by_category={
                c: OutcomeShares.from_json(s) for c, s in data.get("outcome_pct_by_category", {}).items()
            },
        )


def judged_summary(rows: Sequence[Judged], *, outcomes: bool = True) -> JudgedSummary:
    """What both modes of ``voice bench quality`` report of their judged rows; with ``outcomes``, the four
    outcomes' shares too (overall and per category)."""
    refusals = [r for r in rows if r.refusal_expected]
    categories = list(dict.fromkeys(r.category for r in rows))
    return JudgedSummary(
        items=len(rows),
        right_pct=pct(sum(r.right for r in rows), len(rows)),
        honest_refusal_pct=pct(sum(r.refused for r in refusals), len(refusals)),
        cap_or_repeat_pct=pct(sum(r.hit_cap or r.repeats for r in rows), len(rows)),
        by_skill_pct=pct(sum(r.by == "skill" for r in rows), len(rows)),
        right_pct_by_category={
            c: pct(sum(r.right for r in rows if r.category == c), sum(r.category == c for r in rows))
            for c in categories
        },
        outcomes=outcome_shares(rows) if outcomes else None,
        outcomes_by_category={
            c: outcome_shares([r for r in rows if r.category == c]) for c in (categories if outcomes else ())
        },
    )
