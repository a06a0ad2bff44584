"""``voice bench speculative``: greedy decoding with and without prompt-lookup speculative decoding."""
