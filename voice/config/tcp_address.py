"""``tcp://HOST:PORT``, the address of a Wyoming server (the only kind the client backends connect to): parsed
here for the config checks, which reject a bad one at start-up, and for the client, which connects to it."""

from __future__ import annotations

from urllib.parse import urlsplit


def parse_tcp_uri(uri: str) -> tuple[str, int] | str:
    """``(host, port)``, or a message saying what is wrong with ``uri``."""
    example = 'e.g. "tcp://127.0.0.1:10300"'
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as e:
        return f"{uri!r} is not a tcp://HOST:PORT address ({e}; {example})"
    if parts.scheme != "tcp" or not parts.hostname or port is None:
        return f"{uri!r} is not a tcp://HOST:PORT address ({example})"
    if parts.path not in ("", "/") or parts.query:
        return f"{uri!r} has a path or query; a Wyoming address is just tcp://HOST:PORT ({example})"
    return parts.hostname, port
