"""The websocket server: a reader task and a writer task per connection, plus a page, health and metrics.

``GET /`` serves the browser client, ``GET /health`` answers 200 once every model is loaded and warmed
(503 before, and while stopping), ``GET /metrics`` the Prometheus text. Browser Origins are checked
against an allowlist (HTTP 403); when a token is configured it is checked at the handshake
(``Authorization: Bearer``, HTTP 401 if wrong) or, for browsers that can't set headers, in the ``start``
message (else close 1008) — compared in constant time and never logged. See ``docs/security.md`` for
every limit and close code.
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
import threading
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice import events
from voice.budget import Clock, JsonlSink, MonotonicClock, TurnReport
from voice.config import Config, ConfigError
from voice.engine import Engines
from voice.metrics import Metrics
from voice.protocol import (
    CLOSE_GOING_AWAY,
    CLOSE_INTERNAL,
    CLOSE_NORMAL,
    CLOSE_POLICY,
    CLOSE_TRY_AGAIN_LATER,
    SHUTTING_DOWN,
    TIMEOUT,
    UNAUTHORIZED,
    ProtocolError,
)
from voice.realtime import REALTIME_PATH
from voice.realtime.front import RealtimeFront
from voice.session import Session
from voice.webpage import normalise_origin, own_origins, page_file

log = logging.getLogger("voice.server")

#: Shortest token accepted when listening beyond loopback.
MIN_TOKEN_CHARS = 16
#: Turn reports kept in memory (``VoiceServer.reports``) for tools and tests; older ones are dropped.
REPORTS_KEPT = 1000


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(config: Config) -> None:
    """Refuse to listen beyond loopback without a (long enough) token."""
    host, token = config.server.host, config.server.token
    if is_loopback(host):
        return
    what = "all interfaces" if host in ("", "0.0.0.0", "::") else host
    if not token:
        raise ConfigError(
            f"refusing to listen on {what} ({host!r}) without a token: anyone who can reach this machine "
            "could use the assistant and hear its replies. Either listen on 127.0.0.1 (the default), or "
            f'set [server] token = "<a random secret of {MIN_TOKEN_CHARS}+ characters>" in your config '
            "(e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`); clients then send "
            "'Authorization: Bearer <token>' or \"token\" in the start message"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"refusing to listen on {what} ({host!r}): [server] token is shorter than {MIN_TOKEN_CHARS} "
            "characters; use a long random secret"
        )


def allowed_origins(port: int, extra: Sequence[str]) -> set[str]:
    """Browser Origins allowed to open a websocket: the server's own loopback origins on ``port`` and the
    configured ``extra`` ones, all in the form of :func:`voice.webpage.normalise_origin` (so a page on
    port 80 or 443, whose Origin carries no port, is allowed by its own server)."""
    return own_origins(port) | {normalise_origin(o) for o in extra}


class _Redact(logging.Filter):
    """Removes the token (and Authorization header values) from log records of the websockets library,
    which logs request headers and frames at DEBUG."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it
            return True
        redacted = message.replace(self.token, "[redacted]") if self.token else message
        if "authorization:" in redacted.lower():
            redacted = redacted.split(":", 1)[0] + ": [redacted]"
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def _websockets_logger(token: str) -> logging.Logger:
    logger = logging.getLogger("voice.websockets")
    for f in list(logger.filters):
        if isinstance(f, _Redact):
            logger.removeFilter(f)
    logger.addFilter(_Redact(token))
    return logger


@dataclass
class _Conn:
    """One connection: its session, socket and tasks."""

    session: Session
    ws: ServerConnection
    authenticated: bool
    front: RealtimeFront | None = None
    """The ``/v1/realtime`` adapter driving the session; None for the native protocol."""
    reader: asyncio.Task[tuple[int, str]] | None = None
    shutting_down: bool = False
    opened: float = field(default=0.0)


