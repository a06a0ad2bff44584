"""The reference speech end holds on hard clips, and a turn measured against it is never falsely fast.

Known answers: clean speech from espeak-ng (its speech end is where its energy stops, over digital silence),
mixed with what real recordings carry (:data:`voice.bench.mix.mixing.HARD_MIXES`: an onset chime, a click or a
breath 100–400 ms after the speech, steady noise at 10–15 dB SNR, a music bed, a quiet speaker). The real
Silero VAD (2 MB, shipped with faster-whisper) runs on them; the turns are joined from scripted client
timelines (no sockets, no sleeps), so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile
import soxr

from voice.audio import analyse_speech, float_to_pcm16
from voice.bench.clips import BenchError, Clip, read_annotations, reference_speech_end, silero_probabilities
from voice.bench.e2e.result import summarize
from voice.bench.e2e.turn import PlanItem, TurnResult, turn_result
from voice.bench.mix.mixing import HARD_MIXES, Mix, apply_mix
from voice.bench.stats import corpus_wer, corpus_wer_normalized
from voice.client import ClientTurn, Conversation

RATE = 16_000
TEXTS = ("hello there", "set a timer for ten minutes", "call my mother")
T0_NS = 1_000_000_000_000


def espeak(text: str) -> np.ndarray:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (./dev setup installs it)")
    wav = subprocess.run(["espeak-ng", "--stdout", "-s", "160", text], capture_output=True, check=True).stdout
    audio, rate = soundfile.read(io.BytesIO(wav), dtype="float32")
    speech = np.asarray(soxr.resample(audio, rate, RATE), np.float32)
    pad = np.zeros(RATE // 2, np.float32)
    return np.concatenate([pad, speech, pad])


@pytest.fixture(scope="module")
def probabilities() -> Callable[[np.ndarray], np.ndarray]:
    return silero_probabilities()


@pytest.fixture(scope="module")
def sources() -> dict[str, tuple[np.ndarray, int, int]]:
    """Clean clips and their known speech start and end: where their energy rises above / falls to
    40 dB under the peak (5 ms windows; the rest is digital silence)."""
    out = {}
    for text in TEXTS:
        clean = espeak(text)
        energy = analyse_speech(clean, RATE, window_ms=5.0)
        out[text] = (clean, energy.first_voiced_sample, energy.last_voiced_sample)
    return out


def hard_clip(
    sources: dict[str, tuple[np.ndarray, int, int]],
    probabilities: Callable[[np.ndarray], np.ndarray],
    text: str,
    mix: Mix,
) -> tuple[Clip, int]:
    clean, start, end = sources[text]
    audio, known_end = apply_mix(clean, start, end, mix)
    analysis = analyse_speech(audio, RATE, min_segment_ms=100.0, bridge_ms=150.0)
    speech_end = reference_speech_end(audio, RATE, analysis, probabilities)
    clip = Clip(f"{mix.name}.wav", Path(f"{mix.name}.wav"), audio, RATE, analysis, speech_end, text, RATE, 1)
    return clip, known_end


CASES = [(text, mix) for text in TEXTS for mix in HARD_MIXES]
IDS = [f"{text.split()[0]}-{mix.name}" for text, mix in CASES]


@pytest.mark.parametrize(("text", "mix"), CASES, ids=IDS)
def test_reference_lands_within_20_ms_of_the_known_end(
    sources: dict[str, tuple[np.ndarray, int, int]],
    probabilities: Callable[[np.ndarray], np.ndarray],
    text: str,
    mix: Mix,
) -> None:
    clip, known_end = hard_clip(sources, probabilities, text, mix)
    error_ms = (clip.speech_end_s * RATE - known_end) * 1000 / RATE
    assert abs(error_ms) <= 20, f"{mix.name}: reference {error_ms:+.1f} ms from the known end"
    if mix.noise_snr_db is None or mix.noise_snr_db > 10:
        assert clip.speech_end.ambiguous is None


def scripted_turn(clip: Clip, known_end: int, reply_after_ms: float, stages_ms: dict[str, float]) -> ClientTurn:
    """The client's view of a fake server whose first audible reply sample sounds ``reply_after_ms`` after
    the known speech end (in a chunk that starts with 40 ms of silence)."""
    lead = np.zeros(int(0.04 * RATE), np.float32)
    reply = np.concatenate([lead, 0.3 * np.ones(800, np.float32)])
    first_audio_ns = T0_NS + round((known_end / RATE + reply_after_ms / 1000) * 1e9)
    report = {"turn_id": 1, "outcome": "ok", "stages_ms": stages_ms, "transcript": clip.reference or ""}
    return ClientTurn(
        turn_id=1,
        speech_end_ns=T0_NS + round(clip.speech_end_s * 1e9),
        report=report,
        sample_rate=RATE,
        chunks=[(first_audio_ns - 40_000_000, float_to_pcm16(reply))],
        speech_ended_ns=first_audio_ns - round(sum(stages_ms.values()) * 1e6) + round(stages_ms.get(
            "endpoint_silence", 0.0) * 1e6),
        trailing_silence_ms=stages_ms.get("endpoint_silence"),
    )  # fmt: skip


def conversation(turn: ClientTurn) -> Conversation:
    return Conversation(turns={1: turn}, session_id="script01", utterance_turns=[[1]])


STAGES_260 = {"endpoint_silence": 96.0, "stt": 80.0, "llm_ttft": 44.0, "tts_first_audio": 40.0}


@pytest.mark.parametrize(("text", "mix"), CASES, ids=IDS)
def test_a_reply_300_ms_after_the_known_end_measures_300_ms(
    sources: dict[str, tuple[np.ndarray, int, int]],
    probabilities: Callable[[np.ndarray], np.ndarray],
    text: str,
    mix: Mix,
) -> None:
    clip, known_end = hard_clip(sources, probabilities, text, mix)
    turn = scripted_turn(clip, known_end, 300.0, STAGES_260)
    res = turn_result(PlanItem(clip, "measured", 1), conversation(turn))
    assert res.mouth_to_ear_ms is not None
    assert res.mouth_to_ear_ms == pytest.approx(300.0, abs=5.0)
    assert res.reply_lead_silence_ms == pytest.approx(40.0, abs=0.1)
    assert res.uncertain is None or (clip.speech_end.ambiguous and res.uncertain.startswith("speech end"))


@pytest.mark.parametrize(("text", "mix"), CASES, ids=IDS)
def test_a_reply_before_the_end_of_speech_is_uncertain_never_fast(
    sources: dict[str, tuple[np.ndarray, int, int]],
    probabilities: Callable[[np.ndarray], np.ndarray],
    text: str,
    mix: Mix,
) -> None:
    clip, known_end = hard_clip(sources, probabilities, text, mix)
    def measure(repeat: int, reply_after_ms: float, stages_ms: dict[str, float]) -> TurnResult:
        turn = scripted_turn(clip, known_end, reply_after_ms, stages_ms)
        return turn_result(PlanItem(clip, "measured", repeat), conversation(turn))

    early = measure(1, -80.0, STAGES_260)
    assert early.uncertain is not None and "before the reference speech end" in early.uncertain
    # The case: 283 ms at the ear while the server's post-endpoint stages took ~1,100 ms — the
    # reference must have been late (or the server cut the turn early): not a fast turn either.
    slow_stages = {"endpoint_silence": 320.0, "stt": 773.0, "llm_ttft": 107.0, "tts_first_audio": 223.0}
    late = measure(2, 283.0, slow_stages)
    assert late.uncertain is not None and "post-endpoint" in late.uncertain
    honest = measure(3, 1500.0, slow_stages)
    summary = summarize([early, late, honest])
    assert summary.n_uncertain == 2 + (honest.uncertain is not None) and summary.within_target == 0
    if honest.uncertain is None:
        assert summary.n_measured == 1 and summary.p50_ms == honest.mouth_to_ear_ms
    assert summary.meets_target in ("no", "n/a")


def test_annotated_speech_end_overrides_and_bad_ones_are_named(tmp_path: Path) -> None:
    tsv = tmp_path / "transcripts.tsv"
    tsv.write_text("a.wav\tHello.\t1.234\nb.wav\tNo end.\n", encoding="utf-8")
    assert read_annotations(tsv) == {"a.wav": ("Hello.", 1.234), "b.wav": ("No end.", None)}
    tsv.write_text("a.wav\tHello.\tsoon\n", encoding="utf-8")
    with pytest.raises(BenchError, match=r"transcripts\.tsv:1: the third column.*'soon'"):
        read_annotations(tsv)


def test_normalized_wer_counts_numbers_as_words() -> None:
    pairs = [("Set a timer for ten minutes.", "set a timer for 10 minutes"), ("What's five?", "what is 5")]
    raw, normalized = corpus_wer(pairs), corpus_wer_normalized(pairs)
    assert raw is not None and raw > 0.3
    assert normalized == 0.0


@pytest.mark.parametrize(
    ("reference", "hypothesis", "errors", "words"),
    [
        # The same digits, grouped or spelled differently, score the same (Whisper's normalizer alone gave 3 and
        # 6 errors against one or two joined reference words).
        ("one two three", "1. Two... Three...", 0, 3),
        ("one two three", "1 2 3", 0, 3),
        ("one zero zero zero one", "1,0001.", 0, 5),
        ("Wake me up at seven thirty.", "Wake me up at 7.30", 0, 7),
        ("Only platforms one and three.", "Only platforms 1 and 3.", 0, 5),
        # Each wrong or missing digit is one error.
        ("one zero zero zero one", "1 0 0 1", 1, 5),
        ("call nine one one", "call 9 1 7", 1, 4),
        # Words are still words.
        ("She had your dark suit", "She had your dog suit", 1, 5),
    ],
)
def test_normalized_wer_scores_numbers_digit_by_digit(reference: str, hypothesis: str, errors: int, words: int) -> None:
    assert corpus_wer_normalized([(reference, hypothesis)]) == pytest.approx(errors / words)


def test_bench_mix_writes_hard_clips_and_measures_the_reference_on_them(
    tmp_path: Path, sources: dict[str, tuple[np.ndarray, int, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from voice.audio import write_wav
    from voice.bench.mix import command as mix_cmd

    speech = tmp_path / "speech"
    clean, _, _ = sources["hello there"]
    write_wav(speech / "hello.wav", float_to_pcm16(clean), RATE)
    (speech / "transcripts.tsv").write_text("hello.wav\tHello there.\n", encoding="utf-8")
    out = tmp_path / "hard"
    args = argparse.Namespace(speech=speech, out=out, mixes="click,noise15", clips=None)
    assert mix_cmd.run(args) == 0
    assert sorted(p.name for p in out.glob("*.wav")) == ["hello-click.wav", "hello-noise15.wav", "hello.wav"]
    # The transcripts carry no speech end: e2e on the folder measures against the automatic reference.
    assert (out / "transcripts.tsv").read_text(encoding="utf-8").splitlines() == [
        "hello.wav\tHello there.", "hello-click.wav\tHello there.", "hello-noise15.wav\tHello there."
    ]
    rows = [line.split("\t") for line in (out / "known_ends.tsv").read_text().splitlines()[1:]]
    assert [r[0] for r in rows] == ["hello-click.wav", "hello-noise15.wav"]
    assert all(abs(float(r[3])) <= 20 for r in rows)
    assert "2 of 2 mixed clips within 20 ms" in capsys.readouterr().out
    with pytest.raises(BenchError, match=r"unknown mix.*thunder"):
        mix_cmd.run(argparse.Namespace(speech=speech, out=out, mixes="thunder", clips=None))


def test_bench_mix_skips_a_mix_with_no_speech_left_and_says_so(
    tmp_path: Path,
    sources: dict[str, tuple[np.ndarray, int, int]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mix that leaves nothing to find speech in (a quiet speaker under the noise) is named and skipped; the
    other mixes and the summary are written as usual (it used to end the command with a traceback)."""
    import argparse

    from voice.audio import write_wav
    from voice.bench.mix import command as mix_cmd

    speech = tmp_path / "speech"
    clean, _, _ = sources["hello there"]
    write_wav(speech / "hello.wav", float_to_pcm16(clean), RATE)
    real_mix = mix_cmd.apply_mix

    def drowned(audio: np.ndarray, start: int, end: int, mix: Mix, rate: int) -> tuple[np.ndarray, int]:
        mixed, known = real_mix(audio, start, end, mix, rate)
        return (np.zeros_like(mixed) if mix.name == "quiet" else mixed), known

    monkeypatch.setattr(mix_cmd, "apply_mix", drowned)
    out = tmp_path / "hard"
    assert mix_cmd.run(argparse.Namespace(speech=speech, out=out, mixes="click,quiet", clips=None)) == 0
    assert sorted(p.name for p in out.glob("*.wav")) == ["hello-click.wav", "hello.wav"]
    captured = capsys.readouterr()
    assert "hello-quiet.wav not written: no speech found" in captured.err
    assert "1 of 1 mixed clips within 20 ms" in captured.out


