"""The turn pipeline with data-driven fakes and a fake clock: exact stage arithmetic, caching, barge-in."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from voice.clock import FakeClock
from voice.config.config import LlmConfig
from voice.conversation.history import History
from voice.runtime.fakes import Delay, FakeLlm, FakeTts, render_words
from voice.runtime.model_api import ChatMessage
from voice.turn.budget import TurnTimer
from voice.turn.pipeline import Utterance, run_turn
from voice.wire.events import ServerEvent, encode_server
from voice.wire.report import STAGES, TurnReport


class ListSink:
    def __init__(self) -> None:
        self.events: list[dict[str, object]] = []
        self.audio: list[tuple[int, bytes]] = []
        self.dropped: set[int] = set()

    async def send_event(self, ev: ServerEvent) -> None:
        self.events.append(json.loads(encode_server(ev)))  # as the client would see it

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        if turn_id in self.dropped:
            return
        self.audio.append((turn_id, pcm))
        if on_sent is not None:
            on_sent()

    def drop_turn(self, turn_id: int) -> None:
        self.dropped.add(turn_id)

    def types(self) -> list[object]:
        return [e["type"] for e in self.events]


def start_timer(clock: FakeClock, turn_id: int, silence_ms: float = 320.0) -> TurnTimer:
    timer = TurnTimer(clock, "s1", turn_id)
    now = clock.now_ns()
    timer.mark("speech_end", at_ns=now - round(silence_ms * 1e6))
    timer.mark("endpoint", at_ns=now)
    return timer


UTT = Utterance(np.zeros(16000, np.float32), 320.0, False)
SYSTEM = LlmConfig().system_prompt


async def test_stage_arithmetic_with_fake_clock(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    # One sentence: the splitter releases it when the LLM has finished, so no thread advances the fake
    # clock concurrently and every stage is exact.
    reply = "The capital of France is Paris."
    runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(reply,), delay=Delay(clock)))
    config = make_config(tts={"max_first_chunk_words": 0})  # whole sentences only
    sink = ListSink()
    history = History()
    report = await run_turn(runtime, config, history, UTT, start_timer(clock, 1), sink)
    s = report.stages_ms
    assert list(s) == list(STAGES)
    n_prompt = len(
        render_words([ChatMessage("system", SYSTEM), ChatMessage("user", "what is the capital of france")])
    )
    assert report.prompt_tokens_evaluated == n_prompt and report.prompt_tokens_reused == 0
    expected = {
        "endpoint_silence": 320.0,
        "stt_queue": 0.0,
        "stt": 100.0,
        "llm_queue": 0.0,
        "llm_ttft": 20.0 + n_prompt * 1.0,  # TTFT floor + 1 ms per uncached prompt token
        "first_clause": 50.0,  # 6 tokens: 5 inter-token gaps of 10 ms, released at the end of the stream
        "tts_queue": 0.0,
        "tts_first_audio": 30.0 + 0.05 * len(reply) * 60.0,  # latency + rtf x audio duration
        "send": 0.0,
    }
    assert s == pytest.approx(expected)
    assert report.total_ms == pytest.approx(sum(s.values()))
    assert report.reply_text == reply
    assert report.llm is not None and report.llm.n_tokens == 6
    assert report.llm.e2e_ms == pytest.approx(report.llm.ttft_ms + 5 * report.llm.itl_mean_ms)
    assert report.over_budget[0] == "endpoint_silence"
    # Event order: transcript, then announced audio format before the first chunk, then the report.
    types = sink.types()
    assert types[0] == "transcript" and types[1] == "audio_start" and types[-1] == "turn_report"
    assert types.index("audio_end") < types.index("turn_report")
    fmt = sink.events[1]
    assert fmt["sample_rate"] == 16000 and fmt["format"] == "s16le"
    # 40 ms chunks at 16 kHz = 1280 bytes; reply audio is all there.
    assert all(len(c) <= 1280 for _, c in sink.audio)
    total_samples = sum(len(c) for _, c in sink.audio) // 2
    assert total_samples == sum(int(16000 * len(t) * 0.06) for t in runtime.tts.texts)  # type: ignore[attr-defined]
    assert sink.events[-1]["total_ms"] == report.total_ms


async def test_first_clause_is_spoken_while_the_llm_generates(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    runtime = fake_runtime(clock=clock)  # reply: "Sure, the capital of France is Paris. It is lovely."
    report = await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 1), ListSink())
    # "Sure," has 1 word (< 3 for a clause), so the first chunk ends at the word break after 6 words
    # ([tts] max_first_chunk_words), confirmed by the 7th token (" Paris."): 6 gaps of 10 ms after the first.
    assert report.stages_ms["first_clause"] == 60.0
    texts = runtime.tts.texts  # type: ignore[attr-defined]
    assert texts == ["Sure, the capital of France is", "Paris.", "It is lovely."]
    assert report.total_ms == pytest.approx(sum(report.stages_ms.values()))


async def test_whole_first_sentence_when_the_word_cap_is_off(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    runtime = fake_runtime(clock=clock)
    config = make_config(tts={"max_first_chunk_words": 0})
    report = await run_turn(runtime, config, History(), UTT, start_timer(clock, 1), ListSink())
    # The first sentence, confirmed by the 8th token (" It"): 7 gaps of 10 ms, before the 10th and last token.
    assert report.stages_ms["first_clause"] == 70.0
    assert runtime.tts.texts == ["Sure, the capital of France is Paris.", "It is lovely."]  # type: ignore[attr-defined]


async def test_second_turn_reuses_cached_prompt(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    runtime = fake_runtime(clock=clock)
    config = make_config()
    history = History()
    r1 = await run_turn(runtime, config, history, UTT, start_timer(clock, 1), ListSink())
    r2 = await run_turn(runtime, config, history, UTT, start_timer(clock, 2), ListSink())
    assert r1.prompt_tokens_reused == 0
    # Everything up to the end of the first reply is reused; only the new user message is evaluated.
    assert r2.prompt_tokens_reused > r1.prompt_tokens_evaluated
    assert r2.prompt_tokens_evaluated < 15
    assert r2.stages_ms["llm_ttft"] < r1.stages_ms["llm_ttft"]
    assert [m.role for m in history.messages] == ["user", "assistant", "user", "assistant"]


async def test_barge_in_cancels_llm_and_tts(fake_runtime: RuntimeFactory) -> None:
    long_reply = " ".join(f"Sentence number {i} is here." for i in range(40))
    llm = FakeLlm(replies=(long_reply,), itl_ms=20.0, delay=Delay())
    runtime = fake_runtime(llm=llm, tts=FakeTts(latency_ms=5, delay=Delay()), scale=1.0)
    config = make_config()
    sink = ListSink()
    reports: list[TurnReport] = []
    from voice.clock import MonotonicClock

    timer = start_timer(MonotonicClock(), 7)  # type: ignore[arg-type]
    history = History()
    task = asyncio.create_task(run_turn(runtime, config, history, UTT, timer, sink, on_report=reports.append))
    while not sink.audio:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    cancelled_at = asyncio.get_running_loop().time()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stopped_s = asyncio.get_running_loop().time() - cancelled_at
    assert stopped_s < 0.25  # LLM and TTS stopped within one step
    tokens_at_cancel = len(timer.token_ns)
    await asyncio.sleep(0.1)
    assert len(timer.token_ns) == tokens_at_cancel < 40 * 5  # generation really stopped
    assert "interrupt" in sink.types()
    (report,) = reports
    assert report.cancelled and report.outcome == "cancelled"
    assert sink.events[-1]["type"] == "turn_report" and sink.events[-1]["cancelled"] is True
    # the model is free again: a new turn runs
    r = await run_turn(runtime, config, history, UTT, start_timer(MonotonicClock(), 8), ListSink())  # type: ignore[arg-type]
    assert not r.cancelled and r.reply_text
    assert history.messages[1].role == "assistant" and history.messages[1].content.endswith("…")


async def test_empty_transcript_is_no_speech(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    from voice.runtime.fakes import FakeStt

    runtime = fake_runtime(clock=clock, stt=FakeStt(texts=("  ",), delay=Delay(clock)))
    sink = ListSink()
    r = await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 1), sink)
    assert r.outcome == "no_speech" and r.total_ms is None
    assert runtime.llm.prompts == []  # type: ignore[attr-defined]


async def test_busy_when_queue_is_full(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    runtime = fake_runtime(clock=clock, max_queue=0)
    sink = ListSink()
    r = await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 1), sink)
    assert r.outcome == "busy"
    assert any(e["type"] == "error" and e["code"] == "busy" for e in sink.events)


async def test_llm_failure_is_reported_not_raised(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    class Broken(FakeLlm):
        def generate(self, messages, *, max_tokens, cancel):  # type: ignore[no-untyped-def]
            raise RuntimeError("model exploded")
            yield  # pragma: no cover

    runtime = fake_runtime(clock=clock, llm=Broken(delay=Delay(clock)))
    sink = ListSink()
    r = await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 1), sink)
    assert r.outcome == "error"
    err = next(e for e in sink.events if e["type"] == "error")
    assert "model exploded" in str(err["message"]) and err["code"] == "internal"


async def test_output_resampled_to_client_rate(clock: FakeClock, fake_runtime: RuntimeFactory) -> None:
    runtime = fake_runtime(clock=clock)
    sink = ListSink()
    r = await run_turn(
        runtime, make_config(), History(), UTT, start_timer(clock, 1), sink, output_rate_hz=48000
    )
    assert sink.events[1]["sample_rate"] == 48000
    samples = sum(len(c) for _, c in sink.audio) // 2
    assert samples == pytest.approx(r.reply_audio_ms * 48, rel=0.01)
    assert samples == pytest.approx(sum(len(t) * 0.06 for t in runtime.tts.texts) * 48000, rel=0.01)  # type: ignore[attr-defined]


class ThreadNotingLlm(FakeLlm):
    """Notes the thread each token count runs in."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.count_threads: list[str] = []

    def count_tokens(self, messages: Sequence[ChatMessage]) -> int:
        self.count_threads.append(threading.current_thread().name)
        return super().count_tokens(messages)


