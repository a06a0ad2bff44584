"""Reply audio in chunks across the TTS's pieces: every chunk the announced length but the clause's last."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from voice.turn.chunker import Chunker


@given(sizes=st.lists(st.integers(0, 2000), max_size=8), per_chunk=st.integers(1, 700))
def test_chunks_are_the_same_however_the_audio_was_cut_into_pieces(sizes: list[int], per_chunk: int) -> None:
    audio = np.arange(sum(sizes), dtype=np.int16)
    chunker = Chunker(per_chunk)
    out: list[bytes] = []
    at = 0
    for n in sizes:
        out += chunker.feed(audio[at : at + n])
        at += n
    out += chunker.flush()
    assert b"".join(out) == audio.tobytes()
    assert all(len(c) == 2 * per_chunk for c in out[:-1])
    assert not out or 0 < len(out[-1]) <= 2 * per_chunk


def test_a_flushed_chunker_starts_afresh() -> None:
    chunker = Chunker(4)
    assert chunker.feed(np.ones(6, np.int16)) == [np.ones(4, np.int16).tobytes()]
    assert chunker.flush() == [np.ones(2, np.int16).tobytes()]
    assert chunker.flush() == []
