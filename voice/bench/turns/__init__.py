"""``voice bench turns``: the end-of-turn settings a user chooses from, mouth-to-ear against pauses cut short."""
