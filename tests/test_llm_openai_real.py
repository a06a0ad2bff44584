"""The OpenAI-compatible LLM backend against a real ``python -m llama_cpp.server`` on loopback (an ephemeral
port) serving the catalogue model: the same greedy replies as in-process, the estimate of the prompt length
errs high, barge-in closes the stream, and a full turn through ``voice serve`` with ``[llm] backend =
"openai"`` (real STT and TTS)."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.netkit import sync_http_status, until
from voice.audio import load_audio
from voice.backends.llm_llama import LlamaLlm
from voice.backends.llm_openai import OpenAiLlm
from voice.bench.llama_server import LlamaServer, llama_server
from voice.config.config import LlmConfig, load_config
from voice.conversation.answer_confidence import first_sentence_confidence
from voice.models import DEFAULT_MODELS_ROOT, find_gguf
from voice.reliability.probe import Probe
from voice.runtime.model_api import ChatMessage, TextDelta

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
CLI = [sys.executable, "-c", "import sys; from voice.cli import main; sys.exit(main())"]
LLM_DIR = DEFAULT_MODELS_ROOT / "llm" / "smollm2-135m"
QUESTIONS = ("What is the capital of France?", "Who wrote Hamlet?", "How far away is the moon?")


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    config = load_config().llm
    with llama_server(find_gguf(LLM_DIR, config.model), config) as srv:
        yield srv


def remote_config(srv: LlamaServer) -> LlmConfig:
    return dataclasses.replace(load_config().llm, backend="openai", base_url=srv.base_url)


def deltas(llm: OpenAiLlm | LlamaLlm, question: str) -> list[TextDelta]:
    msgs = [ChatMessage("system", load_config().llm.system_prompt), ChatMessage("user", question)]
    events = llm.generate(msgs, max_tokens=96, cancel=threading.Event())
    return [e for e in events if isinstance(e, TextDelta)]


def reply(llm: OpenAiLlm | LlamaLlm, question: str) -> str:
    return "".join(d.text for d in deltas(llm, question))


def test_the_server_scores_the_first_sentence_as_the_model_in_process_does(server: LlamaServer) -> None:
    """The ``[llm] not_sure`` gate reads the same confidence from a remote model as from the local one."""
    local = LlamaLlm(LLM_DIR, load_config().llm)
    remote = OpenAiLlm(remote_config(server))
    for q in QUESTIONS:
        here, there = deltas(local, q), deltas(remote, q)
        assert "".join(d.text for d in there) == "".join(d.text for d in here)
        assert all(d.logprob is not None for d in there)
        a = first_sentence_confidence([d.text for d in here], [d.logprob for d in here])
        b = first_sentence_confidence([d.text for d in there], [d.logprob for d in there])
        assert a is not None and b is not None and a.tokens == b.tokens
        assert b.mean_logprob == pytest.approx(a.mean_logprob, abs=0.02)


def test_greedy_replies_are_the_same_in_process_and_through_the_server(server: LlamaServer) -> None:
    local = LlamaLlm(LLM_DIR, load_config().llm)
    remote = OpenAiLlm(remote_config(server))
    for q in QUESTIONS:
        expected = reply(local, q)
        assert expected
        assert reply(remote, q) == expected


def test_the_prompt_estimate_errs_high(server: LlamaServer) -> None:
    local = LlamaLlm(LLM_DIR, load_config().llm)
    remote = OpenAiLlm(remote_config(server), warm=False)
    system = ChatMessage("system", load_config().llm.system_prompt)
    for q in QUESTIONS:
        history = [system, ChatMessage("user", q), ChatMessage("assistant", q * 3), ChatMessage("user", q)]
        assert remote.count_tokens(history) >= local.count_tokens(history)


def test_cancel_closes_the_stream_and_the_server_serves_the_next_request(server: LlamaServer) -> None:
    llm = OpenAiLlm(remote_config(server))
    cancel = threading.Event()
    msgs = [ChatMessage("user", "Count from one to one hundred, in words, one number per line.")]
    got: list[str] = []
    for ev in llm.generate(msgs, max_tokens=200, cancel=cancel):
        if isinstance(ev, TextDelta):
            got.append(ev.text)
            if len(got) == 3:
                cancel.set()
                llm.interrupt()
    assert len(got) == 3
    until_s = 30.0
    deadline = asyncio.run(_wait_for_line(server, "disconnected", until_s))
    assert deadline, "llama_cpp.server did not log the client's disconnect"
    assert reply(llm, "What is the capital of France?")


async def _wait_for_line(server: LlamaServer, text: str, timeout_s: float) -> bool:
    try:
        await until(lambda: any(text in line for line in list(server.output)), timeout_s)
    except AssertionError:
        return False
    return True


def test_a_turn_through_voice_serve_with_the_openai_backend(server: LlamaServer, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[server]\nport = 0\nturn_log = \"\"\nmax_ingress_realtime = 1000.0\n"
        f"[llm]\nbackend = \"openai\"\nbase_url = \"{server.base_url}\"\nskills = false\n"
    )
    served_before = server.completions_served()
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [*CLI, "serve", "--config", str(config), "--models-root", str(repo / "models")],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        port = None
        for line in proc.stderr:
            if "listening on ws://" in line:
                port = int(line.split("ws://127.0.0.1:")[1].split("/")[0])
                break
        assert port is not None, f"serve did not start (exit {proc.poll()})"
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
        # espeak-ng (a Debian package ./dev setup installs): no dependency on recordings outside the repository.
        wav = tmp_path / "q.wav"
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(wav), "This is a test."], check=True)
        speech = load_audio(wav, 16_000)
        report, probe_errors = asyncio.run(_one_turn(port, speech))
    finally:
        proc.terminate()
        proc.wait(30)
    assert not probe_errors
    assert report["outcome"] == "ok"
    assert "test" in report["transcript"].lower()
    assert report["reply_text"] and report["llm"]["n_tokens"] > 0
    assert report["stages_ms"]["llm_ttft"] > 0
    assert server.completions_served() >= served_before + 2  # the warm-up and the turn


async def _one_turn(port: int, speech: np.ndarray) -> tuple[dict[str, object], list[object]]:
    await until(lambda: sync_http_status(port) == 200, 180)
    p = await Probe.connect(f"ws://127.0.0.1:{port}/")
    pcm = (np.clip(speech, -1, 1) * 32767).astype(np.int16)
    report = await p.turn(pcm, timeout_s=120, silence_s=1.0)
    errors = p.errors()
    await p.close()
    return report, errors