async def test_tokens_are_counted_in_a_model_thread_not_on_the_event_loop(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    llm = ThreadNotingLlm(delay=Delay(clock))
    runtime = fake_runtime(clock=clock, llm=llm)
    await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 1), ListSink())
    loop_thread = threading.current_thread().name
    assert llm.count_threads and loop_thread not in llm.count_threads
    assert all(name.startswith("llm") for name in llm.count_threads)  # the LLM's own thread (runtime.model_threads)


async def test_the_report_says_over_how_long_the_reply_audio_was_sent(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """``reply_audio_sent_spread_ms``: first chunk handed to the socket → last (what the burst check compares
    the client's arrival spread with)."""
    config = make_config(tts={"max_first_chunk_words": 0})  # whole sentences only
    one = "The capital of France is Paris."
    runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(one,), delay=Delay(clock)))
    report = await run_turn(runtime, config, History(), UTT, start_timer(clock, 1), ListSink())
    assert report.reply_audio_sent_spread_ms == 0.0  # one clause: all its chunks go out at once

    two = "The capital of France is Paris. It is lovely."
    runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(two,), delay=Delay(clock)))
    report = await run_turn(runtime, config, History(), UTT, start_timer(clock, 1), ListSink())
    # The second clause's chunks leave after its synthesis (latency + rtf x audio), and perhaps after the last
    # three tokens (10 ms each) if the compute gate ran them between the two clauses.
    synth_ms = 30.0 + 0.05 * len("It is lovely.") * 60.0
    assert report.reply_audio_sent_spread_ms is not None
    assert synth_ms <= report.reply_audio_sent_spread_ms <= synth_ms + 30.0
    assert report.to_dict()["reply_audio_sent_spread_ms"] == report.reply_audio_sent_spread_ms


