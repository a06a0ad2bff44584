"""The tcp://HOST:PORT address of a Wyoming server: parsed, or a message that says what is wrong with it."""

from __future__ import annotations

import pytest

from voice.config.tcp_address import parse_tcp_uri


@pytest.mark.parametrize(
    ("uri", "where"),
    [
        ("tcp://127.0.0.1:10300", ("127.0.0.1", 10300)),
        ("tcp://whisper.lan:10300/", ("whisper.lan", 10300)),
        ("tcp://[::1]:10200", ("::1", 10200)),
    ],
)
def test_an_address_gives_its_host_and_port(uri: str, where: tuple[str, int]) -> None:
    assert parse_tcp_uri(uri) == where


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("", "'' is not a tcp://HOST:PORT address"),
        ("http://127.0.0.1:10300", "is not a tcp://HOST:PORT address"),
        ("tcp://127.0.0.1", "is not a tcp://HOST:PORT address"),
        ("tcp://:10300", "is not a tcp://HOST:PORT address"),
        ("tcp://127.0.0.1:99999", "is not a tcp://HOST:PORT address (Port out of range"),
        ("tcp://127.0.0.1:10300/asr", "has a path or query"),
        ("tcp://127.0.0.1:10300?x=1", "has a path or query"),
    ],
)
def test_a_bad_address_is_a_message_naming_it(uri: str, says: str) -> None:
    problem = parse_tcp_uri(uri)
    assert isinstance(problem, str) and says in problem and 'e.g. "tcp://127.0.0.1:10300"' in problem
