"""``voice bench quality``: with ``--rejudge`` a stored result is judged again (:mod:`voice.bench.quality.rejudge`),
else the question set is asked (:mod:`voice.bench.quality.measure`)."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    if getattr(args, "rejudge", None) is not None:
        from voice.bench.quality import rejudge as quality_rejudge

        return quality_rejudge.run(args)
    from voice.bench.quality import measure as quality

    return quality.run(args)
