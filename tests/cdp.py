"""Headless Chromium driven over its DevTools protocol with the ``websockets`` client (no browser-automation
dependency): start it with a fake microphone, evaluate JavaScript in the page, collect its errors, take
screenshots."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    """One page target: ``evaluate`` JavaScript, wait for a condition, read the errors it logged."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.errors: list[str] = []
        self.console: list[str] = []
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg and msg["id"] in self._waiting:
                self._waiting.pop(msg["id"]).set_result(msg)
            elif msg.get("method") == "Runtime.exceptionThrown":
                d = msg["params"]["exceptionDetails"]
                self.errors.append(str(d.get("exception", {}).get("description") or d.get("text")))
            elif msg.get("method") == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in msg["params"]["args"])
                self.console.append(f"{msg['params']['type']}: {text}")
                if msg["params"]["type"] == "error":
                    self.errors.append(text)
            elif msg.get("method") == "Log.entryAdded":
                entry = msg["params"]["entry"]
                self.console.append(f"{entry['level']} {entry.get('source')}: {entry['text']}")
                if entry["level"] == "error":
                    self.errors.append(f"{entry.get('source')}: {entry['text']}")

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        i = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[i] = fut
        await self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        msg = await asyncio.wait_for(fut, 30)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        result: dict[str, Any] = msg.get("result", {})
        return result

    async def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` (awaited if a promise), run as if by a user gesture."""
        r = await self.send(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True, userGesture=True
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression[:80]!r} threw: {r['exceptionDetails']}")
        return r["result"].get("value")

    async def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; its value. Raises TimeoutError with the page's errors."""
        try:
            async with asyncio.timeout(timeout_s):
                while not (value := await self.evaluate(expression)):
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise TimeoutError(f"{expression!r} still false; page errors {self.errors}") from None
        return value

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        await self.wait_for("document.readyState === 'complete'")

    async def screenshot(self) -> bytes:
        """The page as PNG bytes."""
        r = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        return base64.b64decode(r["data"])


@contextlib.asynccontextmanager
async def chromium(
    fake_audio: Path | None = None, width: int = 1200, height: int = 900, extra_args: Sequence[str] = ()
) -> AsyncIterator[Page]:
    """Headless Chromium with a fake microphone (``fake_audio``, a WAV looped; else Chromium's beep)."""
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed")
    profile = Path(tempfile.mkdtemp(prefix="voice-chromium-"))
    args = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
        "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        "--autoplay-policy=no-user-gesture-required", "--remote-debugging-port=0", f"--window-size={width},{height}",
    ]  # fmt: skip
    if fake_audio is not None:
        args.append(f"--use-file-for-fake-audio-capture={fake_audio}")
    args.extend(extra_args)
    proc = subprocess.Popen([*args, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page: Page | None = None
    try:
        port_file = profile / "DevToolsActivePort"
        async with asyncio.timeout(30):
            while not port_file.exists() or not port_file.read_text().strip():
                await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = await asyncio.to_thread(
            lambda: json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5).read())
        )
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        async with connect(url, max_size=None) as ws:
            page = Page(ws)
            for domain in ("Runtime", "Log", "Page"):
                await page.send(f"{domain}.enable")
            yield page
    finally:
        if page is not None:
            page._reader.cancel()
        proc.kill()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
