import dataclasses

import numpy as np
import pytest

from voice.config.config import TurnConfig, VadConfig
from voice.turn.endpoint import Endpointer, SpeechEnded, SpeechPaused, SpeechStarted

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


def run_turn(
    probs: list[float], config: VadConfig, turn: TurnConfig, scores: list[float] | None = None
) -> list[tuple[int, object]]:
    """Like :func:`run`, with ``[turn]`` settings and an end-of-turn scorer that returns ``scores`` in order."""
    asked: list[np.ndarray] = []
    queue = list(scores or [])

    def score(audio: np.ndarray) -> float:
        asked.append(audio)
        return queue.pop(0)

    ep = Endpointer(config, turn=turn, turn_score=score if scores is not None else None)
    out: list[tuple[int, object]] = []
    for i, p in enumerate(probs):
        out.extend((i, ev) for ev in ep.feed(np.full(FRAME, float(i), np.float32), p))
        if ep.score_pending:  # as the session does: right after the pause, before the next frame
            out.extend((i, ev) for ev in ep.score_pause())
    if scores is not None:
        assert not queue, "the scorer was asked fewer times than expected"
    return out


def names(events: list[tuple[int, object]]) -> list[str]:
    return [type(e).__name__ for _, e in events]


def test_pause_comes_before_the_end_with_the_audio_so_far() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    events = run_turn([0.9] * 5 + [0.1] * 12, cfg, TurnConfig(speculate_after_ms=96))
    assert names(events) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    (_, _), (i_pause, pause), (i_end, end) = events
    assert isinstance(pause, SpeechPaused) and isinstance(end, SpeechEnded)
    assert i_pause == 7 and pause.trailing_silence_ms == 96.0  # the third silent frame of 32 ms
    assert pause.end_after_ms == 320.0 and pause.voiced_ms == 5 * 32
    assert i_end == 14
    # The paused audio is the utterance up to the pause, a prefix of what the endpoint delivers.
    assert np.array_equal(pause.audio, end.audio[: len(pause.audio)]) and len(pause.audio) == 8 * FRAME


def test_speech_after_a_pause_resumes_once_and_a_new_pause_follows() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    probs = [0.9] * 4 + [0.1] * 4 + [0.9] * 2 + [0.1] * 11
    events = run_turn(probs, cfg, TurnConfig(speculate_after_ms=96))
    assert names(events) == ["SpeechStarted", "SpeechPaused", "SpeechResumed", "SpeechPaused", "SpeechEnded"]
    assert [i for i, _ in events] == [0, 6, 8, 12, 19]
    second = events[3][1]
    assert isinstance(second, SpeechPaused) and len(second.audio) == 13 * FRAME


def test_no_pause_when_speculation_is_off_or_speech_too_short() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    off = run_turn([0.9] * 5 + [0.1] * 12, cfg, TurnConfig(speculate_after_ms=0))
    assert names(off) == ["SpeechStarted", "SpeechEnded"]
    short = run_turn([0.9] + [0.1] * 12, VadConfig(silence_ms=320, min_speech_ms=100), TurnConfig())
    assert names(short) == ["SpeechStarted"]  # a blip: neither paused nor ended


def test_end_of_turn_score_chooses_the_silence_window() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    turn = TurnConfig(speculate_after_ms=96, complete_silence_ms=160, incomplete_silence_ms=640)
    complete = run_turn([0.9] * 5 + [0.1] * 30, cfg, turn, scores=[0.9])
    assert names(complete) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    pause, end = complete[1][1], complete[2][1]
    # The pause is reported before the model runs: until its score, the turn may not end (incomplete window).
    assert isinstance(pause, SpeechPaused) and pause.end_after_ms == 640.0
    assert isinstance(end, SpeechEnded) and end.trailing_silence_ms == 160.0 and end.turn_score == 0.9
    incomplete = run_turn([0.9] * 5 + [0.1] * 30, cfg, turn, scores=[0.2])
    end = incomplete[-1][1]
    assert isinstance(end, SpeechEnded) and end.trailing_silence_ms == 640.0 and end.turn_score == 0.2
    # Speech resumes: the next pause asks again, and the silence window starts from [vad] silence_ms.
    again = run_turn([0.9] * 5 + [0.1] * 4 + [0.9] * 3 + [0.1] * 30, cfg, turn, scores=[0.1, 0.8])
    end = again[-1][1]
    assert isinstance(end, SpeechEnded) and end.trailing_silence_ms == 160.0 and end.turn_score == 0.8


def test_the_scorer_is_asked_at_the_complete_window_when_speculation_is_later() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    turn = TurnConfig(speculate_after_ms=0, complete_silence_ms=128, incomplete_silence_ms=640)
    events = run_turn([0.9] * 5 + [0.1] * 10, cfg, turn, scores=[0.7])
    assert names(events) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    assert events[1][0] == events[2][0] == 8  # pause and end on the 4th silent frame (128 ms)


