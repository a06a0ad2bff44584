"""A blocking Wyoming client for one request: the transport of the Wyoming STT and TTS backends.

Runs in a model worker thread (the :class:`~voice.runtime.model_api.Stt`/:class:`~voice.runtime.model_api.Tts`
methods are blocking). Events are written with the ``wyoming`` package and read with our bounded
:class:`~voice.wyoming.framing.FrameDecoder`. Every failure — the server not up, the connection dropped
mid-request, bytes that are not Wyoming, an ``error`` event, no answer within ``timeout_s`` — raises
:class:`WyomingClientError` naming the server and what happened; the turn reports it and the session goes on.
:meth:`WyomingRequest.abort` (from another thread) ends a request at once.
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
from collections import deque

from wyoming.event import Event, write_event

from voice.config.tcp_address import parse_tcp_uri
from voice.wyoming.framing import FrameDecoder, FramingError

#: Largest event accepted from a server (a TTS server may send a whole sentence as one chunk).
MAX_EVENT_BYTES = 16 << 20


class WyomingClientError(RuntimeError):
    """A request to a Wyoming server failed; the message names the server and the reason."""


class WyomingRequest:
    """One connection to ``uri`` for one request. Use as a context manager; not thread-safe except :meth:`abort`."""

    def __init__(self, uri: str, timeout_s: float) -> None:
        where = parse_tcp_uri(uri)
        if isinstance(where, str):
            raise WyomingClientError(where)
        self.uri = uri
        self.address = where
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._decoder = FrameDecoder(MAX_EVENT_BYTES)
        self._ready: deque[Event] = deque()
        self._aborted = threading.Event()

    def __enter__(self) -> WyomingRequest:
        try:
            self._sock = socket.create_connection(self.address, timeout=self.timeout_s)
        except OSError as e:
            raise WyomingClientError(
                f"cannot connect to the Wyoming server at {self.uri}: {e.strerror or e}; is it running?"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def abort(self) -> None:
        """End the request now (from any thread): a blocked send or read raises at once."""
        self._aborted.set()
        sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _lost(self, what: str) -> WyomingClientError:
        if self._aborted.is_set():
            return WyomingClientError(f"the request to the Wyoming server at {self.uri} was cancelled")
        return WyomingClientError(f"the Wyoming server at {self.uri} {what}")

    def send(self, *events: Event) -> None:
        assert self._sock is not None, "use WyomingRequest as a context manager"
        buf = io.BytesIO()
        for event in events:
            write_event(event, buf)
        try:
            self._sock.sendall(buf.getvalue())
        except TimeoutError:
            raise self._lost(f"did not take our request within {self.timeout_s:g} s") from None
        except OSError as e:
            raise self._lost(f"closed the connection mid-request ({e.strerror or e})") from None

    def read(self) -> Event:
        """The next event; an ``error`` event from the server raises :class:`WyomingClientError`."""
        assert self._sock is not None, "use WyomingRequest as a context manager"
        while not self._ready:
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                raise self._lost(f"sent nothing for {self.timeout_s:g} s") from None
            except OSError as e:
                raise self._lost(f"closed the connection mid-request ({e.strerror or e})") from None
            if not data:
                raise self._lost("closed the connection mid-request")
            for item in self._decoder.receive(data):
                if isinstance(item, FramingError):
                    raise self._lost(f"sent something that is not a Wyoming event: {item.message}")
                self._ready.append(item)
        event = self._ready.popleft()
        if event.type == "error":
            text, code = event.data.get("text"), event.data.get("code")
            raise WyomingClientError(f"the Wyoming server at {self.uri} answered with an error: {text} ({code})")
        return event