def test_mix_names_a_speech_span_outside_the_clip() -> None:
    with pytest.raises(ValueError, match=r"speech \[100, 900\) is not inside a clip of 800 samples"):
        apply_mix(np.zeros(800, np.float32), 100, 900, HARD_MIXES[0])


def test_annotate_tsv_keeps_what_a_person_wrote() -> None:
    from voice.bench.annotate import annotate_tsv

    text = "# my clips\nhello.wav\tHello there.\nbye\tGoodbye.\t1.250\n\nother.wav\tNot measured.\n"
    out = annotate_tsv(text, {"hello.wav": 1.1234, "bye.wav": 2.0, "new.wav": 0.5})
    assert out.text.splitlines() == [
        "# my clips",
        "hello.wav\tHello there.\t1.123",
        "bye\tGoodbye.\t1.250",  # annotated by hand: kept (matched by stem)
        "",
        "other.wav\tNot measured.",
        "new.wav\t\t0.500",  # a clip without a row gets one
    ]
    assert out.written == ("hello.wav", "new.wav") and out.kept == ("bye.wav",)
    replaced = annotate_tsv(text, {"bye.wav": 2.0}, overwrite=True)
    assert "bye\tGoodbye.\t2.000" in replaced.text.splitlines() and replaced.kept == ()


