"""``voice bench matrix``: ``voice bench e2e`` for every combination of models."""
