"""Helpers shared by the socket-level tests: a server on 127.0.0.1:0 with fake runtime, and raw HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any

from tests.conftest import make_config
from voice.runtime.runtime import ModelRuntime
from voice.serve.server import VoiceServer

# Server settings for socket tests: any port, audio as fast as the test sends it.
FAST: dict[str, Any] = {"port": 0, "max_ingress_realtime": 1000.0}


def server_config(server: dict[str, Any] | None = None, **sections: dict[str, Any]) -> Any:
    return make_config(server={**FAST, **(server or {})}, **sections)


@contextlib.asynccontextmanager
async def running(
    runtime: ModelRuntime, server: dict[str, Any] | None = None, **sections: dict[str, Any]
) -> AsyncIterator[VoiceServer]:
    srv = VoiceServer(server_config(server, **sections), runtime)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.shutdown()


async def http_get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """A minimal HTTP/1.1 GET; returns (status, body)."""
    status, _, body = await http_get_full(port, path, headers)
    return status, body


async def http_get_full(
    port: int, path: str, headers: dict[str, str] | None = None, *, tls: ssl.SSLContext | None = None
) -> tuple[int, dict[str, str], str]:
    """A minimal HTTP/1.1 GET; returns (status, headers with lower-case names, body). With ``tls``: HTTPS to
    ``localhost`` (the name the test certificates carry)."""
    if tls is None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        host = f"127.0.0.1:{port}"
    else:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=tls, server_hostname="localhost")
        host = f"localhost:{port}"
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    head, _, body = data.decode("latin-1").partition("\r\n\r\n")
    lines = head.split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


async def until(predicate: Any, timeout_s: float = 5.0, step_s: float = 0.005) -> None:
    """Poll ``predicate()`` until true; AssertionError on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout_s} s")
        await asyncio.sleep(step_s)


# ---------------------------------------------------------------------------------------------- raw sockets
def ws_frame(
    opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, mask: bool = True, length: int | None = None
) -> bytes:
    """One websocket frame, encoded by hand (so that it can break the rules)."""
    import os
    import struct

    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    m = 0x80 if mask else 0
    if n < 126:
        head += bytes([m | n])
    elif n < 1 << 16:
        head += bytes([m | 126]) + struct.pack("!H", n)
    else:
        head += bytes([m | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


async def raw_ws(port: int, *, rcvbuf: int | None = None) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Open a websocket by hand (optionally with a tiny receive buffer); returns the streams after the 101."""
    import base64
    import os
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def read_frames_until_close(
    reader: asyncio.StreamReader, timeout_s: float = 5.0
) -> tuple[int | None, list[tuple[int, bytes]]]:
    """Read server frames until a close frame (returns its code) or EOF (None)."""
    import struct

    frames: list[tuple[int, bytes]] = []
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                b0, b1 = await reader.readexactly(2)
                n = b1 & 0x7F
                if n == 126:
                    (n,) = struct.unpack("!H", await reader.readexactly(2))
                elif n == 127:
                    (n,) = struct.unpack("!Q", await reader.readexactly(8))
                payload = await reader.readexactly(n)
                opcode = b0 & 0x0F
                frames.append((opcode, payload))
                if opcode == 0x8:
                    return (struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None), frames
    except (asyncio.IncompleteReadError, ConnectionError):
        return None, frames


# ---------------------------------------------------------------------------------------------- processes
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sync_http_status(port: int, path: str = "/health") -> int | None:
    """Status of GET path, or None when nothing listens."""
    import http.client

    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return int(status)
    except OSError:
        return None
