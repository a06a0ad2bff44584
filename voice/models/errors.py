"""The model manager's errors; ``str()`` of each is a message meant for the user."""

from __future__ import annotations


class ModelError(Exception):
    """A model problem; ``str()`` is a message meant for the user."""


class ModelMissingError(ModelError):
    """A model file is missing or does not match the catalogue; the message says how to fix it."""


class ModelPathError(ModelError):
    """A path points outside the models folder."""
