"""The shipped nginx setup (docs/deploy) in front of the server with tagged fakes, over https and wss (issue 14).

nginx runs on 127.0.0.1 (a free port, its own prefix, in the foreground) with a throw-away self-signed
certificate and the site file rendered from ``docs/deploy/voice.nginx.conf.template``. Through it: the page,
``/health`` and ``/metrics`` load, the token and Origin rules still hold, a turn completes, and its reply
audio arrives as the server sent it, over time. The same check on a path that buffers the stream (nginx, then
a relay that holds what the server sends until it goes quiet) must fail: that proves the check.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import ssl
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.exceptions import InvalidStatus

from tests.conftest import silence, tone, tones_are_speech
from tests.netkit import http_get_full, running
from tests.units import FAKE_MS, MS
from voice.audio import float_to_pcm16, write_wav
from voice.bench.burst import MIN_SENT_SPREAD_MS, BurstVerdict, judge
from voice.bench.clips import load_clips
from voice.bench.e2e.compare import direct_options, run_compared
from voice.bench.e2e.measure import E2eOptions, method_meta
from voice.bench.e2e.meta import E2eMeta
from voice.bench.e2e.report import console_summary, markdown
from voice.bench.e2e.result import E2eResult
from voice.bench.e2e.turn import make_plan
from voice.bench.machine import machine_info
from voice.bench.nginx_proxy import (
    PLACEHOLDERS,
    TEMPLATE,
    Proxy,
    check_config,
    find_nginx,
    free_port,
    render,
    running_nginx,
    write_config,
)
from voice.reliability.probe import Probe
from voice.reliability.tagged import reply_for, tagged_runtime, tagged_speech
from voice.runtime.runtime import ModelRuntime

NGINX = find_nginx()
NGINX_MARKS = (
    pytest.mark.nginx,
    pytest.mark.slow,
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (./dev installs Debian's nginx)"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command line tool is not installed"),
    pytest.mark.timeout(60),
)


def needs_nginx(test: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a test that runs nginx: skipped, saying why, where nginx or openssl is missing."""
    for mark in NGINX_MARKS:
        test = mark(test)
    return test


TOKEN = "correct-horse-battery-staple-42"
AUDIO_MS_PER_CHAR = 5.0  # the long reply (~390 characters) is ~2 s of audio
BYTES_PER_MS = 32  # 16 kHz s16le


def paced_runtime() -> ModelRuntime:
    """Tagged fakes whose TTS takes as long as the audio it makes (rtf 1): the reply leaves the server
    clause by clause, over roughly its own duration, like a TTS running at real time."""
    return tagged_runtime(FAKE_MS, tts_rtf=1.0, audio_ms_per_char=AUDIO_MS_PER_CHAR)


def trusting(proxy: Proxy) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(proxy.ca_file))


# ---------------------------------------------------------------------------------------------- the template
def test_the_template_uses_exactly_the_documented_placeholders() -> None:
    text = TEMPLATE.read_text(encoding="utf-8")
    values = {name: f"<{name}>" for name in PLACEHOLDERS}
    rendered = render(text, values)
    assert "${VOICE_" not in rendered
    for name in PLACEHOLDERS:
        assert f"<{name}>" in rendered
    readme = (TEMPLATE.parent / "README.md").read_text(encoding="utf-8")
    for name in PLACEHOLDERS:
        assert name in readme, f"docs/deploy/README.md does not explain {name}"


def test_render_names_a_missing_or_an_unknown_placeholder() -> None:
    with pytest.raises(ValueError, match="no value for VOICE_B"):
        render("a ${VOICE_A} b ${VOICE_B}", {"VOICE_A": "1"})
    with pytest.raises(ValueError, match="has no VOICE_C"):
        render("a ${VOICE_A}", {"VOICE_A": "1", "VOICE_C": "2"})
    assert render("$host ${VOICE_A} $http_upgrade", {"VOICE_A": "x"}) == "$host x $http_upgrade"


@needs_nginx
def test_nginx_accepts_the_rendered_config(tmp_path: Path) -> None:
    from voice.bench.nginx_proxy import self_signed

    cert, key = self_signed(tmp_path)
    conf = write_config(tmp_path, "127.0.0.1:8765", free_port(), cert, key)
    assert "test is successful" in check_config(conf, tmp_path)


