"""A tiny scripted OpenAI-compatible chat-completions server on 127.0.0.1:0, for the failure cases a real
server will not produce on demand: an HTTP error, a first token that never comes, a stream cut mid-reply,
a stream held back and sent in one lump (buffered), a stream that stalls after a few tokens."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Kind = Literal["stream", "status", "hold", "cut", "buffered", "stall", "interrupted"]


@dataclass(frozen=True)
class Script:
    """What the server does with one request.

    ``stream``: the tokens ``gap_s`` apart, then finish_reason, usage and [DONE]. ``status``: HTTP ``status``
    with a JSON error body. ``hold``: headers, then nothing until the server is closed. ``cut``: the first
    ``after`` tokens, then the connection is dropped mid-chunked-body. ``buffered``: nothing for
    ``wait_s``, then every event in one write. ``stall``: ``after`` tokens, then nothing until closed.
    ``interrupted``: ``after`` tokens, then ``[DONE]`` without a finish_reason (llama_cpp.server's
    ``interrupt_requests``). ``logprobs``: each token's log-probability, sent as ``choices[0].logprobs`` (None:
    none sent). ``message``: the error message of a ``status`` reply.
    """

    kind: Kind = "stream"
    tokens: tuple[str, ...] = ("Paris", " is", " the", " capital", ".")
    gap_s: float = 0.0
    status: int = 200
    after: int = 2
    wait_s: float = 0.0
    usage: dict[str, Any] | None = None
    logprobs: tuple[float, ...] | None = None
    message: str | None = None


def _event(obj: object) -> bytes:
    return f"data: {json.dumps(obj)}\n\n".encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class FakeOpenAi:
    """Start with ``with FakeOpenAi() as srv``; queue scripts with :meth:`script` (default: ``Script()``)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        """Each request's headers, names in lower case."""
        self._scripts: queue.SimpleQueue[Script] = queue.SimpleQueue()
        self.release = threading.Event()
        """Set on close: ``hold`` and ``stall`` requests end."""
        self.disconnected = threading.Event()
        """Set when the client closed a stream while the server was still writing."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def handle(self) -> None:
                # A client that stops reading a reply early (a gate replaced it) closes its keep-alive
                # connection with the rest unread: the wait for its next request ends in a reset.
                with contextlib.suppress(ConnectionResetError):
                    super().handle()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append(body)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                try:
                    script = owner._scripts.get_nowait()
                except queue.Empty:
                    script = Script()
                try:
                    owner._serve(self, script)
                except (BrokenPipeError, ConnectionResetError):
                    owner.disconnected.set()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def script(self, *scripts: Script) -> None:
        for s in scripts:
            self._scripts.put(s)

    def __enter__(self) -> FakeOpenAi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    # ------------------------------------------------------------------ the behaviours
    def _events(self, s: Script) -> Iterator[bytes]:
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake"}
        yield _event({**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
        for i, t in enumerate(s.tokens):
            choice: dict[str, Any] = {"index": 0, "delta": {"content": t}, "finish_reason": None}
            if s.logprobs is not None:
                choice["logprobs"] = {"content": [{"token": t, "logprob": s.logprobs[i], "top_logprobs": []}]}
            yield _event({**base, "choices": [choice]})
        yield _event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if s.usage is not None:
            yield _event({**base, "choices": [], "usage": s.usage})
        yield b"data: [DONE]\n\n"

    def _serve(self, h: BaseHTTPRequestHandler, s: Script) -> None:
        if s.kind == "status":
            payload = json.dumps({"error": {"message": s.message or f"fake failure {s.status}"}}).encode()
            h.send_response(s.status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
            return
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.wfile.flush()
        events = list(self._events(s))
        if s.kind == "hold":
            self.release.wait()
            return
        if s.kind == "buffered":
            time.sleep(s.wait_s)
            h.wfile.write(b"".join(_chunk(e) for e in events) + b"0\r\n\r\n")
            h.wfile.flush()
            return
        if s.kind == "interrupted":
            events = [*events[: s.after + 1], b"data: [DONE]\n\n"]
        for i, e in enumerate(events):
            if i > s.after and s.kind in ("cut", "stall"):  # events[0] is the role, then the tokens
                if s.kind == "stall":
                    while not self.release.wait(0.5):
                        h.wfile.write(_chunk(b": keep-alive\n\n"))  # a comment: fails once the client is gone
                        h.wfile.flush()
                    return
                h.close_connection = True
                h.connection.shutdown(2)  # dropped mid-body: no terminating chunk
                return
            h.wfile.write(_chunk(e))
            h.wfile.flush()
            if s.gap_s and i > 0:
                time.sleep(s.gap_s)
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
