"""The arguments of ``voice bench turns``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voice.bench.cli_common import config_arg, outputs, runner


def add_turns_parser(bs: Any) -> None:
    """``voice bench turns`` on the ``voice bench`` subparsers ``bs``."""
    tt = bs.add_parser(
        "turns",
        help="the end-of-turn settings to choose from: mouth-to-ear (e2e) against pauses cut short (pauses)",
        description="Per folder of recordings and per [[variant]] of --variants: voice bench pauses and voice "
        "bench e2e, each in its own process, in one report (see voice/bench/turns/measure.py).",
    )
    config_arg(tt)
    tt.add_argument(
        "--variants", type=Path, required=True,
        help="a TOML file of [[variant]] tables (a name, [variant.turn] and [variant.vad] keys over the config's; "
        "a variant with no keys is the config's own point), e.g. benchmarks/turn_choices.toml",
    )  # fmt: skip
    tt.add_argument(
        "--speech", type=Path, action="append", default=None,
        help="a folder of recordings; give it once per folder to report them side by side (default: "
        "$VOICE_SPEECH_DIR or ../shared/speech next to the repo)",
    )  # fmt: skip
    tt.add_argument("--clips", default=None, help="comma-separated file names (or stems) to use from each folder")
    tt.add_argument("--repeats", type=int, default=2, help="e2e repeats per clip (default 2)")
    tt.add_argument("--pauses", default="150,250,300,450,600", help="pause lengths to splice in (ms)")
    tt.add_argument(
        "--text-delay-ms", type=float, default=160.0,
        help="the pause's words reach the endpointer this much audio after the pause (the speculative STT's time: "
        "p50 152-164 ms with the decoder on one thread; default 160)",
    )  # fmt: skip
    tt.add_argument(
        "--keep", type=Path, default=None, metavar="DIR", help="keep every run's config, JSON and log in DIR"
    )
    outputs(tt, "setting")
    tt.set_defaults(func=runner("turns.measure"))
