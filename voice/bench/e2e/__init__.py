"""``voice bench e2e``: mouth-to-ear latency heard at the client."""
