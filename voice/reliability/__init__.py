"""Reliability tooling: tagged fakes, a scripted websocket client and the ``voice soak`` runner."""
