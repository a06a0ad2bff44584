"""Paired latency differences between two routes to the same server (``voice bench e2e --compare-direct``).

Kept apart from :mod:`voice.bench.e2e.compare` (which runs the two routes and imports :mod:`voice.bench.e2e.measure`) so
that :mod:`voice.bench.e2e.measure` can summarise a compared run without an import cycle. The result is typed
(:class:`AddedLatency`), with the JSON it is written as (``to_json``: the keys and their order as they were when
it was a dict) and read back from (``from_json``). Durations are in milliseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from voice.bench import stats
from voice.bench.markdown import fields_json
from voice.bench.stats import Described, read_described


class PairedTurn(Protocol):
    """What pairing needs of a measured turn (``voice.bench.e2e.turn.TurnResult`` has it)."""

    clip: str
    repeat: int
    phase: str
    mouth_to_ear_ms: float | None
    uncertain: str | None
    reconciliation_error_ms: float | None


@dataclass(frozen=True)
class Pair:
    """A clip and repeat measured through both routes (both turns measured, neither uncertain)."""

    clip: str
    repeat: int
    proxied_ms: float
    """Mouth-to-ear through the proxy."""
    direct_ms: float
    """Mouth-to-ear straight to the server."""


@dataclass(frozen=True)
class AddedLatency:
    """What the proxy adds, over the pairs of turns (see :mod:`voice.bench.e2e.compare`)."""

    n_pairs: int
    """Pairs compared (``len(pairs)``)."""
    added_ms: Described
    """Proxied − direct mouth-to-ear, per pair (ms)."""
    added_outside_server_ms: Described
    """Proxied − direct reconciliation error (mouth-to-ear − the server's stages), over the pairs where both
    turns have one (ms): what the path adds without the server's own variation."""
    proxied: Described
    """Mouth-to-ear through the proxy over the pairs (ms)."""
    direct: Described
    """Mouth-to-ear straight to the server over the pairs (ms)."""
    pairs: tuple[Pair, ...]
    """Sorted by clip, then repeat."""

    def to_json(self) -> dict[str, Any]:
        return {**fields_json(self), "pairs": [fields_json(p) for p in self.pairs]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AddedLatency:
        statistics = read_described(data, "added_ms", "added_outside_server_ms", "proxied", "direct")
        return cls(**{**statistics, "pairs": tuple(Pair(**p) for p in data["pairs"])})


def added_latency(proxied: Sequence[PairedTurn], direct: Sequence[PairedTurn]) -> AddedLatency:
    """Paired difference of mouth-to-ear (proxied − direct, ms) over the measured turns of both routes."""

    def usable(turns: Sequence[PairedTurn]) -> dict[tuple[str, int], float]:
        return {
            (t.clip, t.repeat): t.mouth_to_ear_ms
            for t in turns
            if t.phase == "measured" and t.mouth_to_ear_ms is not None and not t.uncertain
        }

    a, b = usable(proxied), usable(direct)
    pairs = sorted(set(a) & set(b))
    diffs = [a[k] - b[k] for k in pairs]
    recon_a = {(t.clip, t.repeat): t.reconciliation_error_ms for t in proxied}
    recon_b = {(t.clip, t.repeat): t.reconciliation_error_ms for t in direct}
    outside = [x - y for k in pairs if (x := recon_a.get(k)) is not None and (y := recon_b.get(k)) is not None]
    return AddedLatency(
        n_pairs=len(pairs),
        added_ms=stats.describe(diffs),
        added_outside_server_ms=stats.describe(outside),
        proxied=stats.describe([a[k] for k in pairs]),
        direct=stats.describe([b[k] for k in pairs]),
        pairs=tuple(Pair(clip, rep, a[(clip, rep)], b[(clip, rep)]) for clip, rep in pairs),
    )
