"""The websocket server: a session, a reader task and a writer task per connection, and shutdown.

What is answered over plain HTTP and checked at the handshake (page, health, metrics, Origin, token, path) is
:mod:`voice.serve.routes`; the rules themselves (bind, token, Origin, log redaction) are :mod:`voice.serve.security`.
Browsers that cannot send an Authorization header put the token in the ``start`` message, checked here (else
close 1008). Running until a signal is :mod:`voice.serve.lifecycle`. See ``docs/security.md`` for every limit and
close code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voice.clock import Clock, MonotonicClock
from voice.config.config import Config
from voice.runtime.runtime import ModelRuntime
from voice.serve import routes
from voice.serve.metrics import Metrics
from voice.serve.realtime import REALTIME_PATH
from voice.serve.realtime.front import RealtimeFront
from voice.serve.security import (
    bearer_ok,
    check_bind,
    start_token,
    token_ok,
    websockets_logger,
)
from voice.serve.session import Session
from voice.turn.budget import JsonlSink
from voice.wire import events
from voice.wire.protocol import (
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
from voice.wire.report import TurnReport

log = logging.getLogger("voice.serve.server")

#: Turn reports kept in memory (``VoiceServer.reports``) for tools and tests; older ones are dropped.
REPORTS_KEPT = 1000


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
    opened_s: float = field(default=0.0)
    """When it opened, on the event loop's clock (seconds)."""


class VoiceServer:
    """Owns the runtime, the sessions and the listening socket."""

    def __init__(self, config: Config, runtime: ModelRuntime | None, clock: Clock | None = None) -> None:
        self.config = config
        self.runtime = runtime
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
    def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """The handshake: pages, ``/health``, ``/metrics``, and the checks before a websocket opens."""
        return routes.process_request(self, connection, request)

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
        conn = await self._open(ws)
        if conn is None:
            return
        session, session_id = conn.session, conn.session.id
        writer = asyncio.create_task(self._write_loop(ws, session), name=f"{session_id}-writer")
        writer.add_done_callback(lambda _: session.outbox.close())
        if conn.front is not None:
            await conn.front.start()
        reader = asyncio.create_task(self._read_loop(conn), name=f"{session_id}-reader")
        conn.reader = reader
        code: int | None = CLOSE_NORMAL
        reason = ""
        try:
            await asyncio.wait([reader, writer], return_when=asyncio.FIRST_COMPLETED)
            code, reason = await self._ending(reader, session_id)
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

    async def _open(self, ws: ServerConnection) -> _Conn | None:
        """A new connection's session (native, or driven by the Realtime adapter), registered; None when it
        was refused (stopping, models loading, too many sessions) and closed."""
        if self.stopping:
            await self._refuse(ws, CLOSE_GOING_AWAY, "server shutting down", SHUTTING_DOWN)
            return None
        if self.runtime is None:
            await self._refuse(ws, CLOSE_TRY_AGAIN_LATER, "models are still loading; try again later", "loading")
            return None
        if len(self.sessions) >= self.config.server.max_sessions:
            await self._refuse(ws, CLOSE_TRY_AGAIN_LATER, "too many sessions; try again later", "too_many_sessions")
            return None
        session_id = uuid.uuid4().hex[:8]
        path = ws.request.path if ws.request is not None else "/"
        front = None
        if path.split("?", 1)[0] == REALTIME_PATH:
            front = RealtimeFront(
                session_id, self.runtime, self.config, self.clock, path=path,
                on_report=self._on_report, on_error=self._on_turn_error, on_client_error=self.metrics.error,
            )
            session = front.session
        else:
            session = Session(
                session_id,
                self.runtime,
                self.config,
                self.clock,
                on_report=self._on_report,
                on_error=self._on_turn_error,
            )
        authenticated = not self.config.server.token or (
            ws.request is not None and bearer_ok(ws.request.headers, self.config.server.token) is True
        )
        conn = _Conn(session, ws, authenticated, front, opened_s=asyncio.get_running_loop().time())
        self.sessions[session_id] = conn
        self._sessions_changed.set()
        return conn

    async def _ending(self, reader: asyncio.Task[tuple[int, str]], session_id: str) -> tuple[int | None, str]:
        """How to close once the reader or the writer has ended: the close code and reason to send (None: the
        client is gone, or was already closed)."""
        if not reader.done():
            # The writer ended first: the client left, or stopped reading and was closed for it.
            reader.cancel()
            await asyncio.wait([reader])
            return None, ""
        if reader.cancelled():
            return CLOSE_GOING_AWAY, "server shutting down"
        if (exc := reader.exception()) is not None:
            if isinstance(exc, ConnectionClosed):
                return None, ""  # the client left (or the library closed it: 1009, 1002, 1007, 1011)
            log.error("[%s] reader failed", session_id, exc_info=exc)
            self.metrics.error("internal")
            return CLOSE_INTERNAL, "internal error"
        return reader.result()

    async def _read_loop(self, conn: _Conn) -> tuple[int, str]:
        """Read messages until the connection must close; returns the close code and reason.

        Raises ConnectionClosed when the client went away. Cancelled by :meth:`shutdown`."""
        cfg = self.config.server
        ws, session = conn.ws, conn.session
        loop = asyncio.get_running_loop()
        session_deadline_s = conn.opened_s + cfg.session_max_s
        start_deadline_s = conn.opened_s + cfg.start_timeout_s
        while True:
            now = loop.time()
            deadlines = {"idle timeout": now + cfg.idle_timeout_s, "session time limit": session_deadline_s}
            if session.started is None or not conn.authenticated:
                deadlines["no start message"] = start_deadline_s
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
        token = start_token(message)
        if token is not None and token_ok(token, self.config.server.token):
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
            logger=websockets_logger(cfg.token),
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
        reported), send their reports, close every client with 1001, then close the runtime."""
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
        if self.runtime is not None:
            await asyncio.to_thread(self.runtime.close)
