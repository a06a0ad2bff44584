"""Who may use the websocket server: the bind check, the token and the browser Origin allowlist, and keeping
the token out of logs. Pure functions (no sockets); :mod:`voice.serve.server` applies them at the handshake and to
the first message. See ``docs/security.md``.

- Beyond loopback the server refuses to start without a token of at least :data:`MIN_TOKEN_CHARS`.
- A token is compared in constant time (:func:`hmac.compare_digest`) and never logged.
- A browser ``Origin`` must be one of the server's own origins or ``[server] allowed_origins``.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import logging
from collections.abc import Sequence
from typing import Any

from websockets.datastructures import Headers

from voice.config.config import Config, ConfigError
from voice.serve.webpage import normalise_origin, own_origins

#: Shortest token accepted when listening beyond loopback.
MIN_TOKEN_CHARS = 16


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
    configured ``extra`` ones, all in the form of :func:`voice.serve.webpage.normalise_origin` (so a page on
    port 80 or 443, whose Origin carries no port, is allowed by its own server)."""
    return own_origins(port) | {normalise_origin(o) for o in extra}


class RedactToken(logging.Filter):
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


def websockets_logger(token: str) -> logging.Logger:
    """The websockets library's logger, with the token redacted from its records."""
    logger = logging.getLogger("voice.websockets")
    for f in list(logger.filters):
        if isinstance(f, RedactToken):
            logger.removeFilter(f)
    logger.addFilter(RedactToken(token))
    return logger


def token_ok(candidate: str, token: str) -> bool:
    """The candidate is the token (compared in constant time)."""
    return hmac.compare_digest(candidate.encode(), token.encode())


def bearer_ok(headers: Headers, token: str) -> bool | None:
    """True/False when an ``Authorization`` header was sent (one, ``Bearer <token>``), None when absent."""
    values = headers.get_all("Authorization")
    if not values:
        return None
    if len(values) > 1:
        return False
    scheme, _, value = values[0].partition(" ")
    return scheme.lower() == "bearer" and token_ok(value.strip(), token)


def origin_refused(headers: Headers, allowed: set[str]) -> str | None:
    """The browser Origin that is not allowed (several count as not allowed), or None."""
    origins = headers.get_all("Origin")
    if origins and (len(origins) > 1 or normalise_origin(origins[0]) not in allowed):
        return origins[0]
    return None


def start_token(message: str | bytes) -> str | None:
    """The ``token`` of a ``start`` message (browsers cannot send an Authorization header), else None."""
    if isinstance(message, str):
        with contextlib.suppress(ValueError, RecursionError):
            obj: Any = json.loads(message)
            if isinstance(obj, dict) and obj.get("type") == "start" and isinstance(obj.get("token"), str):
                return str(obj["token"])
    return None
