"""``voice bench load``: how many people can talk to one server at once."""