class VoiceServer:
    """Owns the engines, the sessions and the listening socket."""

    def __init__(self, config: Config, engines: Engines | None, clock: Clock | None = None) -> None:
        self.config = config
        self.engines = engines
        self.clock = clock or MonotonicClock()
        self.metrics = Metrics()
        self.sessions: dict[str, _Conn] = {}
        self.reports: deque[TurnReport] = deque(maxlen=REPORTS_KEPT)
        self._sink = (
            JsonlSink(Path(config.server.turn_log), include_text=config.server.record)
            if config.server.turn_log
            else None
        )
        self._server: Server | None = None
        self.port = config.server.port
        self.stopping = False
        self.report_hooks: list[Callable[[TurnReport], None]] = []
        self._sessions_changed = asyncio.Event()

    async def wait_sessions(self, done: Callable[[dict[str, _Conn]], bool], timeout_s: float) -> bool:
        """Wait until ``done(self.sessions)`` holds (checked whenever a session comes or goes)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while not done(self.sessions):
                    self._sessions_changed.clear()
                    await self._sessions_changed.wait()
        return done(self.sessions)

    # ------------------------------------------------------------------ HTTP side
    def _allowed_origins(self) -> set[str]:
        return allowed_origins(self.port, self.config.server.allowed_origins)

    def _token_ok(self, candidate: str) -> bool:
        return hmac.compare_digest(candidate.encode(), self.config.server.token.encode())

    def _token_header_ok(self, request: Request) -> bool | None:
        """True/False when an Authorization header was sent, None when absent."""
        values = request.headers.get_all("Authorization")
        if not values:
            return None
        if len(values) > 1:
            return False
        scheme, _, value = values[0].partition(" ")
        return scheme.lower() == "bearer" and self._token_ok(value.strip())

    def _health(self) -> tuple[http.HTTPStatus, str]:
        if self.stopping:
            status = "stopping"
        elif self.engines is None:
            status = "loading"
        else:
            status = "ready"
        code = http.HTTPStatus.OK if status == "ready" else http.HTTPStatus.SERVICE_UNAVAILABLE
        return code, json.dumps({"status": status, "sessions": len(self.sessions)}) + "\n"

    @staticmethod
    def _page(path: str) -> Response | None:
        """A file of the browser client (``voice/webpage.py``: a fixed allow-list, a strict CSP)."""
        answer = page_file(path)
        if answer is None:
            return None
        reason = http.HTTPStatus(answer.status).phrase
        return Response(answer.status, reason, Headers(list(answer.headers)), answer.body)

    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = request.path.split("?", 1)[0]
        token = self.config.server.token
        upgrade = request.headers.get_all("Upgrade")
        if not any(u.lower() == "websocket" for u in upgrade) and (page := self._page(path)) is not None:
            return page
        if path == "/health":
            return connection.respond(*self._health())
        if path == "/metrics":
            if token and self._token_header_ok(request) is not True:
                return connection.respond(http.HTTPStatus.UNAUTHORIZED, "send Authorization: Bearer <token>\n")
            self.metrics.queue_depth = self.engines.queue_depth if self.engines else 0
            self.metrics.kv = self.engines.kv_stats() if self.engines else None
            self.metrics.sessions_active = len(self.sessions)
            self.metrics.ready = self.engines is not None and not self.stopping
            return connection.respond(http.HTTPStatus.OK, self.metrics.render())
        if any(u.lower() == "websocket" for u in upgrade) and (routed := self._route(connection, request)):
            return routed
        origins = request.headers.get_all("Origin")
        if origins and (len(origins) > 1 or normalise_origin(origins[0]) not in self._allowed_origins()):
            self.metrics.error("forbidden_origin")
            log.warning("refused a websocket from Origin %.100r (not in the allowlist)", origins[0])
            return connection.respond(
                http.HTTPStatus.FORBIDDEN,
                "this Origin is not allowed; add it to [server] allowed_origins\n",
            )
        if token and self._token_header_ok(request) is False:
            self.metrics.error(UNAUTHORIZED)
            log.warning("refused a websocket with a wrong token")
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "wrong token\n")
        return None

    def _route(self, connection: ServerConnection, request: Request) -> Response | None:
        """Websocket paths: ``/`` is the native protocol, ``/v1/realtime`` the OpenAI Realtime-compatible one
        (its token only in the Authorization header, and a larger message limit for whole-clip appends);
        anything else is 404."""
        path = request.path.split("?", 1)[0]
        if path == REALTIME_PATH:
            if self.config.server.token and self._token_header_ok(request) is not True:
                self.metrics.error(UNAUTHORIZED)
                log.warning("refused a realtime websocket without the right token")
                return connection.respond(http.HTTPStatus.UNAUTHORIZED, "send Authorization: Bearer <token>\n")
            connection.protocol.max_message_size = self.config.server.realtime_max_message_bytes
            return None
        if path != "/":
            return connection.respond(
                http.HTTPStatus.NOT_FOUND, f"no websocket at {path[:100]}; use / or {REALTIME_PATH}\n"
            )
        return None

    # ------------------------------------------------------------------ reports
    def _on_report(self, report: TurnReport) -> None:
        self.reports.append(report)
        self.metrics.turn(report)
        for hook in self.report_hooks:
            hook(report)
        if self._sink is not None:
            try:
                self._sink.write(report)
            except OSError as e:  # a full disk must not take the turn (or the server) down
                self.metrics.error("turn_log")
                log.error("cannot write the turn log %s: %s", self._sink.path, e)
        log.info("%s", report.summary_line())
        level = logging.INFO if self.config.server.record else logging.DEBUG
        log.log(
            level,
            "[%s turn %d] heard %r, said %r",
            report.session_id,
            report.turn_id,
            report.transcript,
            report.reply_text,
        )

    def _on_turn_error(self, err: ProtocolError) -> None:
        self.metrics.error(err.code)

    # ------------------------------------------------------------------ websocket side
    async def _refuse(self, ws: ServerConnection, code: int, reason: str, metric: str) -> None:
        self.metrics.error(metric)
        self.metrics.closed(code)
        await self._close(ws, code, reason)

    async def _close(self, ws: ServerConnection, code: int, reason: str) -> None:
        """Close with a code, but never wait longer than ``close_timeout_s``: websockets' close() first
        drains the write buffer, which never happens when the client stopped reading."""
        try:
            async with asyncio.timeout(self.config.server.close_timeout_s):
                await ws.close(code, reason)
        except TimeoutError:
            ws.transport.abort()

    async def handler(self, ws: ServerConnection) -> None:
        if self.stopping:
            await self._refuse(ws, CLOSE_GOING_AWAY, "server shutting down", SHUTTING_DOWN)
            return
        if self.engines is None:
            await self._refuse(ws, CLOSE_TRY_AGAIN_LATER, "models are still loading; try again later", "loading")
            return
        if len(self.sessions) >= self.config.server.max_sessions:
            await self._refuse(ws, CLOSE_TRY_AGAIN_LATER, "too many sessions; try again later", "too_many_sessions")
            return
        session_id = uuid.uuid4().hex[:8]
        path = ws.request.path if ws.request is not None else "/"
        front = None
        if path.split("?", 1)[0] == REALTIME_PATH:
            front = RealtimeFront(
                session_id, self.engines, self.config, self.clock, path=path,
                on_report=self._on_report, on_error=self._on_turn_error, on_client_error=self.metrics.error,
            )
            session = front.session
        else:
            session = Session(
                session_id,
                self.engines,
                self.config,
                self.clock,
                on_report=self._on_report,
                on_error=self._on_turn_error,
            )
        authenticated = not self.config.server.token or (
            ws.request is not None and self._token_header_ok(ws.request) is True
        )
        conn = _Conn(session, ws, authenticated, front, opened=asyncio.get_running_loop().time())
        self.sessions[session_id] = conn
        self._sessions_changed.set()
        writer = asyncio.create_task(self._write_loop(ws, session), name=f"{session_id}-writer")
        writer.add_done_callback(lambda _: session.outbox.close())
        if front is not None:
            await front.start()
        reader = asyncio.create_task(self._read_loop(conn), name=f"{session_id}-reader")
        conn.reader = reader
        code: int | None = CLOSE_NORMAL
        reason = ""
        try:
            await asyncio.wait([reader, writer], return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                # The writer ended first: the client left, or stopped reading and was closed for it.
                reader.cancel()
                await asyncio.wait([reader])
                code = None
            elif reader.cancelled():
                code, reason = CLOSE_GOING_AWAY, "server shutting down"
            elif (exc := reader.exception()) is not None:
                if isinstance(exc, ConnectionClosed):
                    code = None  # the client left (or the library closed it: 1009, 1002, 1007, 1011)
                else:
                    log.error("[%s] reader failed", session_id, exc_info=exc)
                    self.metrics.error("internal")
                    code, reason = CLOSE_INTERNAL, "internal error"
            else:
                code, reason = reader.result()
            if conn.shutting_down and code is not None:
                grace = self.config.server.shutdown_grace_s
                if not await session.wait_turns(grace):
                    log.info("[%s] cancelling a turn still running after %.1f s", session_id, grace)
            await session.cancel_turns()  # reported as cancelled; the models are free on return
            if conn.shutting_down and code is not None:
                await session.outbox.send_event(
                    events.Error.of(ProtocolError(SHUTTING_DOWN, "the server is shutting down", CLOSE_GOING_AWAY))
                )
            if code is not None and not session.outbox.closed:
                await session.outbox.drain(self.config.server.close_timeout_s)
        finally:
            reader.cancel()
            session.outbox.close()
            writer.cancel()
            for task in (reader, writer):
                with contextlib.suppress(BaseException):
                    await task
            with contextlib.suppress(Exception):
                await session.cancel_turns()
            if code is not None:
                with contextlib.suppress(Exception):
                    await self._close(ws, code, reason)
            sent = ws.protocol.close_sent
            self.metrics.closed(sent.code if sent is not None else 1006)
            del self.sessions[session_id]
            self._sessions_changed.set()

    async def _read_loop(self, conn: _Conn) -> tuple[int, str]:
        """Read messages until the connection must close; returns the close code and reason.

        Raises ConnectionClosed when the client went away. Cancelled by :meth:`shutdown`."""
        cfg = self.config.server
        ws, session = conn.ws, conn.session
        loop = asyncio.get_running_loop()
        session_deadline = conn.opened + cfg.session_max_s
        start_deadline = conn.opened + cfg.start_timeout_s
        while True:
            now = loop.time()
            deadlines = {"idle timeout": now + cfg.idle_timeout_s, "session time limit": session_deadline}
            if session.started is None or not conn.authenticated:
                deadlines["no start message"] = start_deadline
            what = min(deadlines, key=lambda k: deadlines[k])
            try:
                async with asyncio.timeout(max(0.0, deadlines[what] - now)):
                    message = await ws.recv()
            except TimeoutError:
                limit = {
                    "idle timeout": f"{cfg.idle_timeout_s:g} s without a message",
                    "session time limit": f"session longer than {cfg.session_max_s:g} s",
                    "no start message": f"no start message within {cfg.start_timeout_s:g} s",
                }[what]
                await self._error(session, ProtocolError(TIMEOUT, f"{what} ({limit}); closing", CLOSE_GOING_AWAY))
                return CLOSE_GOING_AWAY, what
            err = None if conn.authenticated else self._authenticate(conn, message)
            if err is None:
                if conn.front is not None:
                    err = await conn.front.on_message(message)
                elif isinstance(message, str):
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

    def _authenticate(self, conn: _Conn, message: str | bytes) -> ProtocolError | None:
        """Without a header token, the first message must be a start carrying the token."""
        token = None
        if isinstance(message, str):
            with contextlib.suppress(ValueError, RecursionError):
                obj: Any = json.loads(message)
                if isinstance(obj, dict) and obj.get("type") == "start" and isinstance(obj.get("token"), str):
                    token = obj["token"]
        if token is not None and self._token_ok(token):
            conn.authenticated = True
            return None
        return ProtocolError(
            UNAUTHORIZED,
            "this server needs a token: send 'Authorization: Bearer <token>' or \"token\" in the start message",
            close_code=CLOSE_POLICY,
        )

    async def _error(self, session: Session, err: ProtocolError) -> None:
        self.metrics.error(err.code)
        log.warning("[%s] %s: %s", session.id, err.code, err.message)
        await session.outbox.send_event(events.Error.of(err))

    async def _write_loop(self, ws: ServerConnection, session: Session) -> None:
        """Send queued frames until the outbox closes. Raises ConnectionClosed if the client left.

        A send that cannot complete within ``ping_timeout_s`` means the client stopped reading (the
        write buffer stays full): it is closed like a client that missed a keepalive pong (1011).
        websockets' own keepalive cannot see this: its ping waits behind the full write buffer."""
        stall_s = self.config.server.ping_timeout_s or None
        while (item := await session.outbox.next_frame()) is not None:
            frame, on_sent = item
            try:
                async with asyncio.timeout(stall_s):
                    await ws.send(frame)
            except TimeoutError:
                self.metrics.error("not_reading")
                log.warning("[%s] the client has not read for %.1f s; closing", session.id, stall_s or 0)
                await self._close(ws, CLOSE_INTERNAL, "keepalive timeout: the client stopped reading")
                return
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
            write_limit=cfg.write_limit_bytes,
            max_queue=16,
            ping_interval=cfg.ping_interval_s or None,
            ping_timeout=cfg.ping_timeout_s or None,
            close_timeout=cfg.close_timeout_s,
            logger=_websockets_logger(cfg.token),
            server_header=None,
            # No permessage-deflate: PCM does not compress, and zlib would cost CPU on the event loop for
            # every audio chunk and ~300 KB of memory per connection.
            compression=None,
        )
        sock = next(iter(self._server.sockets))
        self.port = int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.config.server.host
        if ":" in host:
            host = f"[{host}]"
        return f"ws://{host}:{self.port}/"

    async def shutdown(self) -> None:
        """Stop listening; give turns in flight ``shutdown_grace_s`` to finish, cancel the rest (each is
        reported), send their reports, close every client with 1001, then close the engines."""
        if self.stopping:
            return
        self.stopping = True
        if self._server is not None:
            self._server.close(close_connections=False)  # no new connections
        for conn in list(self.sessions.values()):
            conn.shutting_down = True
            if conn.reader is not None:
                conn.reader.cancel()
        if self._server is not None:
            await self._server.wait_closed()  # every handler has returned
        if self.engines is not None:
            await asyncio.to_thread(self.engines.close)