def test_bench_annotate_writes_the_reference_and_a_png_per_clip(
    tmp_path: Path, sources: dict[str, tuple[np.ndarray, int, int]], capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from voice.audio import write_wav
    from voice.bench import annotate

    speech = tmp_path / "speech"
    clean, _, known_end = sources["call my mother"]
    write_wav(speech / "mother.wav", float_to_pcm16(clean), RATE)
    write_wav(speech / "hello.wav", float_to_pcm16(sources["hello there"][0]), RATE)
    (speech / "transcripts.tsv").write_text("mother.wav\tCall my mother.\nhello.wav\tHello.\t0.9\n", encoding="utf-8")
    pngs = tmp_path / "png"
    args = argparse.Namespace(dir=speech, write=True, overwrite=False, png_dir=pngs)
    assert annotate.run(args) == 0
    rows = read_annotations(speech / "transcripts.tsv")
    assert rows["hello.wav"] == ("Hello.", 0.9)  # kept
    text, end_s = rows["mother.wav"]
    assert text == "Call my mother." and end_s is not None and abs(end_s - known_end / RATE) <= 0.020
    assert (speech / "transcripts.tsv.bak").read_text(encoding="utf-8").startswith("mother.wav\tCall my mother.\n")
    assert sorted(p.name for p in pngs.iterdir()) == ["hello.png", "mother.png"]
    assert (pngs / "mother.png").read_bytes()[:4] == b"\x89PNG"
    assert "kept the existing annotation of 1 clip" in capsys.readouterr().err


def _heard(turn_id: int, pause_ms: float, silence_ms: float, audio_at_ms: float | None) -> ClientTurn:
    """A turn the server ended ``silence_ms`` after a pause at ``pause_ms``, answered at ``audio_at_ms``."""
    chunks = []
    if audio_at_ms is not None:
        chunks = [(T0_NS + round(audio_at_ms * 1e6), float_to_pcm16(0.3 * np.ones(800, np.float32)))]
    return ClientTurn(
        turn_id=turn_id,
        sample_rate=RATE,
        chunks=chunks,
        speech_ended_ns=T0_NS + round((pause_ms + silence_ms) * 1e6),
        trailing_silence_ms=silence_ms,
        report={"turn_id": turn_id, "outcome": "ok", "stages_ms": {"endpoint_silence": silence_ms}},
    )


def test_a_split_utterance_reports_the_answer_that_talked_over_the_user(
    sources: dict[str, tuple[np.ndarray, int, int]], probabilities: Callable[[np.ndarray], np.ndarray]
) -> None:
    """Heard as three turns (two false endpoints): the first turn was cut before it spoke, the second spoke
    520 ms after its pause, 300 ms before the user had finished; the last turn is still the one measured."""
    clip, _known_end = hard_clip(sources, probabilities, "hello there", HARD_MIXES[0])
    end_ms = clip.speech_end_s * 1000
    first = _heard(1, end_ms - 1500, 320.0, None)
    second = _heard(2, end_ms - 820, 320.0, end_ms - 300)
    last = _heard(3, end_ms, 320.0, end_ms + 600)
    last.speech_end_ns = T0_NS + round(end_ms * 1e6)
    conv = Conversation(turns={1: first, 2: second, 3: last}, session_id="s", utterance_turns=[[1, 2, 3]])
    res = turn_result(PlanItem(clip, "measured", 1), conv)
    assert res.turns_heard == 3 and res.turn_id == 3
    assert res.first_answer_ms == pytest.approx(520.0, abs=0.1) and res.first_answer_interrupted
    assert res.mouth_to_ear_ms == pytest.approx(600.0, abs=0.1)
    one = turn_result(PlanItem(clip, "measured", 1), conversation(scripted_turn(clip, _known_end, 300.0, STAGES_260)))
    assert one.first_answer_ms is None and not one.first_answer_interrupted
    s = summarize([res, one])
    assert (s.false_endpoints, s.split_turns_interrupting) == (2, 1)
    assert s.split_first_answer_p50_ms == pytest.approx(520.0, abs=0.1)


def test_turns_that_asked_to_say_it_again_are_counted_apart(
    sources: dict[str, tuple[np.ndarray, int, int]], probabilities: Callable[[np.ndarray], np.ndarray]
) -> None:
    """A quick "Sorry, I didn't catch that" is a real reply, but it answers nothing: the summary and the verdict
    say how many turns it was."""
    from voice.bench.e2e.measure import verdict_lines

    clip, known_end = hard_clip(sources, probabilities, "call my mother", HARD_MIXES[0])
    replied = scripted_turn(clip, known_end, 400.0, STAGES_260)
    answered = turn_result(PlanItem(clip, "measured", 1), conversation(replied))
    asked = scripted_turn(clip, known_end, 250.0, STAGES_260)
    asked.report = {**(asked.report or {}), "asked_again": True}
    again = turn_result(PlanItem(clip, "measured", 2), conversation(asked))
    assert again.asked_again and not answered.asked_again
    summary = summarize([answered, again])
    assert summary.asked_again == 1 and summary.n_measured == 2
    assert any("1 of 2 turns asked to say it again" in line for line in verdict_lines(summary))
    assert not any("asked" in line for line in verdict_lines(summarize([answered])))