@pytest.mark.parametrize("ask_again", [True, False])
async def test_words_the_stt_is_unsure_of_are_asked_again_and_kept_out_of_the_history(
    clock: FakeClock, fake_runtime: RuntimeFactory, ask_again: bool
) -> None:
    from voice.runtime.fakes import FakeStt

    # A sure turn, then one the decoder is unsure of (below the threshold), then one just above it.
    stt = FakeStt(
        texts=("what is the capital of france", "well plus 30", "what is half of 90"),
        avg_logprobs=(-0.2, -0.61, -0.59),
        delay=Delay(clock),
    )
    runtime = fake_runtime(clock=clock, stt=stt)
    config = make_config(stt={"ask_again": ask_again, "ask_again_below_logprob": -0.6})
    history = History()
    reports: list[TurnReport] = []
    sinks: list[ListSink] = []
    for turn_id in (1, 2, 3):
        sinks.append(ListSink())
        reports.append(await run_turn(runtime, config, history, UTT, start_timer(clock, turn_id), sinks[-1]))
    sure, unsure, edge = reports
    assert [r.stt_avg_logprob for r in reports] == [-0.2, -0.61, -0.59]
    assert [r.asked_again for r in reports] == [False, ask_again, False]
    assert all(r.outcome == "ok" for r in reports)
    # The client is shown what was heard either way.
    assert {"type": "transcript", "turn_id": 2, "text": "well plus 30"} in sinks[1].events
    users = [m.content for m in history.messages if m.role == "user"]
    llm_prompts = runtime.llm.prompts  # type: ignore[attr-defined]
    if ask_again:
        assert unsure.reply_text == config.stt.ask_again_reply
        assert unsure.prompt_tokens_evaluated + unsure.prompt_tokens_reused == 0  # the LLM was not asked
        assert users == ["what is the capital of france", "what is half of 90"]
        assert config.stt.ask_again_reply not in [m.content for m in history.messages]
        assert len(llm_prompts) == 2
    else:
        assert unsure.reply_text != config.stt.ask_again_reply and unsure.prompt_tokens_evaluated > 0
        assert users == ["what is the capital of france", "well plus 30", "what is half of 90"]
        assert len(llm_prompts) == 3
    assert sure.reply_text == edge.reply_text != config.stt.ask_again_reply


