"""``voice bench techniques``: what each latency technique buys, one after another."""
