import numpy as np

from voice.config import VadConfig
from voice.endpoint import Endpointer, SpeechEnded, SpeechStarted

FRAME = 512  # 32 ms at 16 kHz


def run(probs: list[float], config: VadConfig) -> list[tuple[int, object]]:
    ep = Endpointer(config)
    out: list[tuple[int, object]] = []
    for i, p in enumerate(probs):
        frame = np.full(FRAME, float(i), np.float32)  # frame index encoded in the samples
        out.extend((i, ev) for ev in ep.feed(frame, p))
    return out


def test_speech_start_end_and_pre_roll() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=64, min_speech_ms=100)
    probs = [0.0] * 10 + [0.9] * 10 + [0.1] * 20
    events = run(probs, cfg)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted", "SpeechEnded"]
    (i0, start), (i1, end) = events
    assert i0 == 10 and isinstance(start, SpeechStarted) and start.audio_offset_ms == 10 * 32
    assert isinstance(end, SpeechEnded)
    # 320 ms of silence = 10 frames of 32 ms: the endpoint fires on the 10th silent frame.
    assert i1 == 29
    assert end.trailing_silence_ms == 320.0
    assert not end.forced
    # pre-roll: 64 ms (frames 8, 9) + the frame that triggered (10), then everything to the endpoint.
    frames = end.audio.reshape(-1, FRAME)[:, 0].astype(int).tolist()
    assert frames[:3] == [8, 9, 10] and frames[-1] == 29
    assert end.voiced_ms == 10 * 32


def test_short_blip_is_ignored() -> None:
    cfg = VadConfig(silence_ms=96, min_speech_ms=200)
    events = run([0.9, 0.9] + [0.0] * 5, cfg)
    assert [type(e).__name__ for _, e in events] == ["SpeechStarted"]


def test_hysteresis_between_thresholds_is_not_silence() -> None:
    cfg = VadConfig(threshold=0.5, neg_threshold=0.3, silence_ms=96, min_speech_ms=0)
    events = run([0.9] + [0.4] * 10 + [0.1] * 3, cfg)
    assert isinstance(events[-1][1], SpeechEnded)
    assert events[-1][0] == 13


def test_utterance_cap_forces_endpoint_and_resets() -> None:
    cfg = VadConfig(max_utterance_s=0.32, silence_ms=1000, min_speech_ms=0)
    events = run([0.9] * 25, cfg)
    ends = [e for _, e in events if isinstance(e, SpeechEnded)]
    assert len(ends) == 2 and all(e.forced and e.trailing_silence_ms == 0 for e in ends)
    assert all(len(e.audio) == 10 * FRAME for e in ends)


def test_force_end() -> None:
    ep = Endpointer(VadConfig(min_speech_ms=1000))
    assert ep.force_end() == []
    ep.feed(np.ones(FRAME, np.float32), 0.9)
    (ev,) = ep.force_end()
    assert isinstance(ev, SpeechEnded) and ev.forced and len(ev.audio) == FRAME
    assert not ep.in_speech
