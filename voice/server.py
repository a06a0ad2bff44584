"""The websocket server: a reader task and a writer task per connection, plus health and metrics.

``GET /health`` answers 200 once every model is loaded and warmed (503 before), ``GET /metrics`` the
Prometheus text. Browser Origins are checked against an allowlist (HTTP 403); when a token is configured
it is checked at the handshake (``Authorization: Bearer``, HTTP 401 if wrong) or, for browsers that can't
set headers, in the ``start`` message — compared in constant time and never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import http
import ipaddress
import json
import logging
import signal
import uuid
from pathlib import Path

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice.budget import Clock, JsonlSink, MonotonicClock, TurnReport
from voice.config import Config, ConfigError
from voice.engine import Engines
from voice.metrics import Metrics
from voice.protocol import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    CLOSE_POLICY,
    CLOSE_TRY_AGAIN_LATER,
    TIMEOUT,
    UNAUTHORIZED,
    ProtocolError,
    Start,
    error_event,
)
from voice.session import Session

log = logging.getLogger("voice.server")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(config: Config) -> None:
    """Refuse to listen beyond loopback without a token."""
    if not is_loopback(config.server.host) and not config.server.token:
        raise ConfigError(
            f"refusing to listen on {config.server.host}: anyone who can reach it could use the assistant. "
            'Set [server] token = "<a long random secret>" in config.toml (clients send it as '
            "'Authorization: Bearer <token>' or in the start message), or listen on 127.0.0.1"
        )


class VoiceServer:
    """Owns the engines, the sessions and the listening socket."""

    def __init__(self, config: Config, engines: Engines | None, clock: Clock | None = None) -> None:
        self.config = config
        self.engines = engines
        self.clock = clock or MonotonicClock()
        self.metrics = Metrics()
        self.sessions: dict[str, tuple[Session, ServerConnection]] = {}
        self.reports: list[TurnReport] = []
        self._sink = (
            JsonlSink(Path(config.server.turn_log), include_text=config.server.record)
            if config.server.turn_log
            else None
        )
        self._server: Server | None = None
        self.port = config.server.port

    # ------------------------------------------------------------------ HTTP side
    def _allowed_origins(self) -> set[str]:
        p = self.port
        return {f"http://localhost:{p}", f"http://127.0.0.1:{p}", *self.config.server.allowed_origins}

    def _token_header_ok(self, request: Request) -> bool | None:
        """True/False when an Authorization header was sent, None when absent."""
        auth = request.headers.get("Authorization")
        if auth is None:
            return None
        scheme, _, value = auth.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self.config.server.token.encode()
        )

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == "/health":
            ready = self.engines is not None
            body = json.dumps({"status": "ready" if ready else "loading", "sessions": len(self.sessions)})
            status = http.HTTPStatus.OK if ready else http.HTTPStatus.SERVICE_UNAVAILABLE
            return connection.respond(status, body + "\n")
        if path == "/metrics":
            self.metrics.queue_depth = self.engines.queue_depth if self.engines else 0
            self.metrics.sessions_active = len(self.sessions)
            return connection.respond(http.HTTPStatus.OK, self.metrics.render())
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self._allowed_origins():
            self.metrics.error("forbidden_origin")
            return connection.respond(http.HTTPStatus.FORBIDDEN, f"Origin {origin} is not allowed\n")
        if self.config.server.token and self._token_header_ok(request) is False:
            self.metrics.error(UNAUTHORIZED)
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "bad token\n")
        return None

    # ------------------------------------------------------------------ websocket side
    def _on_report(self, report: TurnReport) -> None:
        self.reports.append(report)
        self.metrics.turn(report)
        if self._sink is not None:
            self._sink.write(report)
        log.info("%s", report.summary_line())
        if self.config.server.record:
            log.info(
                "[%s turn %d] heard %r, said %r",
                report.session_id,
                report.turn_id,
                report.transcript,
                report.reply_text,
            )
        else:
            log.debug(
                "[%s turn %d] heard %r, said %r",
                report.session_id,
                report.turn_id,
                report.transcript,
                report.reply_text,
            )

    async def handler(self, ws: ServerConnection) -> None:
        if self.engines is None:
            await ws.close(CLOSE_TRY_AGAIN_LATER, "models are still loading; try again later")
            return
        if len(self.sessions) >= self.config.server.max_sessions:
            self.metrics.error("too_many_sessions")
            await ws.close(CLOSE_TRY_AGAIN_LATER, "too many sessions; try again later")
            return
        session_id = uuid.uuid4().hex[:8]
        session = Session(session_id, self.engines, self.config, self.clock, on_report=self._on_report)
        self.sessions[session_id] = (session, ws)
        header_auth = ws.request is not None and self._token_header_ok(ws.request) is True
        writer = asyncio.create_task(self._write_loop(ws, session), name=f"{session_id}-writer")
        code, reason = CLOSE_NORMAL, ""
        try:
            code, reason = await self._read_loop(ws, session, header_auth)
        except ConnectionClosed:
            pass
        finally:
            await session.cancel_turns()
            if code != CLOSE_NORMAL or session.stopping:
                await self._drain(session)
            writer.cancel()
            with contextlib.suppress(BaseException):
                await writer
            await ws.close(code, reason)
            del self.sessions[session_id]

    async def _drain(self, session: Session, timeout_s: float = 2.0) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while not session.outbox.queue.empty():  # noqa: ASYNC110 (the writer empties it)
                    await asyncio.sleep(0.01)

    async def _read_loop(self, ws: ServerConnection, session: Session, header_auth: bool) -> tuple[int, str]:
        cfg = self.config.server
        loop = asyncio.get_running_loop()
        deadline = loop.time() + cfg.session_max_s
        while True:
            timeout = min(cfg.idle_timeout_s, deadline - loop.time())
            try:
                async with asyncio.timeout(max(0.0, timeout)):
                    message = await ws.recv()
            except TimeoutError:
                what = "session time limit" if loop.time() >= deadline else "idle timeout"
                await self._error(session, ProtocolError(TIMEOUT, f"{what} reached; closing"))
                await session.cancel_turns()
                return CLOSE_GOING_AWAY, what
            if isinstance(message, str):
                err = await self._auth_start(session, message, header_auth)
                if err is None:
                    err = await session.on_text(message)
            else:
                err = await session.on_audio(message)
            if err is not None:
                await self._error(session, err)
                if err.close_code is not None:
                    return err.close_code, err.message[:120]
            if session.stopping:
                await session.wait_turns()
                return CLOSE_NORMAL, "stopped by client"

    async def _auth_start(self, session: Session, message: str, header_auth: bool) -> ProtocolError | None:
        token = self.config.server.token
        if not token or header_auth or session.started is not None:
            return None
        from voice.protocol import decode_client_text

        msg = decode_client_text(message)
        if (
            isinstance(msg, Start)
            and msg.token is not None
            and hmac.compare_digest(msg.token.encode(), token.encode())
        ):
            return None
        return ProtocolError(
            UNAUTHORIZED,
            "this server needs a token: send 'Authorization: Bearer <token>' or \"token\" in the start message",
            close_code=CLOSE_POLICY,
        )

    async def _error(self, session: Session, err: ProtocolError) -> None:
        self.metrics.error(err.code)
        log.warning("[%s] %s: %s", session.id, err.code, err.message)
        await session.outbox.send_event(error_event(err))

    async def _write_loop(self, ws: ServerConnection, session: Session) -> None:
        while True:
            item = await session.outbox.next_frame()
            if item is None:
                return
            frame, on_sent = item
            await ws.send(frame)
            if on_sent is not None:
                on_sent()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        cfg = self.config.server
        check_bind(self.config)
        self._server = await serve(
            self.handler,
            cfg.host,
            cfg.port,
            process_request=self.process_request,
            max_size=cfg.max_message_bytes,
            write_limit=64 * 1024,
            max_queue=16,
            ping_interval=20,
            ping_timeout=20,
        )
        sock = next(iter(self._server.sockets))
        self.port = int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.config.server.host
        return f"ws://{host}:{self.port}/"

    async def shutdown(self) -> None:
        """Cancel turns in flight (they are reported), close every client with 1001, stop listening."""
        for session, ws in list(self.sessions.values()):
            await session.cancel_turns()
            await ws.close(CLOSE_GOING_AWAY, "server shutting down")
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        if self.engines is not None:
            self.engines.close()


async def serve_until_signal(server: VoiceServer) -> None:
    """Run until SIGINT or SIGTERM, then shut down cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down")
    await server.shutdown()
