"""A Piper sentence in pieces: the waveform decoder run on spans of the acoustic frames (``[tts] stream_first_ms``).

A Piper voice is a VITS model in one ONNX graph. Its front (text encoder, duration predictor, flow) turns the
phonemes into acoustic frames, ``z`` (192 channels, one frame per ``hop_length`` samples: 256, ~11.6 ms at
22.05 kHz); its HiFi-GAN decoder turns the frames into the waveform, and is most of the work (joe-medium, a
2.3 s sentence: the whole graph 90 ms, the front 29 ms, the decoder 64 ms). The decoder is convolutional, so a
sample depends only on the frames near it: run on a span of frames with :data:`CONTEXT_FRAMES` frames of
context on either side, the span's audio cut out of the result is the audio one call over the sentence gives
(on joe-medium: 129 dB signal-to-error with 16 frames of context, 66 dB with 8, 26 dB with 4). So the first
piece of a sentence is out after the front and a short decode (~40 ms for that sentence, not 90), and the rest
follows piece by piece, each a step the compute gate can schedule and a barge-in can stop.

:func:`split` cuts the graph at the decoder's first node (:data:`DECODER_FIRST_NODE`, the name every Piper
export carries) with ``onnx.utils.Extractor``; :func:`pieces` is the schedule (pure).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: The decoder's first node in a Piper (VITS) export; its first input is the acoustic frames, ``z * mask``.
DECODER_FIRST_NODE = "/dec/conv_pre/Conv"
#: Frames of context decoded on each side of a piece and cut away (16: the same audio as one call; see above).
CONTEXT_FRAMES = 16
#: Each piece after the first is this many times as long as the one before (up to :data:`MAX_PIECE_FRAMES`): its
#: decode (~0.5 ms per frame here) stays far shorter than the audio already sent plays (11.6 ms per frame), and
#: few pieces waste little on context.
GROWTH = 4
#: The longest piece: ~3 s of audio.
MAX_PIECE_FRAMES = 256


class StreamUnsupportedError(ValueError):
    """The voice cannot be decoded in pieces (not a single-speaker Piper VITS export)."""


@dataclass(frozen=True)
class SplitModel:
    """The two graphs of a Piper voice: ``front`` (phoneme ids → frames) and ``decoder`` (frames → audio)."""

    front: bytes
    decoder: bytes
    frames_input: str
    """The name of the frames tensor: the front's output and the decoder's input."""


@dataclass(frozen=True)
class Piece:
    """Frames ``start``-``end`` of a sentence, decoded from ``context_start`` to ``context_end`` (the context
    on either side is decoded and cut away)."""

    start: int
    end: int
    context_start: int
    context_end: int


def split(model_path: Path) -> SplitModel:
    """The front and the decoder of the Piper voice at ``model_path``, as serialized ONNX graphs."""
    import onnx
    from onnx.utils import Extractor

    model = onnx.load(str(model_path))
    inputs = [i.name for i in model.graph.input]
    frames = frames_input(model_path.name, [(n.name, list(n.input)) for n in model.graph.node], inputs)
    extractor = Extractor(model)
    outputs = [o.name for o in model.graph.output][:1]
    front = extractor.extract_model(inputs, [frames])
    decoder = extractor.extract_model([frames], outputs)
    return SplitModel(front.SerializeToString(), decoder.SerializeToString(), frames)


def frames_input(model_name: str, nodes: list[tuple[str, list[str]]], graph_inputs: list[str]) -> str:
    """The tensor that feeds the decoder, from the graph's ``(node name, node inputs)`` and its inputs; raises
    :class:`StreamUnsupportedError` (naming the model and the key to turn off) when the graph cannot be cut."""
    first = [node_inputs for name, node_inputs in nodes if name == DECODER_FIRST_NODE]
    if not first or not first[0]:
        raise StreamUnsupportedError(
            f"{model_name} has no node {DECODER_FIRST_NODE!r}, so it is not a Piper VITS export this server can "
            "decode in pieces; set [tts] stream_first_ms = 0"
        )
    if "sid" in graph_inputs:
        raise StreamUnsupportedError(
            f"{model_name} is a multi-speaker voice: its decoder also takes the speaker, which decoding in pieces "
            "does not pass; set [tts] stream_first_ms = 0"
        )
    return first[0][0]


def pieces(
    n_frames: int, first_frames: int, context_frames: int = CONTEXT_FRAMES, max_frames: int = MAX_PIECE_FRAMES
) -> list[Piece]:
    """How a sentence of ``n_frames`` frames is decoded: a first piece of ``first_frames``, then pieces
    :data:`GROWTH` times as long as the one before, up to ``max_frames`` (the first audio comes soon; later
    pieces, whose audio is not needed yet, waste less on context). What would be left after a piece, if shorter
    than half of it, joins that piece."""
    if n_frames <= 0:
        return []
    size = max(1, first_frames)
    bounds: list[tuple[int, int]] = []
    start = 0
    while start < n_frames:
        end = min(n_frames, start + size)
        if n_frames - end < size // 2:
            end = n_frames
        bounds.append((start, end))
        start = end
        size = min(size * GROWTH, max(max_frames, first_frames))
    return [Piece(a, b, max(0, a - context_frames), min(n_frames, b + context_frames)) for a, b in bounds]
