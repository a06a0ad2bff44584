"""Running a server process until SIGINT or SIGTERM, loading the models meanwhile (``voice serve``,
``voice wyoming``)."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any, Protocol

from voice.runtime.runtime import ModelRuntime

log = logging.getLogger("voice.serve.server")


class Servable(Protocol):
    """What :func:`serve_until_signal` runs: :class:`VoiceServer`, or the Wyoming server."""

    runtime: ModelRuntime | None

    async def shutdown(self) -> None: ...


async def serve_until_signal(server: Servable, load: Callable[[], ModelRuntime] | None = None) -> bool:
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
            loaded: asyncio.Future[ModelRuntime] = loop.create_future()

            def run() -> None:
                try:
                    runtime = load()
                except BaseException as e:
                    loop.call_soon_threadsafe(_settle, loaded, None, e)
                else:
                    loop.call_soon_threadsafe(_settle, loaded, runtime, None)

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
            server.runtime = loaded.result()
            log.info("ready")
        await stop.wait()
        log.info("shutting down")
        await server.shutdown()
        return True
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _settle(future: asyncio.Future[ModelRuntime], value: ModelRuntime | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert value is not None
        future.set_result(value)
