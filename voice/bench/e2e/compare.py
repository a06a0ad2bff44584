"""``voice bench e2e --url wss://proxy/ --compare-direct ws://server/``: what a proxy adds, in one sitting.

Every plan item is spoken twice, once through each address, one right after the other, alternating which
goes first (so that a drift of the machine over the sitting — warming up, another process — weighs on both
routes alike). Both routes reach the same server, so the models, the history (none: one session per clip)
and the clip are the same; the difference is the path: TLS, the proxy's hops, and any buffering on it
(which the burst flag shows separately).

The added latency is taken per pair (same clip, same repeat: proxied − direct mouth-to-ear), then
summarised; pairs where either turn failed or is uncertain are left out. Mouth-to-ear also carries the
server's own variation from turn to turn (a busy machine makes it large), so the same difference of the
reconciliation error (client mouth-to-ear − the server's stages) is reported beside it: what the path adds
outside the server, both ways (the audio going in, the reply coming out), without the server's variation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from voice.bench import stats
from voice.bench.e2e.measure import E2eOptions, run_plan
from voice.bench.e2e.pairing import AddedLatency, added_latency
from voice.bench.e2e.turn import PlanItem, TurnResult

__all__ = [
    "METHOD", "ROUTE_DIRECT", "AddedLatency", "added_latency", "compare_lines", "direct_options", "run_compared",
]  # fmt: skip

ROUTE_DIRECT = "direct"

METHOD = (
    "every clip is spoken through the proxy and directly, one right after the other, alternating which "
    "goes first; added latency = proxied − direct mouth-to-ear of the same clip and repeat, over the pairs "
    "where both turns were measured and neither is uncertain; added outside the server = the same difference of "
    "the reconciliation error (mouth-to-ear − sum of the server's stages), which removes the server's own variation"
)


async def run_compared(
    url: str,
    direct_url: str,
    plan: Sequence[PlanItem],
    opts: E2eOptions,
    direct_opts: E2eOptions,
    on_turn: Callable[[TurnResult], None] = lambda r: None,
) -> tuple[list[TurnResult], list[TurnResult]]:
    """Speak every plan item through ``url`` and through ``direct_url`` (see the module docstring); returns
    (proxied turns, direct turns), in plan order. Direct turns carry ``route == "direct"``."""
    proxied: list[TurnResult] = []
    direct: list[TurnResult] = []

    def tag_direct(res: TurnResult) -> None:
        res.route = ROUTE_DIRECT
        on_turn(res)

    for n, item in enumerate(plan):
        legs = [(url, opts, proxied, on_turn), (direct_url, direct_opts, direct, tag_direct)]
        for address, o, into, report in legs if n % 2 == 0 else legs[::-1]:
            into += await run_plan(address, [item], o, report)
    return proxied, direct


def compare_lines(cmp: AddedLatency, proxied_bursts: int, direct_bursts: int) -> list[str]:
    """Sentences for the console and the Markdown report."""
    if not cmp.n_pairs:
        return ["through the proxy vs direct: no pair of measured turns to compare"]
    d, o, p, q = cmp.added_ms, cmp.added_outside_server_ms, cmp.proxied, cmp.direct
    return [
        f"through the proxy vs direct, {cmp.n_pairs} pairs of turns (same clip, one after the other): the "
        f"proxy adds p50 {stats.fmt_ms(d.p50)} ms, p95 {stats.fmt_ms(d.p95)} ms (min "
        f"{stats.fmt_ms(d.min)}, max {stats.fmt_ms(d.max)}) to mouth-to-ear (p50 "
        f"{stats.fmt_ms(p.p50)} ms proxied, {stats.fmt_ms(q.p50)} ms direct); outside the server's stages "
        f"it adds p50 {stats.fmt_ms(o.p50)} ms, p95 {stats.fmt_ms(o.p95)} ms (the server's own variation "
        "removed)",
        f"reply audio in a burst (buffered on the way): {proxied_bursts} proxied turn(s), {direct_bursts} direct",
    ]


def direct_options(opts: E2eOptions) -> E2eOptions:
    """The options for the direct route: replies saved apart (``DIR/direct``), no CA file needed."""
    save = opts.save_audio / ROUTE_DIRECT if opts.save_audio is not None else None
    if save is not None:
        save.mkdir(parents=True, exist_ok=True)
    return dataclasses.replace(opts, save_audio=save, ca_file=None)
