"""The browser client's files and the HTTP headers they are served with (pure: no sockets).

Only the files named in :data:`ASSETS` are ever read: the request path is a key of that table, never part
of a filesystem path. Every answer carries a strict Content-Security-Policy: scripts, styles and the
audio worklet come from this origin only (no inline script, no ``eval``), the page may open a websocket
to its own origin only (``connect-src 'self'`` covers ``ws:``/``wss:`` of the same host and port), and no
other site may frame it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The folder of the page's files (``voice/serve/web``).
WEB_DIR = Path(__file__).resolve().parent / "web"

#: The policy sent with every page file.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)


@dataclass(frozen=True)
class Asset:
    """One file of the page."""

    filename: str
    """Its name inside :data:`WEB_DIR`."""
    content_type: str


#: URL path → file. Nothing else is served.
ASSETS: dict[str, Asset] = {
    "/": Asset("index.html", "text/html; charset=utf-8"),
    "/index.html": Asset("index.html", "text/html; charset=utf-8"),
    "/page.css": Asset("page.css", "text/css; charset=utf-8"),
    "/page.js": Asset("page.js", "text/javascript; charset=utf-8"),
    "/mic-worklet.js": Asset("mic-worklet.js", "text/javascript; charset=utf-8"),
}


@dataclass(frozen=True)
class PageFile:
    """What to answer for a page path: status, headers and body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def security_headers() -> tuple[tuple[str, str], ...]:
    return (
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
        ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Permissions-Policy", "microphone=(self), camera=(), geolocation=()"),
    )


def page_file(path: str, web_dir: Path = WEB_DIR) -> PageFile | None:
    """The answer for ``path`` (query string already removed), or None when it is not a page file."""
    asset = ASSETS.get(path)
    if asset is None:
        return None
    try:
        body = (web_dir / asset.filename).read_bytes()
    except OSError:
        return PageFile(404, (("Content-Type", "text/plain"),), f"{asset.filename} is missing\n".encode())
    headers = (
        ("Content-Type", asset.content_type),
        ("Content-Length", str(len(body))),
        *security_headers(),
        ("Connection", "close"),
    )
    return PageFile(200, headers, body)


def own_origins(port: int) -> set[str]:
    """The Origins a page served by this server on ``port`` sends (``http(s)://`` + a loopback name), in the
    form of :func:`normalise_origin`: browsers leave the scheme's default port (80 for http, 443 for https)
    out of ``Origin``, so on those ports the port-less form is the one that matches."""
    return {
        normalise_origin(f"{scheme}://{host}:{port}")
        for scheme in ("http", "https")
        for host in ("localhost", "127.0.0.1", "[::1]")
    }


def normalise_origin(origin: str) -> str:
    """Lower case, no trailing slash, no explicit default port: ``HTTP://X:80/`` is ``http://x``."""
    o = origin.strip().lower().rstrip("/")
    for scheme, default_port in (("http://", ":80"), ("https://", ":443")):
        if o.startswith(scheme) and o.endswith(default_port):
            return o.removesuffix(default_port)
    return o
