"""A bench run in a process of its own (``voice bench matrix``, ``voice bench turns``): its output goes to a log
file, and what it wrote is read back, or the last lines of that log say why it wrote nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any


def log_tail(log_path: Path, code: int | None) -> str:
    """Why a run wrote no result: the last three lines of its log, or its exit code when it printed nothing."""
    tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
    return " | ".join(tail) or f"exit code {code}"


def run_logged(cmd: list[str], log_path: Path, json_path: Path) -> dict[str, Any] | str:
    """Run ``cmd`` (a bench writing ``json_path``) with its output in ``log_path``: the JSON it wrote, or
    :func:`log_tail` when it wrote none."""
    with log_path.open("w", encoding="utf-8") as log:
        code = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    if not json_path.is_file():
        return log_tail(log_path, code)
    data: dict[str, Any] = json.loads(json_path.read_text(encoding="utf-8"))
    return data
