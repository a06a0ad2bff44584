"""``voice bench prefill``: time to first token against prompt length."""
