"""Summary statistics and word error rate, kept small and exact so the tests can check them by hand."""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from voice.wire.report import percentile

HUMAN_GAP_MS = 200
"""Typical gap between turns in human conversation (Stivers et al. 2009, PNAS 106(26):10587)."""
TARGET_MS = 500
"""The project's mouth-to-ear target."""

_PUNCT = re.compile(r"[^\w\s']+", re.UNICODE)
_SPACES = re.compile(r"\s+")

WER_NORMALIZATION = (
    "case-folded, punctuation removed (apostrophes dropped: what's = whats), whitespace collapsed; "
    "numbers are NOT normalized (10 ≠ ten)"
)
WER_WHISPER_NORMALIZATION_ALONE = (
    "OpenAI Whisper's English normalizer (whisper-normalizer package): numbers (ten = 10, seven thirty = "
    "7 30), British/American spelling, contractions, case, punctuation"
)
"""What results written before 2026-12-06's eighteenth session say they were scored with: Whisper's normalizer
alone (:func:`normalizer_for` scores them so again when they are read back)."""
WER_WHISPER_NORMALIZATION = (
    WER_WHISPER_NORMALIZATION_ALONE + "; then numbers compared digit by digit (one two three = 1, 2, 3 = 123 = "
    "1 2 3) and tokens with no letter or digit dropped"
)


def normalize_text(text: str) -> str:
    text = _PUNCT.sub(" ", text.casefold()).replace("'", "")
    return _SPACES.sub(" ", text).strip()


def wer(reference: str, hypothesis: str) -> float | None:
    """Word error rate of one pair after :func:`normalize_text`; None if the reference has no words."""
    return corpus_wer([(reference, hypothesis)])


def whisper_normalize_alone(text: str) -> str:
    """OpenAI Whisper's English text normalizer (numbers, spelling, contractions, case, punctuation)."""
    from whisper_normalizer.english import EnglishTextNormalizer

    return str(EnglishTextNormalizer()(text))


def whisper_normalize(text: str) -> str:
    """:func:`whisper_normalize_alone`, then :func:`digit_by_digit`."""
    return digit_by_digit(whisper_normalize_alone(text))


def normalizer_for(method: str | None) -> Callable[[str], str]:
    """The normalizer a result says its normalized WER was scored with (its meta's ``wer_normalized``), so that a
    result read back keeps its numbers: :func:`whisper_normalize` for results that say so, Whisper's normalizer
    alone for those written before numbers were scored digit by digit (or before the normalized WER was named)."""
    return whisper_normalize if method == WER_WHISPER_NORMALIZATION else whisper_normalize_alone


_NUMBER = re.compile(r"[\d.,:]*\d[\d.,:]*")


def digit_by_digit(normalized: str) -> str:
    """Whisper's normalizer writes one digit string several ways: it joins spoken digits ("one two three" ->
    "123") but not written ones ("1 2 3" -> "one 2 3", "1. Two... Three..." -> "12 3 ."), and it keeps a lone
    "one". Scored as words, a transcript with every digit right then counts up to one error per digit against a
    single reference word. So every number is split into its digits (separators dropped: "7.30" = "730" =
    "7 3 0"), "one" is "1", and tokens with no letter or digit go: the same digits score the same however they
    were grouped, and each wrong digit is one error."""
    words: list[str] = []
    for word in normalized.split():
        if word == "one":
            words.append("1")
        elif _NUMBER.fullmatch(word):
            words.extend(ch for ch in word if ch.isdigit())
        elif any(ch.isalnum() for ch in word):
            words.append(word)
    return " ".join(words)


def corpus_wer_normalized(
    pairs: Iterable[tuple[str, str]], normalize: Callable[[str], str] = whisper_normalize
) -> float | None:
    """:func:`corpus_wer` after Whisper's English normalizer ("five" = "5", "seven thirty" = "7:30") and
    :func:`digit_by_digit` (or ``normalize``)."""
    return corpus_wer(pairs, normalize=normalize)


def corpus_wer(
    pairs: Iterable[tuple[str, str]], normalize: Callable[[str], str] = normalize_text
) -> float | None:
    """Total word errors / total reference words over all pairs (not the mean of per-clip rates)."""
    import jiwer

    refs: list[str] = []
    hyps: list[str] = []
    for ref, hyp in pairs:
        r = normalize(ref)
        if r:
            refs.append(r)
            hyps.append(normalize(hyp))
    if not refs:
        return None
    out = jiwer.process_words(refs, hyps)
    errors = out.substitutions + out.deletions + out.insertions
    n_ref = out.substitutions + out.deletions + out.hits
    return errors / n_ref


@dataclass(frozen=True)
class Described:
    """A sample's statistics (:func:`describe`), in the sample's unit, rounded to 0.1; all but ``n`` None for an
    empty sample."""

    n: int
    """Values in the sample."""
    p50: float | None
    """Median (interpolated between ranks, as ``p95``)."""
    p95: float | None
    max: float | None
    min: float | None
    mean: float | None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Described:
        return cls(**data)


def read_described(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``data`` (a record's JSON) with the values at ``keys`` read as :class:`Described`, the others as they
    are."""
    return {k: Described.from_json(v) if k in keys else v for k, v in data.items()}


def describe(values: Sequence[float]) -> Described:
    """``n``, ``p50``, ``p95``, ``max``, ``min``, ``mean`` (percentiles interpolated between ranks)."""
    vals = [float(v) for v in values]
    if not vals:
        return Described(0, None, None, None, None, None)
    return Described(
        n=len(vals),
        p50=round(percentile(vals, 50), 1),
        p95=round(percentile(vals, 95), 1),
        max=round(max(vals), 1),
        min=round(min(vals), 1),
        mean=round(statistics.fmean(vals), 1),
    )


def verdict(p50: float | None, p95: float | None, limit_ms: float) -> str:
    """``yes`` (p95 within the limit), ``p50 only`` (typical turn within, slow tail not), or ``no``."""
    if p50 is None or p95 is None:
        return "n/a"
    if p95 <= limit_ms:
        return "yes"
    if p50 <= limit_ms:
        return "p50 only"
    return "no"


def fmt_ms(value: float | None, width: int = 0) -> str:
    s = "—" if value is None else f"{value:.0f}"
    return s.rjust(width) if width else s
