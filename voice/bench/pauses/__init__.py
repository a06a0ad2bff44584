"""``voice bench pauses``: pauses inside a sentence against the wait after a finished turn."""
