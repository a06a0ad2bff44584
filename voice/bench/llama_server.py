"""Run llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on loopback.

For the remote-LLM benchmark and the tests: the catalogue's GGUF, an ephemeral port (uvicorn prints the
one it bound), the same context and thread settings as the in-process backend. Needs the
``llama-cpp-python[server]`` packages (in the ``dev`` extra).
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from voice.config.config import LlmConfig

_BOUND = re.compile(r"Uvicorn running on (http://\S+:\d+)")


class LlamaServerError(RuntimeError):
    """The server did not start; the message carries the end of its output."""


@dataclass
class LlamaServer:
    base_url: str
    """The API root, ``http://127.0.0.1:PORT/v1``."""
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)
    """Every line the server printed so far (its access log included)."""

    def completions_served(self) -> int:
        """Chat-completion requests the server has answered (from its access log)."""
        return sum("POST /v1/chat/completions" in line for line in list(self.output))


@contextlib.contextmanager
def llama_server(
    model_path: Path, config: LlmConfig, *, host: str = "127.0.0.1", start_timeout_s: float = 120.0
) -> Iterator[LlamaServer]:
    """Start the server, wait until it answers ``GET /v1/models``, yield it; stop it on exit."""
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path),
        "--host", host, "--port", "0",
        "--n_ctx", str(config.n_ctx),
        "--n_batch", str(config.n_batch),
        "--n_threads", str(config.n_threads),
        "--n_threads_batch", str(config.n_threads),
        # By default it ends a running stream (with [DONE], no finish_reason) when another request
        # arrives: replicas sharing it would cut each other's replies. Off: requests wait their turn.
        "--interrupt_requests", "false",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    server = LlamaServer(base_url="", process=proc)
    bound = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            server.output.append(line.rstrip("\n"))
            if not bound.is_set() and (m := _BOUND.search(line)):
                server.base_url = m.group(1) + "/v1"
                bound.set()
        bound.set()  # the process ended

    reader = threading.Thread(target=read, name="llama-server-log", daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + start_timeout_s
        bound.wait(start_timeout_s)
        while not _answers(server.base_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(server.output[-15:])
                raise LlamaServerError(f"python -m llama_cpp.server did not start ({' '.join(cmd)}):\n{tail}")
            time.sleep(0.05)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(5)


def _answers(base_url: str) -> bool:
    if not base_url:
        return False
    try:
        with urllib.request.urlopen(base_url + "/models", timeout=2) as r:
            return int(r.status) == 200
    except OSError:
        return False
