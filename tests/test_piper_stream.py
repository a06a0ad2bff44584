"""Piper in pieces: the decode schedule, and which graphs can be cut (pure), and the config key's range."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import make_config
from voice.backends.piper_stream import StreamUnsupportedError, frames_input, pieces
from voice.config.config import ConfigError


@given(n=st.integers(0, 3000), first=st.integers(1, 300), context=st.integers(0, 32))
def test_pieces_cover_every_frame_once_with_their_context(n: int, first: int, context: int) -> None:
    ps = pieces(n, first, context)
    assert [f for p in ps for f in range(p.start, p.end)] == list(range(n))
    for p in ps:
        assert p.context_start == max(0, p.start - context) and p.context_end == min(n, p.end + context)


@pytest.mark.parametrize(
    ("n", "first", "sizes"),
    [
        (205, 22, [22, 88, 95]),  # a 2.4 s sentence: ~0.26 s first, then longer pieces
        (30, 22, [30]),  # 8 frames left after the first piece (under half of it): one piece
        (34, 22, [22, 12]),
        (2000, 22, [22, 88, 256, 256, 256, 256, 256, 256, 354]),  # up to 256 frames; the last 98 join the piece before
        (10, 22, [10]),
    ],
)
def test_the_first_piece_is_short_and_later_ones_grow(n: int, first: int, sizes: list[int]) -> None:
    assert [p.end - p.start for p in pieces(n, first)] == sizes


PIPER_NODES = [("/enc_p/emb/Gather", ["emb", "input"]), ("/dec/conv_pre/Conv", ["/Mul_7_output_0", "w", "b"])]


def test_the_decoder_is_fed_by_the_first_input_of_its_first_node() -> None:
    assert frames_input("v.onnx", PIPER_NODES, ["input", "input_lengths", "scales"]) == "/Mul_7_output_0"


@pytest.mark.parametrize(
    ("nodes", "inputs", "why"),
    [
        ([("/relu", ["input"])], ["input"], "has no node '/dec/conv_pre/Conv'"),
        (PIPER_NODES, ["input", "input_lengths", "scales", "sid"], "is a multi-speaker voice"),
    ],
)
def test_a_graph_that_cannot_be_cut_is_refused_with_the_key_to_turn_off(
    nodes: list[tuple[str, list[str]]], inputs: list[str], why: str
) -> None:
    with pytest.raises(StreamUnsupportedError, match=rf"v\.onnx {why}.*stream_first_ms = 0"):
        frames_input("v.onnx", nodes, inputs)


@pytest.mark.parametrize("ms", [-1.0, 5.0, 6000.0])
def test_stream_first_ms_out_of_range_is_refused(ms: float) -> None:
    with pytest.raises(ConfigError, match="stream_first_ms"):
        make_config(tts={"stream_first_ms": ms})


def test_stream_first_ms_zero_and_a_length_are_accepted() -> None:
    assert make_config(tts={"stream_first_ms": 0}).tts.stream_first_ms == 0
    assert make_config(tts={"stream_first_ms": 250}).tts.stream_first_ms == 250