# ---------------------------------------------------------------------------------------------- a buffering path
class BufferingRelay:
    """A TCP relay that passes what the client sends at once but holds what the server sends until the server
    has been quiet for ``quiet_s`` (a store-and-forward middlebox): the kind of path that makes a stream look
    fine on the server while the listener gets it in one lump."""

    def __init__(self, backend_port: int, quiet_s: float) -> None:
        self.backend_port = backend_port
        self.quiet_s = quiet_s
        self.flushes = 0

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, hold: bool) -> None:
        held = bytearray()
        try:
            while True:
                try:
                    async with asyncio.timeout(self.quiet_s if hold and held else None):
                        data = await reader.read(65536)
                except TimeoutError:
                    data = None
                if data is None or (not data and held):
                    writer.write(bytes(held))
                    held.clear()
                    self.flushes += 1
                    await writer.drain()
                if data is None:
                    continue
                if not data:
                    break
                if hold:
                    held += data
                else:
                    writer.write(data)
                    await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _connection(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.backend_port)
        await asyncio.gather(self._pipe(client_r, server_w, hold=False), self._pipe(server_r, client_w, hold=True))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[int]:
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        try:
            yield int(server.sockets[0].getsockname()[1])
        finally:
            server.close()


# ---------------------------------------------------------------------------------------------- through nginx
@needs_nginx
async def test_page_health_metrics_token_and_origin_through_nginx(tmp_path: Path) -> None:
    port = free_port()
    origin = f"https://localhost:{port}"
    async with (
        running(tagged_runtime(0.1 * FAKE_MS), {"token": TOKEN, "allowed_origins": [origin]}) as srv,
        running_nginx(f"127.0.0.1:{srv.port}", tmp_path, port=port) as proxy,
    ):
        tls = trusting(proxy)
        # The page and its files, with the server's own security headers passed on.
        status, headers, body = await http_get_full(proxy.port, "/", tls=tls)
        assert status == 200 and "<html" in body.lower()
        assert "default-src 'none'" in headers["content-security-policy"]
        assert headers["x-frame-options"] == "DENY"
        assert "content-encoding" not in headers
        status, _, _ = await http_get_full(proxy.port, "/page.js", tls=tls)
        assert status == 200
        status, _, body = await http_get_full(proxy.port, "/health", tls=tls)
        assert status == 200 and json.loads(body)["status"] == "ready"
        status, _, _ = await http_get_full(proxy.port, "/metrics", tls=tls)
        assert status == 401
        status, _, body = await http_get_full(proxy.port, "/metrics", {"Authorization": f"Bearer {TOKEN}"}, tls=tls)
        assert status == 200 and "voice_turns_total" in body

        # The token and Origin rules hold through the proxy.
        with pytest.raises(InvalidStatus) as refused:
            await Probe.connect(proxy.wss_url, ssl=tls, token="wrong-token-wrong-token", start={})
        assert refused.value.response.status_code == 401
        with pytest.raises(InvalidStatus) as refused:
            await Probe.connect(proxy.wss_url, ssl=tls, token=TOKEN, origin="https://evil.example.com", start={})
        assert refused.value.response.status_code == 403
        no_token = await Probe.connect(proxy.wss_url, ssl=tls, origin=origin)  # a start without the token
        assert await no_token.wait_closed(5) == 1008
        assert no_token.errors()[0]["code"] == "unauthorized"

        # A browser-like session: the page's Origin, the token in the start message; a turn completes.
        p = await Probe.connect(proxy.wss_url, ssl=tls, origin=origin, start={"token": TOKEN})
        assert p.session_id
        report = await p.turn(tagged_speech("nginx1"))
        assert report["outcome"] == "ok"
        assert " ".join(e["text"] for e in p.of_type("reply_text")) == reply_for("nginx1")
        assert p.audio_bytes[report["turn_id"]] == pytest.approx(report["reply_audio_ms"] * BYTES_PER_MS, abs=2)
        await p.close()


async def _turn_through(proxy: Proxy, tag: str) -> BurstVerdict:
    """One long reply through the proxy; the buffering detector's verdict on how its audio arrived."""
    p = await Probe.connect(proxy.wss_url, ssl=trusting(proxy))
    try:
        report = await p.turn(tagged_speech(tag))
        assert report["outcome"] == "ok"
        tid = report["turn_id"]
        arrivals = p.audio_arrivals_ns[tid]
        return judge(arrivals, p.audio_bytes[tid] / BYTES_PER_MS, report["reply_audio_sent_spread_ms"])
    finally:
        await p.close()


def progressive(v: BurstVerdict) -> bool:
    """The check: the reply's chunks arrived over roughly the reply's own duration (at least half of it), as the
    server sent them, not within a few milliseconds at the end."""
    return v.burst is False and v.arrival_spread_ms >= 0.5 * v.audio_ms


