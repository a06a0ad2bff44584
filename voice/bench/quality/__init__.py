"""``voice bench quality``: is the reply right, beside how fast it came."""
