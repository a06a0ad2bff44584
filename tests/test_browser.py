"""A real browser as the client, with the real models: headless Chromium loads the page the server serves at
``/``, captures a spoken question from a fake microphone (a WAV file), streams it over the websocket, plays the
answer and shows the turn (the fast page tests with fake models are in ``tests/test_page.py``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.cdp import CHROMIUM, chromium
from tests.conftest import make_config
from voice.runtime.runtime import ModelRuntime

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./dev installs it)")
async def test_browser_page_talks_to_the_server(tmp_path: Path) -> None:
    from voice.loader import load_runtime
    from voice.serve.server import VoiceServer

    wav = tmp_path / "q.wav"
    raw = tmp_path / "raw.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(raw), "What is the capital of France?"], check=True)
    # Chromium loops the file as the microphone: pad it with silence so the turn ends and the reply plays.
    subprocess.run(["sox", str(raw), "-r", "48000", "-b", "16", str(wav), "pad", "0.5", "8"], check=True)
    runtime: ModelRuntime = await asyncio.to_thread(load_runtime, make_config())
    server = VoiceServer(make_config(server={"port": 0}), runtime)
    await server.start()
    page_url = f"http://127.0.0.1:{server.port}/"
    html = await asyncio.to_thread(lambda: urllib.request.urlopen(page_url, timeout=5).read().decode())
    assert "<title>voice" in html
    try:
        async with chromium(wav) as page:
            await page.goto(page_url)
            await page.evaluate("document.getElementById('start').click()")
            await page.wait_for("document.querySelector('.turn .wf-page') !== null", timeout_s=120)
            await page.wait_for("document.getElementById('status').textContent === 'listening'", timeout_s=60)
            shown: dict[str, Any] = await page.evaluate(
                """(() => { const turn = document.querySelector('.turn');
                   return { you: turn.querySelector('.you').textContent,
                            reply: [...turn.querySelectorAll('.clause')].map((c) => c.textContent).join(' '),
                            stages: [...turn.querySelectorAll('.wf-stage')].map((r) => r.dataset.stage),
                            page_ms: Number(turn.querySelector('.wf-page').dataset.ms) }; })()"""
            )
            png = await page.screenshot()
            if shot := os.environ.get("VOICE_PAGE_SCREENSHOT"):
                await asyncio.to_thread(Path(shot).write_bytes, png)
            assert page.errors == []
    finally:
        await server.shutdown()
    first = next(r for r in server.reports if r.turn_id == 1)
    assert first.outcome == "ok", (first.outcome, first.transcript)
    # (Whisper hears espeak's "of France" as "and friends" from this 44.1 kHz stream, browser or not.)
    assert "capital" in first.transcript.lower()
    assert first.reply_audio_ms > 0 and first.total_ms is not None
    assert shown["you"] == f"you: {first.transcript}" and shown["reply"] == first.reply_text
    assert shown["stages"] == list(first.stages_ms)
    assert shown["page_ms"] > 0.8 * first.total_ms
    print(f"server sum {first.total_ms:.0f} ms, page mouth-to-ear {shown['page_ms']:.0f} ms")
