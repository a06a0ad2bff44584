"""docs/scaling.md on loopback: two ``voice serve`` replicas (fake STT and TTS, no model files) sharing one
real ``python -m llama_cpp.server``. Each serves a turn, at the same time, and both reach the one LLM server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.netkit import sync_http_status, until
from voice.bench.llama_server import llama_server
from voice.config.config import load_config
from voice.models import DEFAULT_MODELS_ROOT, find_gguf
from voice.reliability.probe import Probe
from voice.reliability.tagged import tagged_speech

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
CLI = [sys.executable, "-c", "import sys; from voice.cli import main; sys.exit(main())"]


def start_replica(tmp_path: Path, name: str, base_url: str) -> tuple[subprocess.Popen[str], int]:
    folder = tmp_path / name
    folder.mkdir()
    # One llama.cpp server slot: a replica's request waits for the other's whole reply before its first token.
    # On a loaded machine (seen once under two extra busy processes: 3 tokens/s) that is longer than the default
    # 10 s read timeout, which this test is not about.
    (folder / "config.toml").write_text(
        '[server]\nport = 0\nturn_log = "turns.jsonl"\nmax_ingress_realtime = 1000.0\n'
        f'[llm]\nbackend = "openai"\nbase_url = "{base_url}"\nread_timeout_s = 60.0\n'
    )
    proc = subprocess.Popen(
        [*CLI, "serve", "--config", "config.toml", "--fake-models"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=folder,
    )  # fmt: skip
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on ws://" in line:
            threading.Thread(target=lambda: sys.stderr.write(proc.stderr.read()), daemon=True).start()
            return proc, int(line.split("ws://127.0.0.1:")[1].split("/")[0])
    raise AssertionError(f"replica {name} did not start (exit {proc.wait()})")


async def one_turn(port: int, tag: str) -> dict[str, object]:
    await until(lambda: sync_http_status(port) == 200, 60)
    p = await Probe.connect(f"ws://127.0.0.1:{port}/")
    report = await p.turn(tagged_speech(tag), timeout_s=120)
    assert not p.errors(), p.errors()
    await p.close()
    return report


def test_two_replicas_share_one_llm_server(tmp_path: Path) -> None:
    llm = load_config().llm
    model = find_gguf(DEFAULT_MODELS_ROOT / "llm" / "smollm2-135m", llm.model)
    with llama_server(model, llm) as server:
        replicas = [start_replica(tmp_path, name, server.base_url) for name in ("a", "b")]
        try:

            async def both() -> list[dict[str, object]]:
                return await asyncio.gather(*(one_turn(port, f"replica{i}") for i, (_, port) in enumerate(replicas)))

            reports = asyncio.run(both())
        finally:
            for proc, _ in replicas:
                proc.terminate()
            for proc, _ in replicas:
                proc.wait(30)
        served = server.completions_served()
    for i, report in enumerate(reports):
        assert report["outcome"] == "ok"
        assert report["transcript"] == f"replica{i}"
        assert report["reply_text"], {k: report[k] for k in ("llm", "outcome", "stages_ms", "reply_text")}
        assert isinstance(report["llm"], dict) and report["llm"]["n_tokens"] > 0
    assert served >= 4  # each replica's warm-up and its turn
    for name in ("a", "b"):  # each replica logged its own turn
        assert (tmp_path / name / "turns.jsonl").read_text().count("\n") == 1