def test_no_end_while_the_score_is_pending_and_at_once_when_it_comes_late() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    turn = TurnConfig(speculate_after_ms=96, complete_silence_ms=160, incomplete_silence_ms=640)
    ep = Endpointer(cfg, turn=turn, turn_score=lambda audio: 0.9)
    events = []
    for p in [0.9] * 5 + [0.1] * 8:  # 256 ms of silence: past the complete window, score not asked yet
        events += ep.feed(np.zeros(FRAME, np.float32), p)
    assert names([(0, e) for e in events]) == ["SpeechStarted", "SpeechPaused"] and ep.score_pending
    (end,) = ep.score_pause()
    assert isinstance(end, SpeechEnded) and end.turn_score == 0.9 and end.trailing_silence_ms == 256.0
    assert not ep.score_pending and not ep.in_speech


def run_levels(
    levels: list[float], probs: list[float], turn: TurnConfig, scores: list[float] | None = None
) -> list[tuple[int, object]]:
    """Frames of constant amplitude ``levels[i]`` with VAD probabilities ``probs[i]``."""
    asked = list(scores or [])
    ep = Endpointer(
        VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64),
        turn=turn,
        turn_score=(lambda _audio: asked.pop(0)) if scores is not None else None,
    )
    out: list[tuple[int, object]] = []
    for i, (level, p) in enumerate(zip(levels, probs, strict=True)):
        out.extend((i, ev) for ev in ep.feed(np.full(FRAME, level, np.float32), p))
        if ep.score_pending:
            out.extend((i, ev) for ev in ep.score_pause())
    assert not asked, "the scorer was asked fewer times than expected"
    return out


LOUD, QUIET = 0.3, 0.001  # -10 dBFS and -60 dBFS: 50 dB apart
ENERGY = TurnConfig(speculate_after_ms=96, pause_energy_drop_db=30.0)
assert TurnConfig().pause_energy_drop_db == 30.0  # the default: the tests below that leave it out use it


def test_a_pause_on_energy_comes_before_the_lagging_vad_and_ends_nothing() -> None:
    # Speech stops at frame 5; the VAD keeps calling it speech for 4 more frames (128 ms), then silence.
    levels = [LOUD] * 5 + [QUIET] * 20
    probs = [0.9] * 9 + [0.1] * 16
    vad_only = run_levels(levels, probs, TurnConfig(speculate_after_ms=96, pause_energy_drop_db=0.0))
    energy = run_levels(levels, probs, ENERGY)
    assert names(vad_only) == names(energy) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    (_, _), (vad_pause_at, _), (vad_end_at, vad_end) = vad_only
    (_, _), (pause_at, pause), (end_at, end) = energy
    assert vad_pause_at == 11 and pause_at == 7  # 96 ms after the last loud frame, 4 frames sooner
    assert isinstance(pause, SpeechPaused) and pause.trailing_silence_ms == 96.0
    # The VAD's lag is not taken for resumed speech, and the end of the turn is still the VAD's.
    assert isinstance(end, SpeechEnded) and isinstance(vad_end, SpeechEnded) and end_at == vad_end_at
    assert np.array_equal(end.audio, vad_end.audio) and end.trailing_silence_ms == vad_end.trailing_silence_ms


def test_after_an_energy_pause_loud_speech_resumes_and_a_long_quiet_vad_stretch_too() -> None:
    loud_again = run_levels([LOUD] * 5 + [QUIET] * 4 + [LOUD] * 2 + [QUIET] * 16, [0.9] * 11 + [0.1] * 16, ENERGY)
    assert names(loud_again)[:4] == ["SpeechStarted", "SpeechPaused", "SpeechResumed", "SpeechPaused"]
    assert [i for i, _ in loud_again][1:3] == [7, 9]
    # A quiet voice the VAD keeps hearing for 256 ms (8 frames) after the pause is speech, not lag.
    whisper = run_levels([LOUD] * 5 + [QUIET] * 30, [0.9] * 20 + [0.1] * 15, ENERGY)
    assert names(whisper)[:3] == ["SpeechStarted", "SpeechPaused", "SpeechResumed"]
    assert [i for i, _ in whisper][1:3] == [7, 15]


def test_energy_pause_asks_the_end_of_turn_model_at_the_vads_own_pause() -> None:
    turn = TurnConfig(speculate_after_ms=96, pause_energy_drop_db=30.0, complete_silence_ms=160)
    events = run_levels([LOUD] * 5 + [QUIET] * 30, [0.9] * 9 + [0.1] * 26, turn, scores=[0.9])
    assert names(events) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    (_, _), (pause_at, pause), (end_at, end) = events
    assert pause_at == 7 and isinstance(pause, SpeechPaused) and pause.end_after_ms == 960.0
    # Scored on the VAD's pause (frame 11), the turn ends after 160 ms of the VAD's silence (frame 13).
    assert end_at == 13 and isinstance(end, SpeechEnded) and end.turn_score == 0.9


def test_noise_never_falls_far_enough_so_the_vad_decides() -> None:
    noisy = run_levels([LOUD] * 5 + [LOUD / 10] * 20, [0.9] * 9 + [0.1] * 16, ENERGY)  # noise 20 dB down
    assert [i for i, e in noisy if isinstance(e, SpeechPaused)] == [11]


