"""Argument parsing for ``voice bench``."""

from __future__ import annotations

import argparse
from typing import Any


def add_bench_parser(sub: Any) -> None:
    b: argparse.ArgumentParser = sub.add_parser("bench", help="measure latency (see voice bench --help)")
    b.set_defaults(func=lambda args: 2)
