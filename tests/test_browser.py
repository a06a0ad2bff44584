"""A real browser as the client: headless Chromium loads the page the server serves at ``/``, captures a
spoken question from a fake microphone (a WAV file), streams it over the websocket and gets an answer."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import make_config
from voice.engine import Engines

pytestmark = [pytest.mark.real, pytest.mark.timeout(600)]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (./dev installs it)")
async def test_browser_page_talks_to_the_server(tmp_path: Path) -> None:
    from voice.loader import load_engines
    from voice.server import VoiceServer

    wav = tmp_path / "q.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(tmp_path / "raw.wav"), "What is the capital of France?"],
                   check=True)
    # Chromium loops the file as the microphone: pad it with silence so the turn ends.
    subprocess.run(["sox", str(tmp_path / "raw.wav"), "-r", "48000", "-b", "16", str(wav), "pad", "0.5", "3"],
                   check=True)
    engines: Engines = await asyncio.to_thread(load_engines, make_config())
    server = VoiceServer(make_config(server={"port": 0}), engines)
    await server.start()
    page = f"http://127.0.0.1:{server.port}/"
    html = await asyncio.to_thread(lambda: urllib.request.urlopen(page, timeout=5).read().decode())
    assert "<title>voice" in html
    assert CHROMIUM is not None
    profile = tempfile.mkdtemp()
    browser = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
         "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
         f"--use-file-for-fake-audio-capture={wav}", "--autoplay-policy=no-user-gesture-required",
         "--remote-debugging-port=0", page + "?autostart=1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(r.outcome == "ok" for r in server.reports):
            await asyncio.sleep(0.2)
    finally:
        browser.kill()
        browser.wait()
        shutil.rmtree(profile, ignore_errors=True)
        await server.shutdown()
    ok = [r for r in server.reports if r.outcome == "ok"]
    assert ok, [(r.outcome, r.transcript) for r in server.reports]
    first = ok[0]
    assert "capital" in first.transcript.lower() and "france" in first.transcript.lower()
    assert first.reply_audio_ms > 0 and first.total_ms is not None
