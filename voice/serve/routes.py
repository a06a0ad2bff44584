"""The server's plain-HTTP answers and the checks made at a websocket's handshake, before it opens.

``GET /`` and the page's files (the browser client, :mod:`voice.serve.webpage`), ``GET /health`` (200 once every
model is loaded and warmed; 503 while loading or stopping), ``GET /metrics`` (Prometheus text; behind the
token when one is set). A websocket is refused here with HTTP 403 (an Origin not on the allowlist), 401 (a
wrong token) or 404 (a path other than ``/`` and ``/v1/realtime``).
"""

from __future__ import annotations

import http
import json
import logging
from collections.abc import Mapping
from typing import Protocol

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from voice.config.config import Config
from voice.runtime.runtime import ModelRuntime
from voice.serve.metrics import Metrics
from voice.serve.realtime import REALTIME_PATH
from voice.serve.security import allowed_origins, bearer_ok, origin_refused
from voice.serve.webpage import page_file
from voice.wire.protocol import UNAUTHORIZED

log = logging.getLogger("voice.serve.server")


class ServerState(Protocol):
    """What the answers need to know of the server (:class:`voice.serve.server.VoiceServer`)."""

    config: Config
    runtime: ModelRuntime | None
    metrics: Metrics
    stopping: bool
    port: int

    @property
    def sessions(self) -> Mapping[str, object]: ...


def process_request(state: ServerState, connection: ServerConnection, request: Request) -> Response | None:
    """The HTTP answer to a request, or None to let a websocket handshake go on."""
    path = request.path.split("?", 1)[0]
    token = state.config.server.token
    websocket = any(u.lower() == "websocket" for u in request.headers.get_all("Upgrade"))
    if not websocket and (page := _page(path)) is not None:
        return page
    if path == "/health":
        return connection.respond(*health(state))
    if path == "/metrics":
        if token and bearer_ok(request.headers, token) is not True:
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "send Authorization: Bearer <token>\n")
        return connection.respond(http.HTTPStatus.OK, _metrics(state))
    if websocket and (routed := _route(state, connection, request)):
        return routed
    refused = origin_refused(request.headers, allowed_origins(state.port, state.config.server.allowed_origins))
    if refused is not None:
        state.metrics.error("forbidden_origin")
        log.warning("refused a websocket from Origin %.100r (not in the allowlist)", refused)
        return connection.respond(
            http.HTTPStatus.FORBIDDEN,
            "this Origin is not allowed; add it to [server] allowed_origins\n",
        )
    if token and bearer_ok(request.headers, token) is False:
        state.metrics.error(UNAUTHORIZED)
        log.warning("refused a websocket with a wrong token")
        return connection.respond(http.HTTPStatus.UNAUTHORIZED, "wrong token\n")
    return None


def health(state: ServerState) -> tuple[http.HTTPStatus, str]:
    """``/health``: ready (200), or loading / stopping (503), with the number of sessions."""
    if state.stopping:
        status = "stopping"
    elif state.runtime is None:
        status = "loading"
    else:
        status = "ready"
    code = http.HTTPStatus.OK if status == "ready" else http.HTTPStatus.SERVICE_UNAVAILABLE
    return code, json.dumps({"status": status, "sessions": len(state.sessions)}) + "\n"


def _metrics(state: ServerState) -> str:
    metrics, runtime = state.metrics, state.runtime
    metrics.queue_depth = runtime.queue_depth if runtime else 0
    metrics.kv = runtime.kv_stats() if runtime else None
    metrics.sessions_active = len(state.sessions)
    metrics.ready = runtime is not None and not state.stopping
    return metrics.render()


def _page(path: str) -> Response | None:
    """A file of the browser client (``voice/serve/webpage.py``: a fixed allow-list, a strict CSP)."""
    answer = page_file(path)
    if answer is None:
        return None
    reason = http.HTTPStatus(answer.status).phrase
    return Response(answer.status, reason, Headers(list(answer.headers)), answer.body)


def _route(state: ServerState, connection: ServerConnection, request: Request) -> Response | None:
    """Websocket paths: ``/`` is the native protocol, ``/v1/realtime`` the OpenAI Realtime-compatible one
    (its token only in the Authorization header, and a larger message limit for whole-clip appends);
    anything else is 404."""
    path = request.path.split("?", 1)[0]
    if path == REALTIME_PATH:
        if state.config.server.token and bearer_ok(request.headers, state.config.server.token) is not True:
            state.metrics.error(UNAUTHORIZED)
            log.warning("refused a realtime websocket without the right token")
            return connection.respond(http.HTTPStatus.UNAUTHORIZED, "send Authorization: Bearer <token>\n")
        connection.protocol.max_message_size = state.config.server.realtime_max_message_bytes
        return None
    if path != "/":
        return connection.respond(
            http.HTTPStatus.NOT_FOUND, f"no websocket at {path[:100]}; use / or {REALTIME_PATH}\n"
        )
    return None
