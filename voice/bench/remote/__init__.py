"""``voice bench remote``: the LLM in this process vs through an OpenAI-compatible server."""