@needs_nginx
@pytest.mark.parametrize(("route", "expected"), [("shipped", True), ("buffering", False)])
async def test_reply_audio_arrives_progressively_through_nginx_and_the_check_fails_on_a_buffering_path(
    tmp_path: Path, route: str, expected: bool
) -> None:
    async with running(paced_runtime()) as srv:
        relay = BufferingRelay(srv.port, quiet_s=600 * MS)
        async with contextlib.AsyncExitStack() as stack:
            upstream = srv.port if route == "shipped" else await stack.enter_async_context(relay.running())
            proxy = await stack.enter_async_context(running_nginx(f"127.0.0.1:{upstream}", tmp_path))
            verdict = await _turn_through(proxy, "long1")
    assert verdict.sent_spread_ms is not None and verdict.sent_spread_ms > 0.5 * verdict.audio_ms, verdict
    assert progressive(verdict) is expected, verdict
    if route == "buffering":
        assert verdict.burst is True and relay.flushes > 0


# ---------------------------------------------------------------------------------------------- the bench
@needs_nginx
async def test_bench_e2e_over_wss_flags_the_buffered_route_and_reports_what_it_adds(tmp_path: Path) -> None:
    """``voice bench e2e --url wss://… --ca-file … --compare-direct ws://…`` on a buffering path: the proxied
    turns are flagged as bursts, the direct ones are not, and the added latency is reported per pair."""
    write_wav(tmp_path / "one.wav", float_to_pcm16(np.concatenate([silence(0.32), tone(0.48), silence(0.2)])), 16000)
    clips, _ = load_clips(tmp_path, speech_probabilities=tones_are_speech)
    # "hello there" → "Okay, this is the reply to there.": two clauses, the second synthesized ~300 ms later.
    runtime = tagged_runtime(FAKE_MS, tts_rtf=1.0, audio_ms_per_char=40.0)
    async with running(runtime) as srv:
        relay = BufferingRelay(srv.port, quiet_s=600 * MS)
        async with relay.running() as relay_port, running_nginx(f"127.0.0.1:{relay_port}", tmp_path / "nginx") as px:
            opts = E2eOptions(repeats=1, warmup=0, ca_file=px.ca_file)
            proxied, direct = await run_compared(
                px.wss_url, srv.url, make_plan(clips, 1, 0), opts, direct_options(opts)
            )
    (p,), (d,) = proxied, direct
    assert p.outcome == d.outcome == "ok" and d.route == "direct" and p.route == ""
    assert p.burst is True and "buffered" in p.burst_why, p
    assert d.burst is False, d
    assert p.audio_sent_spread_ms is not None and p.audio_sent_spread_ms >= MIN_SENT_SPREAD_MS
    result = E2eResult(
        meta=E2eMeta(machine=machine_info(["voice", "bench", "e2e"]), speech_dir=str(tmp_path),
                     method=method_meta(opts), load_s=None, server="test", models=None, config=None,
                     ram_peak_mb=None),
        clips=[c.describe() for c in clips], turns=proxied, direct=direct,
    )  # fmt: skip
    data = json.loads(json.dumps(result.to_json()))
    assert data["summary"]["n_burst"] == 1 and data["direct_summary"]["n_burst"] == 0
    added = data["added_latency"]
    assert added["n_pairs"] == 1
    assert p.mouth_to_ear_ms is not None and d.mouth_to_ear_ms is not None
    assert added["added_ms"]["p50"] == pytest.approx(p.mouth_to_ear_ms - d.mouth_to_ear_ms, abs=0.05)
    text = console_summary(result)
    assert "BUFFERED: 1 of 1" in text and "the proxy adds p50" in text
    assert "## Through the proxy vs direct (1 pairs, ms)" in markdown(result)


@needs_nginx
async def test_the_bench_helper_runs_a_command_once_health_answers_through_nginx(tmp_path: Path) -> None:
    """``python -m voice.bench.nginx_proxy … -- CMD``: nginx up, /health 200 through it, then CMD runs with the
    proxy's URL and CA file in its environment; its exit code is the helper's."""
    from voice.bench.nginx_proxy import main

    child = (
        "import os, ssl, sys, urllib.request\n"
        "url = os.environ['VOICE_PROXY_URL'].replace('wss://', 'https://') + 'health'\n"
        "ctx = ssl.create_default_context(cafile=os.environ['VOICE_PROXY_CA'])\n"
        "sys.exit(7 if urllib.request.urlopen(url, context=ctx).status == 200 else 1)\n"
    )
    async with running(tagged_runtime(0.1 * FAKE_MS)) as srv:
        args = ["--upstream", f"127.0.0.1:{srv.port}", "--port", str(free_port()), "--dir", str(tmp_path),
                "--wait-health", "10", "--", sys.executable, "-c", child]  # fmt: skip
        assert await asyncio.to_thread(main, args) == 7
