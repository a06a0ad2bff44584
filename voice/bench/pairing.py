"""Paired latency differences between two routes to the same server (``voice bench e2e --compare-direct``).

Kept apart from :mod:`voice.bench.e2e_compare` (which runs the two routes and imports :mod:`voice.bench.e2e`) so
that :mod:`voice.bench.e2e` can summarise a compared run without an import cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from voice.bench import stats


class PairedTurn(Protocol):
    """What pairing needs of a measured turn (``voice.bench.e2e_turn.TurnResult`` has it)."""

    clip: str
    repeat: int
    phase: str
    mouth_to_ear_ms: float | None
    uncertain: str | None
    reconciliation_error_ms: float | None


def added_latency(proxied: Sequence[PairedTurn], direct: Sequence[PairedTurn]) -> dict[str, Any]:
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
    return {
        "n_pairs": len(pairs),
        "added_ms": stats.describe(diffs),
        "added_outside_server_ms": stats.describe(outside),
        "proxied": stats.describe([a[k] for k in pairs]),
        "direct": stats.describe([b[k] for k in pairs]),
        "pairs": [
            {"clip": clip, "repeat": rep, "proxied_ms": a[(clip, rep)], "direct_ms": b[(clip, rep)]}
            for clip, rep in pairs
        ],
    }
