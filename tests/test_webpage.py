"""The browser page's files and headers, and the Origin check, without sockets (issue 11)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from voice.serve.security import allowed_origins
from voice.serve.webpage import ASSETS, CONTENT_SECURITY_POLICY, WEB_DIR, normalise_origin, page_file


def _csp() -> dict[str, str]:
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] for d in (p.strip() for p in CONTENT_SECURITY_POLICY.split(";"))}


def test_the_policy_allows_only_this_origin_and_no_inline_script() -> None:
    csp = _csp()
    assert csp["default-src"] == "'none'"
    assert csp["script-src"] == "'self'" and csp["connect-src"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["frame-ancestors"] == "'none'" and csp["base-uri"] == "'none'"
    assert "unsafe" not in CONTENT_SECURITY_POLICY


@pytest.mark.parametrize("path", sorted(ASSETS))
def test_every_page_file_is_served_with_the_policy(path: str) -> None:
    answer = page_file(path)
    assert answer is not None and answer.status == 200, path
    headers = dict(answer.headers)
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Content-Type"] == ASSETS[path].content_type
    assert int(headers["Content-Length"]) == len(answer.body) > 0


@pytest.mark.parametrize(
    "path",
    ["/../config.toml", "/web/index.html", "/server.py", "//etc/passwd", "/page.js/", "/%2e%2e/server.py",
     "/index.html/..", "/PAGE.JS", ""],
)
def test_no_path_outside_the_allow_list_reaches_the_filesystem(path: str) -> None:
    assert page_file(path) is None


def test_a_missing_file_is_a_404_naming_it(tmp_path: Path) -> None:
    answer = page_file("/page.css", tmp_path)
    assert answer is not None and answer.status == 404 and b"page.css" in answer.body


def test_the_page_has_no_inline_script_no_markup_sinks_and_no_address_from_the_url() -> None:
    html = (WEB_DIR / "index.html").read_text()
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag, tag  # an inline script would be refused by the CSP anyway
    assert "<style" not in html and " style=" not in html
    assert re.search(r"\son[a-z]+\s*=", html) is None  # no inline event handlers
    scripts = "".join(p.read_text() for p in WEB_DIR.glob("*.js"))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in scripts, sink
    for source in ("location.search", "URLSearchParams", "location.hash"):
        assert source not in scripts, source


@pytest.mark.parametrize(
    ("port", "origin", "ok"),
    [
        (8765, "http://127.0.0.1:8765", True),
        (8765, "http://LOCALHOST:8765/", True),
        (8765, "https://[::1]:8765", True),
        (8765, "http://127.0.0.1", False),  # another server on port 80
        (8765, "http://127.0.0.1:8766", False),
        (80, "http://127.0.0.1", True),  # browsers leave the default port out of Origin
        (80, "http://localhost:80", True),
        (80, "https://127.0.0.1", False),  # https's default port is 443
        (443, "https://localhost", True),
        (443, "http://localhost", False),
        (8765, "null", False),
        (8765, "http://evil.example:8765", False),
    ],
)
def test_own_origins_include_the_port_less_form_on_80_and_443(port: int, origin: str, ok: bool) -> None:
    assert (normalise_origin(origin) in allowed_origins(port, [])) is ok


def test_configured_origins_are_compared_in_the_same_form() -> None:
    allowed = allowed_origins(8765, ["https://Voice.Example.org:443/", "http://lan.example:8080"])
    assert normalise_origin("https://voice.example.org") in allowed
    assert normalise_origin("http://lan.example:8080") in allowed
    assert normalise_origin("http://lan.example") not in allowed
