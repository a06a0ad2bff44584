"""The listener dates the user's speech end by when its audio arrived, not by when the VAD got to it.

Client frames (20 ms here, as the bench and the browser send) do not line up with the VAD's 32 ms frames,
and a 24 or 48 kHz stream goes through a resampler that holds a few ms back. The VAD frame that ends a turn
is complete only when a later client frame arrives; the speech ended before that frame arrived by the audio
after it. Fake VAD, fake clock, no socket.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config, silence, tone
from voice.audio import float_to_pcm16
from voice.clock import FakeClock
from voice.turn.endpoint import SpeechEnded
from voice.turn.listener import Listener, heard_ns, silence_after_speech_ms

CLIENT_FRAME_MS = 20
LEAD_S, TONE_S = 0.3, 0.61  # the tone ends mid-way through a client frame and a VAD frame


async def speech_end_and_endpoint_ns(
    fake_runtime: RuntimeFactory, rate_hz: int, frame_ms: int
) -> tuple[int, int, int]:
    """(speech end the listener gives, clock time of the endpoint event, the clip's true speech end), all ns."""
    clock = FakeClock()
    listener = Listener(fake_runtime(clock=clock), make_config(vad={"silence_ms": 320, "min_speech_ms": 64}), clock)
    listener.start(rate_hz)
    start_ns = clock.now_ns()
    audio = np.concatenate([silence(LEAD_S, rate_hz), tone(TONE_S, rate_hz), silence(0.6, rate_hz)])
    n = rate_hz * frame_ms // 1000
    for i in range(0, len(audio), n):
        clock.advance_ms(frame_ms)  # a frame is sent when its last sample is due (a live microphone)
        frames = listener.accept(float_to_pcm16(audio[i : i + n]))
        assert isinstance(frames, list)
        for ev in await listener.hear(frames):
            if isinstance(ev, SpeechEnded):
                now_ns = clock.now_ns()
                return heard_ns(ev, now_ns) - round(silence_after_speech_ms(ev) * 1e6), now_ns, start_ns
    raise AssertionError("the turn never ended")


@pytest.mark.parametrize("rate_hz", [16_000, 24_000, 48_000])
async def test_the_speech_end_is_where_the_audio_says_whatever_the_frames(
    fake_runtime: RuntimeFactory, rate_hz: int
) -> None:
    speech_end_ns, endpoint_ns, start_ns = await speech_end_and_endpoint_ns(fake_runtime, rate_hz, CLIENT_FRAME_MS)
    true_end_ns = start_ns + round((LEAD_S + TONE_S) * 1e9)
    # Found on 5 ms hops; the resampled streams shift the audio by a fraction of a ms.
    assert abs(speech_end_ns - true_end_ns) <= 6_000_000
    # The endpoint came with a client frame: at a multiple of 20 ms after the start, 320 ms of VAD silence
    # and at most one client frame (the one that completed the VAD frame) plus the resampler's delay later.
    assert (endpoint_ns - start_ns) % (CLIENT_FRAME_MS * 1_000_000) == 0
    assert 320e6 <= endpoint_ns - true_end_ns <= (320 + 32 + CLIENT_FRAME_MS + 8) * 1e6


async def test_a_late_event_does_not_move_the_speech_end(fake_runtime: RuntimeFactory) -> None:
    """The same audio in 100 ms frames: the VAD frame that ends the turn comes with a frame up to 100 ms
    after its last sample, and the speech end stays where it was."""
    small, _, start_small = await speech_end_and_endpoint_ns(fake_runtime, 16_000, 20)
    big, endpoint_big, start_big = await speech_end_and_endpoint_ns(fake_runtime, 16_000, 100)
    assert abs((small - start_small) - (big - start_big)) <= 1_000_000
    assert endpoint_big - big > 320e6
