"""The native protocol's types: client messages (:mod:`~voice.wire.protocol`), server events
(:mod:`~voice.wire.events`) and the turn report they carry (:mod:`~voice.wire.report`)."""
