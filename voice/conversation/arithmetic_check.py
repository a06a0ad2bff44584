"""A reply that states a sum the calculator works out differently.

The skills answer the sums they read; one they cannot read (a misheard number, "an 18 % dip on a 42 dollar bill")
goes to the LLM, and SmolLM2-135M writes out the working with a wrong result: "144 divided by 8 equals 20.", "18% of
42 is 0.18 * 42 = 7.3", "Two pounds is 2 x 453.5924 = 917.08 grams." Issue 31 asks that a sum not be left to the LLM
to guess. :func:`miscounts` checks every sum a sentence states in digits ("A op B is/equals/= C", "A% of B is C")
with exact arithmetic; a result that matches neither the exact value nor a rounding of it (to a whole number, one
or two decimals, or within 0.5 %) is a miscount. The ``not_sure`` gate
(:class:`voice.conversation.answer_confidence.UnsureGate`) checks the reply's first sentence with it and says
``[llm] not_sure_reply`` instead, however sure the model was. Sums in words, or in later sentences, are not
checked. Pure.

On the stored LLM replies of every question set judged so far (1,761 distinct, spoken and typed, 2026-12-07) a
check of every sentence fires on 27: 25 judged wrong, 1 decline and 1 judged right whose working is wrong ("10% of
250 is 0.1 * 25 = 3."); in the latest sitting of all sets, on 12 replies, all wrong, 8 of them in the first
sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from voice.skills.answer import OPERATIONS

_NUM = r"-?\d[\d,]*(?:\.\d+)?"
_OPS: dict[str, Callable[[float, float], float]] = {
    **{said: op for said, op in OPERATIONS.items() if said != "over"},  # "game over", "all over"
    "×": OPERATIONS["x"],
}
_WORD_OPS = "|".join(re.escape(k) for k in sorted(_OPS, key=len, reverse=True) if k != "-")
_RESULT = (
    rf"\s*(?:\bis\b|\bequals\b|=|\bmakes\b|\bgives\b)\s*(?:approximately |about |roughly |around )?[$€£]?({_NUM})"
    r"(?![\d.,]*\d|\s*(?:[*x×/+%-]|times|divided|multiplied|plus|minus))"
)
"""``is C``, where C is not the first number of more working ("18% of 42 is 0.18 * 42 = 7.56")."""
_SUM = re.compile(rf"[$€£]?({_NUM})(?:\s*({_WORD_OPS})\s*|\s+(-)\s+)[$€£]?({_NUM})" + _RESULT, re.IGNORECASE)
_PERCENT = re.compile(rf"({_NUM})\s*(?:%|percent) of [$€£]?({_NUM})" + _RESULT, re.IGNORECASE)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _near(exact: float, said: float) -> bool:
    """``said`` is ``exact`` or a rounding of it."""
    if abs(exact - said) <= max(1e-9, 0.005 * abs(exact)):
        return True
    return any(abs(round(exact, digits) - said) < 1e-9 for digits in (0, 1, 2))


def miscounts(sentence: str) -> bool:
    """``sentence`` states a sum in digits whose result is not what the sum comes to."""
    for m in _SUM.finditer(sentence):
        said, b = (m.group(2) or m.group(3)).lower(), _number(m.group(4))
        if b == 0 and said in ("divided by", "/"):
            continue  # no result to check
        if not _near(_OPS[said](_number(m.group(1)), b), _number(m.group(5))):
            return True
    for m in _PERCENT.finditer(sentence):
        if not _near(_number(m.group(1)) * _number(m.group(2)) / 100, _number(m.group(3))):
            return True
    return False
