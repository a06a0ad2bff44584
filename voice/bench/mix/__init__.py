"""``voice bench mix``: hard clips made from recordings."""
