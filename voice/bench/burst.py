"""Is reply audio arriving as it was sent, or in one lump? A buffering detector for streamed replies.

Something on the path that buffers a stream (a proxy, a content-scanning middlebox, a relay that batches)
creates an illusion of speed: the server streams a reply clause by clause, its own report looks fine, yet
the listener hears nothing until everything is done. Only the two clocks together show it:

* the server's ``turn_report`` says over how long it handed the reply's audio chunks to the socket
  (``reply_audio_sent_spread_ms``, its clock);
* the client knows when each chunk arrived (its clock).

A turn is a **burst** when its chunks arrive within much less time (:data:`BURST_RATIO`) than both the
audio they carry and the time the server took to send them, while the server did send them over time
(at least :data:`MIN_SENT_SPREAD_MS`). A reply the server itself sent at once (one short clause) proves
nothing either way, and neither does a reply of fewer than two chunks. Pure: no clocks, no sockets.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

BURST_RATIO = 0.25
"""Arrival spread below this fraction of both the audio's duration and the server's send spread: a burst."""
MIN_SENT_SPREAD_MS = 100.0
"""The server must have sent the chunks over at least this long for a burst to be recognisable."""

METHOD = (
    "a turn's reply audio is a `burst` when its chunks arrive at the client within less than "
    f"{BURST_RATIO:g}× both the audio they carry and the time the server took to hand them to its socket "
    f"(`reply_audio_sent_spread_ms` of the turn report), and the server took at least {MIN_SENT_SPREAD_MS:g} ms: "
    "something on the path buffered the stream"
)


@dataclass(frozen=True)
class BurstVerdict:
    """How one turn's reply audio arrived. Durations in milliseconds."""

    chunks: int
    """Reply audio chunks received."""
    audio_ms: float
    """Audio those chunks carry."""
    arrival_spread_ms: float
    """Client clock: first chunk's arrival → last chunk's."""
    sent_spread_ms: float | None
    """Server clock: first chunk handed to the socket → last (None: the server did not say)."""
    burst: bool | None
    """True: buffered on the way; False: arrived over time as sent; None: cannot tell (see ``why``)."""
    why: str

    def to_dict(self) -> dict[str, object]:
        return {
            "chunks": self.chunks,
            "audio_ms": self.audio_ms,
            "arrival_spread_ms": self.arrival_spread_ms,
            "sent_spread_ms": self.sent_spread_ms,
            "burst": self.burst,
            "why": self.why,
        }


def judge(
    arrivals_ns: Sequence[int],
    audio_ms: float,
    sent_spread_ms: float | None,
    *,
    ratio: float = BURST_RATIO,
    min_sent_spread_ms: float = MIN_SENT_SPREAD_MS,
) -> BurstVerdict:
    """Judge one turn from the arrival times of its reply audio chunks (client clock, any origin), the audio
    they carry, and the server's send spread from the turn report."""
    if not 0 < ratio < 1:
        raise ValueError(f"ratio must be between 0 and 1, got {ratio}")
    if any(b < a for a, b in itertools.pairwise(arrivals_ns)):
        raise ValueError("arrival times must be in arrival order (non-decreasing)")
    n = len(arrivals_ns)
    spread_ms = round((arrivals_ns[-1] - arrivals_ns[0]) / 1e6, 1) if n else 0.0
    audio_ms = round(audio_ms, 1)

    def verdict(burst: bool | None, why: str) -> BurstVerdict:
        return BurstVerdict(n, audio_ms, spread_ms, sent_spread_ms, burst, why)

    if n < 2:
        return verdict(None, f"{n} chunk(s): nothing to spread")
    if sent_spread_ms is None:
        return verdict(None, "the server's report has no send spread (an older server?)")
    if sent_spread_ms < min_sent_spread_ms:
        return verdict(None, f"the server sent it all within {sent_spread_ms:.0f} ms: nothing to compare with")
    if spread_ms < ratio * audio_ms and spread_ms < ratio * sent_spread_ms:
        return verdict(
            True,
            f"{n} chunks carrying {audio_ms:.0f} ms of audio, sent over {sent_spread_ms:.0f} ms, arrived "
            f"within {spread_ms:.0f} ms: buffered on the way",
        )
    return verdict(
        False,
        f"arrived over {spread_ms:.0f} ms as sent over {sent_spread_ms:.0f} ms ({audio_ms:.0f} ms of audio)",
    )
