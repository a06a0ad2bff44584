"""The serving shell: the websocket server, its routes and security, one :class:`~voice.serve.session.Session`
per connection, the outbox, playback, metrics, the page, and the OpenAI Realtime endpoint (``realtime/``)."""
