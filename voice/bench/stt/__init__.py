"""``voice bench stt``: Whisper's window and the ``[stt]`` levers, word errors beside time."""