async def test_an_unsure_transcript_a_skill_recognises_whole_is_answered_not_asked_again(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """``[stt] skills_take_unsure`` (voice.turn.ask_again): an unsure sum is answered and kept; unsure words that only
    the LLM would answer are still asked again."""
    from voice.runtime.fakes import FakeStt

    texts = ("what is seven times thirty", "well plus thirty")
    stt = FakeStt(texts=texts, avg_logprobs=(-0.8, -0.8), delay=Delay(clock))
    runtime = fake_runtime(clock=clock, stt=stt)
    config, history = make_config(), History()
    sum_, other = [await run_turn(runtime, config, history, UTT, start_timer(clock, i), ListSink()) for i in (1, 2)]
    assert (sum_.asked_again, other.asked_again) == (False, True)
    assert sum_.reply_text != config.stt.ask_again_reply == other.reply_text
    assert [m.content for m in history.messages if m.role == "user"] == ["what is seven times thirty"]


async def test_a_reply_cut_by_the_token_cap_ends_at_its_last_whole_sentence(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """The half sentence at the cap is neither spoken nor kept in the history; a reply under the cap is whole."""
    reply = "Rome was founded long ago. Its empire spanned the whole Mediterranean sea."
    runtime = fake_runtime(clock=clock, llm=FakeLlm(replies=(reply, reply), delay=Delay(clock)))
    history = History()
    capped = make_config(llm={"max_reply_tokens": 8})
    report = await run_turn(runtime, capped, history, UTT, start_timer(clock, 1), ListSink())
    assert report.reply_text == "Rome was founded long ago."  # 8 words: "Its empire spanned" is dropped
    assert history.messages[-1].content == "Rome was founded long ago."
    whole = await run_turn(runtime, make_config(), History(), UTT, start_timer(clock, 2), ListSink())
    assert whole.reply_text == reply


async def test_a_doubtful_word_asks_the_llms_words_again_and_the_report_carries_it(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    """``[stt] ask_again_llm_below_word_prob``: a sure mean with one unlikely word is asked again when only the LLM
    would answer it; the turn report says the least likely word's probability either way."""
    from voice.runtime.fakes import FakeStt

    stt = FakeStt(
        texts=("who painted the mona lisa", "who painted the mo' alisa"),
        avg_logprobs=(-0.2, -0.2),
        min_word_probs=(0.6, 0.08),
        delay=Delay(clock),
    )
    runtime = fake_runtime(clock=clock, stt=stt)
    config = make_config(stt={"ask_again_llm_below_word_prob": 0.1})
    history = History()
    reports = [
        await run_turn(runtime, config, history, UTT, start_timer(clock, turn_id), ListSink()) for turn_id in (1, 2)
    ]
    assert [r.stt_min_word_prob for r in reports] == [0.6, 0.08]
    assert [r.asked_again for r in reports] == [False, True]
    assert [m.content for m in history.messages if m.role == "user"] == ["who painted the mona lisa"]


class PiecesTts(FakeTts):
    """Each clause in ``n`` pieces; the second waits until ``release`` is set (by the test, when the client has
    the first piece's audio): a pipeline that sent a clause only once it was whole would never send anything."""

    def __init__(self, n: int) -> None:
        super().__init__(latency_ms=0.0, rtf=0.0)
        self.n = n
        self.release = threading.Event()
        self.waited_ok: list[bool] = []

    def synthesize(self, text: str):  # type: ignore[no-untyped-def]
        (whole,) = list(super().synthesize(text))
        for i, piece in enumerate(np.array_split(whole, self.n)):
            if i == 1:
                self.waited_ok.append(self.release.wait(5.0))
            yield piece


@pytest.mark.parametrize("out_rate", [None, 24_000])
async def test_a_clause_is_sent_piece_by_piece_as_the_tts_makes_it(
    fake_runtime: RuntimeFactory, out_rate: int | None
) -> None:
    from voice.clock import MonotonicClock

    tts = PiecesTts(3)
    runtime = fake_runtime(llm=FakeLlm(replies=("The capital of France is Paris.",)), tts=tts, scale=1.0)
    sink = ListSink()
    config = make_config(tts={"max_first_chunk_words": 0, "trim_lead_ms": -1})
    timer = start_timer(MonotonicClock(), 1)  # type: ignore[arg-type]
    turn = asyncio.create_task(run_turn(runtime, config, History(), UTT, timer, sink, output_rate_hz=out_rate))
    while not sink.audio and not turn.done():
        await asyncio.sleep(0.005)
    tts.release.set()
    report = await turn
    assert tts.waited_ok == [True]  # the first piece's audio reached the client before the second was made
    sent = np.frombuffer(b"".join(pcm for _, pcm in sink.audio), np.int16)
    (whole,) = list(FakeTts(latency_ms=0.0, rtf=0.0).synthesize("The capital of France is Paris."))
    if out_rate is None:
        assert np.array_equal(sent, whole)  # the same audio, in order, nothing lost at the piece boundaries
    else:
        import soxr

        assert abs(len(sent) - len(soxr.resample(whole, 16_000, out_rate))) <= 1
    chunk = (out_rate or 16_000) * config.tts.chunk_ms // 1000
    assert all(len(pcm) == 2 * chunk for _, pcm in sink.audio[:-1])  # one chunk length across the pieces
    assert report.outcome == "ok" and sink.types().count("reply_text") == 1
