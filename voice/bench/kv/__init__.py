"""``voice bench kv``: long conversations and many sessions at the KV memory bound."""