def test_an_early_speculation_still_asks_the_model_after_score_after_ms() -> None:
    cfg = VadConfig(silence_ms=320, pre_roll_ms=0, min_speech_ms=64)
    turn = TurnConfig(speculate_after_ms=32, score_after_ms=96, complete_silence_ms=160)
    asked: list[int] = []

    def score(audio: np.ndarray) -> float:
        asked.append(len(audio) // FRAME)
        return 0.9

    ep = Endpointer(cfg, turn=turn, turn_score=score)
    events: list[tuple[int, object]] = []
    for i, p in enumerate([0.9] * 5 + [0.1] * 10):
        events.extend((i, ev) for ev in ep.feed(np.full(FRAME, 0.3, np.float32), p))
        if ep.score_pending:
            events.extend((i, ev) for ev in ep.score_pause())
    assert [(i, type(e).__name__) for i, e in events] == [(0, "SpeechStarted"), (5, "SpeechPaused"), (9, "SpeechEnded")]
    assert asked == [8]  # on the audio up to the third silent frame (96 ms), not the pause's first


ENERGY_END = dataclasses.replace(ENERGY, end_on_energy=True)


def test_end_on_energy_counts_the_window_from_the_energy_drop_not_the_vads_lag() -> None:
    # Speech stops at frame 5; the VAD hears silence only from frame 9 (its lag: 128 ms).
    levels, probs = [LOUD] * 5 + [QUIET] * 20, [0.9] * 9 + [0.1] * 16
    vad_end = [(i, e) for i, e in run_levels(levels, probs, ENERGY) if isinstance(e, SpeechEnded)]
    energy_end = [(i, e) for i, e in run_levels(levels, probs, ENERGY_END) if isinstance(e, SpeechEnded)]
    # 320 ms = 10 frames of silence: from frame 9 (VAD) the turn ends at frame 18, from frame 5 (energy) at 14.
    assert [i for i, _ in vad_end] == [18] and [i for i, _ in energy_end] == [14]
    (_, end), (_, before) = energy_end[0], vad_end[0]
    assert isinstance(end, SpeechEnded) and isinstance(before, SpeechEnded)
    assert end.trailing_silence_ms == 320.0 and np.array_equal(end.audio, before.audio[: len(end.audio)])


def test_end_on_energy_needs_the_vad_to_hear_silence_and_ignores_a_quiet_voice() -> None:
    # A quiet voice the VAD hears as speech for 15 frames after the energy drop: speech resumes, and the quiet
    # run it spoke in is not silence: the window counts from the VAD's silence (frame 20) as without the key.
    levels, probs = [LOUD] * 5 + [QUIET] * 35, [0.9] * 20 + [0.1] * 20
    ends = [i for i, e in run_levels(levels, probs, ENERGY_END) if isinstance(e, SpeechEnded)]
    assert ends == [i for i, e in run_levels(levels, probs, ENERGY) if isinstance(e, SpeechEnded)] == [29]


def test_end_on_energy_changes_nothing_in_noise() -> None:
    levels, probs = [LOUD] * 5 + [LOUD / 10] * 20, [0.9] * 9 + [0.1] * 16
    def summary(events: list[tuple[int, object]]) -> list[tuple[int, str]]:
        return [(i, type(e).__name__) for i, e in events]

    assert summary(run_levels(levels, probs, ENERGY_END)) == summary(run_levels(levels, probs, ENERGY))


def test_end_on_energy_with_the_model_ends_when_it_scores_if_the_quiet_run_is_long_enough() -> None:
    turn = dataclasses.replace(ENERGY_END, complete_silence_ms=160)
    events = run_levels([LOUD] * 5 + [QUIET] * 30, [0.9] * 9 + [0.1] * 26, turn, scores=[0.9])
    assert names(events) == ["SpeechStarted", "SpeechPaused", "SpeechEnded"]
    # Scored at the VAD's pause (96 ms of its silence, frame 11): 7 quiet frames (224 ms) ≥ 160 ms: it ends there.
    assert [i for i, _ in events][2] == 11


def test_the_end_carries_the_vads_probability_of_every_frame() -> None:
    ep = Endpointer(VadConfig(silence_ms=96, pre_roll_ms=64, min_speech_ms=32))
    frames = [np.full(512, i, np.float32) for i in range(12)]
    probs = [0.0, 0.0, 0.0, 0.9, 0.8, 0.9, 0.7, 0.1, 0.0, 0.0, 0.0, 0.0]
    events = [e for f, p in zip(frames, probs, strict=True) for e in ep.feed(f, p)]
    (end,) = [e for e in events if isinstance(e, SpeechEnded)]
    assert end.frame_samples == 512 and end.probabilities is not None
    assert len(end.probabilities) * 512 == len(end.audio)
    # Frame k of the audio is the one fed with probability k: the pre-roll keeps both in step.
    first = int(end.audio[0])
    assert end.probabilities.tolist() == pytest.approx(probs[first : first + len(end.probabilities)])
