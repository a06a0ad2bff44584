"""An OpenAI Realtime-compatible endpoint (``/v1/realtime``, GA event names) over the same sessions and models.

* :mod:`voice.serve.realtime.events` — client events: pure decoding, never raises on network input.
* :mod:`voice.serve.realtime.settings` — the session settings a client may change (``session.update``).
* :mod:`voice.serve.realtime.translate` — a pure state machine from our session's events to Realtime server events.
* :mod:`voice.serve.realtime.front` — the thin adapter the server runs per connection: client events drive a
  :class:`~voice.serve.session.Session`, whose output is translated on its way into the outbox.

See ``docs/protocol.md`` ("OpenAI Realtime compatibility") for what is supported.
"""

from __future__ import annotations

#: The websocket path of the compatible endpoint.
REALTIME_PATH = "/v1/realtime"
#: Sample rate of audio both ways (``audio/pcm`` in the Realtime API is always 24 kHz).
REALTIME_RATE_HZ = 24_000
