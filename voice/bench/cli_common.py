"""What every ``voice bench`` command's arguments share: the runner that imports its module only when it runs,
the output options, ``--config`` and ``--speech``/``--clips``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path


def runner(module: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from voice.bench.clips import BenchError

        try:
            rc: int = importlib.import_module(f"voice.bench.{module}").run(args)
            return rc
        except BenchError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2

    return run


def outputs(p: argparse.ArgumentParser, what: str) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--json", type=Path, default=None, help=f"write every {what} and the summary as JSON")
    g.add_argument("--md", type=Path, default=None, help="write a Markdown report")
    g.add_argument("--plot", type=Path, default=None, help="write a PNG chart")
    g.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="PREFIX",
        help="write PREFIX.json, PREFIX.md and PREFIX.png (where --json/--md/--plot are not given)",
    )
    g.add_argument(
        "--max-load",
        type=float,
        default=None,
        metavar="LOAD",
        help="first wait until the machine is quiet: other processes under 10%% of the CPU and the "
        "1-minute load average at most LOAD",
    )
    g.add_argument(
        "--wait-max",
        type=float,
        default=600.0,
        metavar="S",
        help="wait for a quiet machine at most S seconds, then measure anyway (default 600)",
    )


def config_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, default=None, help="config file (default: the repo's config.toml)")


def speech_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--speech",
        type=Path,
        default=None,
        help="folder of recordings (WAV/FLAC, any rate, mono/stereo) with an optional transcripts.tsv "
        "(default: $VOICE_SPEECH_DIR or ../shared/speech next to the repo)",
    )
    p.add_argument(
        "--clips", default=None, help="comma-separated file names (or stems) to use from the folder"
    )