class Servable(Protocol):
    """What :func:`serve_until_signal` runs: :class:`VoiceServer`, or the Wyoming server."""

    engines: Engines | None

    async def shutdown(self) -> None: ...


async def serve_until_signal(server: Servable, load: Callable[[], Engines] | None = None) -> bool:
    """Run until SIGINT or SIGTERM, then shut down cleanly.

    With ``load``, the models are loaded in a background thread while the server already answers
    ``/health`` ("loading"); a load failure is raised (the server is shut down first). Returns False if
    a signal arrived before the models were ready."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if load is not None:
            loaded: asyncio.Future[Engines] = loop.create_future()

            def run() -> None:
                try:
                    engines = load()
                except BaseException as e:
                    loop.call_soon_threadsafe(_settle, loaded, None, e)
                else:
                    loop.call_soon_threadsafe(_settle, loaded, engines, None)

            # A daemon thread: a signal during loading need not wait for the load to finish.
            threading.Thread(target=run, name="model-loader", daemon=True).start()
            stopping: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
            either: list[asyncio.Future[Any]] = [loaded, stopping]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if not loaded.done():
                log.info("stopped while the models were loading")
                await server.shutdown()
                return False
            if loaded.exception() is not None:
                await server.shutdown()
            server.engines = loaded.result()
            log.info("ready")
        await stop.wait()
        log.info("shutting down")
        await server.shutdown()
        return True
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _settle(future: asyncio.Future[Engines], value: Engines | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert value is not None
        future.set_result(value)
