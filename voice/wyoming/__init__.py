"""A Wyoming server (Home Assistant's protocol for speech services), and the pieces a Wyoming client needs.

``voice wyoming`` serves speech-to-text (``asr``), text-to-speech (``tts``) and a conversation agent
(``handle``) on one TCP port, so Home Assistant creates all three entities from one host:port.

* :mod:`voice.wyoming.framing`: the wire format, decoded without I/O, with size limits and clear errors;
* :mod:`voice.wyoming.pcm`: converting Wyoming audio to the STT's format, and TTS audio to Wyoming events;
* :mod:`voice.wyoming.info`: the ``info`` answer to ``describe``;
* :mod:`voice.wyoming.protocol`: one connection's request → response logic, pure (no sockets, no models);
* :mod:`voice.wyoming.conversations`: the bounded memory of ``handle`` conversations;
* :mod:`voice.wyoming.access`: where the server may listen and which clients may connect;
* :mod:`voice.wyoming.server`: the asyncio shell that runs the models through
  :class:`~voice.runtime.runtime.ModelRuntime`.

The event classes and the writing side of the framing are the ``wyoming`` package's own.
"""
