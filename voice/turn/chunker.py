"""Reply audio cut into the chunks the client is sent (``[tts] chunk_ms``), across the TTS's pieces. Pure.

The TTS hands a clause over in pieces of any length (a Piper sentence, or with ``[tts] stream_first_ms`` a piece
of one); the client is told one chunk length (``audio_start``), so every chunk has it but a clause's last: what is
left of a piece waits for the next piece, and :meth:`Chunker.flush` sends the rest when the clause ends.
"""

from __future__ import annotations

import numpy as np


class Chunker:
    """Chunks of ``samples_per_chunk`` int16 samples from pieces fed one after another."""

    def __init__(self, samples_per_chunk: int) -> None:
        self.samples_per_chunk = max(1, samples_per_chunk)
        self._left = np.zeros(0, np.int16)

    def feed(self, pcm: np.ndarray) -> list[bytes]:
        """The whole chunks ``pcm`` completes (after what was left of the pieces before)."""
        pcm = np.concatenate([self._left, pcm]) if len(self._left) else pcm
        n = self.samples_per_chunk
        whole = len(pcm) - len(pcm) % n
        self._left = pcm[whole:]
        return [pcm[i : i + n].tobytes() for i in range(0, whole, n)]

    def flush(self) -> list[bytes]:
        """What is left, as one short chunk (none if nothing is)."""
        left, self._left = self._left, np.zeros(0, np.int16)
        return [left.tobytes()] if len(left) else []
