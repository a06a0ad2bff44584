"""The OpenAI-compatible LLM backend against a scripted fake server on loopback: streaming, the prompt report
from ``usage``, cancellation, buffering detection, and each failure as a clear error while the session keeps
serving. (Against a real ``llama_cpp.server``: tests/test_llm_openai_real.py.)"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import make_config
from tests.fake_openai import FakeOpenAi, Script
from tests.netkit import http_get, running
from tests.units import FAKE_MS
from voice.backends.llm_openai import LlmServerError, OpenAiLlm, estimate_tokens
from voice.backends.openai_stream import Chunk, Usage, deltas_of, parse_chunk, prompt_info
from voice.config.config import LlmConfig
from voice.reliability.probe import Probe
from voice.reliability.tagged import tagged_runtime, tagged_speech
from voice.runtime.model_api import ChatMessage, PromptInfo, TextDelta

ASK = [ChatMessage("system", "Be brief."), ChatMessage("user", "What is the capital of France?")]


def llm_config(base_url: str, **over: object) -> LlmConfig:
    values: dict[str, object] = {"backend": "openai", "base_url": base_url, "model": "fake", "read_timeout_s": 2.0}
    return make_config(llm={**values, **over}).llm


@pytest.fixture
def fake() -> Iterator[FakeOpenAi]:
    with FakeOpenAi() as srv:
        yield srv


def dead_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()  # nothing listens there now: connections are refused
    return port


# ---------------------------------------------------------------------- parsing, on data
def test_parse_a_content_delta() -> None:
    c = parse_chunk('{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}')
    assert c == Chunk(text="Hi")


def _with_logprobs(text: str, content: object) -> str:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None, "logprobs": {"content": content}}
    return json.dumps({"choices": [choice]})


@pytest.mark.parametrize(
    ("data", "deltas"),
    [
        (_with_logprobs(" Paris", [{"token": " Paris", "logprob": -0.25}]), [TextDelta(" Paris", -0.25)]),
        # a chunk of two tokens (vLLM sends several at once): one delta each, each with its own
        (
            _with_logprobs(" Paris.", [{"token": " Paris", "logprob": -0.5}, {"token": ".", "logprob": -1.5}]),
            [TextDelta(" Paris", -0.5), TextDelta(".", -1.5)],
        ),
        # tokens that do not spell the text: one delta, scored by their mean
        (
            _with_logprobs("é", [{"token": "\\xc3", "logprob": -1.0}, {"token": "\\xa9", "logprob": -3.0}]),
            [TextDelta("é", -2.0)],
        ),
        # no log-probabilities, or a malformed entry: no score (the gate then lets the reply through)
        ('{"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null}]}', [TextDelta("Hi", None)]),
        (_with_logprobs("Hi", [{"token": "Hi", "logprob": "low"}]), [TextDelta("Hi", None)]),
        (_with_logprobs("Hi", [{"token": "Hi"}]), [TextDelta("Hi", None)]),
    ],
)
def test_each_token_of_a_chunk_keeps_its_log_probability(data: str, deltas: list[TextDelta]) -> None:
    assert deltas_of(parse_chunk(data)) == deltas


def test_parse_usage_with_cached_tokens() -> None:
    data = (
        '{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9,'
        '"prompt_tokens_details":{"cached_tokens":96}}}'
    )
    c = parse_chunk(data)
    assert c.usage == Usage(prompt_tokens=120, cached_tokens=96)
    assert prompt_info(c.usage) == PromptInfo(prompt_tokens=120, reused_tokens=96, evaluated_tokens=24)


def test_parse_usage_without_details_counts_nothing_cached() -> None:
    c = parse_chunk('{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":3}}')
    assert c.usage == Usage(prompt_tokens=50, cached_tokens=0)


def test_parse_llama_cpp_timings() -> None:
    c = parse_chunk(
        '{"choices":[{"delta":{},"finish_reason":"stop"}],"timings":{"prompt_n":7,"cache_n":40}}'
    )
    assert c.finish_reason == "stop"
    assert c.usage == Usage(prompt_tokens=47, cached_tokens=40)


def test_parse_an_error_event() -> None:
    assert parse_chunk('{"error":{"message":"out of memory","code":500}}').error == "out of memory"


@pytest.mark.parametrize("bad", ["not json", "[1,2]", '{"choices": 3}'])
def test_parse_refuses_what_is_not_a_chunk(bad: str) -> None:
    with pytest.raises(ValueError, match="stream event"):
        parse_chunk(bad)


def test_the_estimate_grows_with_the_text_and_errs_high() -> None:
    short = estimate_tokens([ChatMessage("user", "hi")])
    long = estimate_tokens([ChatMessage("user", "hi " * 100)])
    assert long > short
    # English runs ~4 characters per token; the estimate assumes 3 (plus the template's glue).
    assert long >= 300 / 4


# ---------------------------------------------------------------------- streaming
def test_a_reply_streams_then_reports_the_prompt_from_usage(fake: FakeOpenAi) -> None:
    usage = {"prompt_tokens": 30, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 24}}
    fake.script(Script(usage=usage))
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    events = list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Paris", " is", " the", " capital", "."]
    assert events[-1] == PromptInfo(prompt_tokens=30, reused_tokens=24, evaluated_tokens=6)
    sent = fake.requests[-1]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["model"] == "fake" and sent["max_tokens"] == 40 and sent["temperature"] == 0.0
    assert sent["messages"][-1] == {"role": "user", "content": "What is the capital of France?"}


def test_the_tokens_log_probabilities_are_asked_for_and_streamed(fake: FakeOpenAi) -> None:
    fake.script(Script(logprobs=(-0.1, -0.2, -0.3, -0.4, -0.5)))
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    deltas = [e for e in llm.generate(ASK, max_tokens=40, cancel=threading.Event()) if isinstance(e, TextDelta)]
    assert [(d.text, d.logprob) for d in deltas] == [
        ("Paris", -0.1), (" is", -0.2), (" the", -0.3), (" capital", -0.4), (".", -0.5)
    ]
    assert fake.requests[-1]["logprobs"] is True and fake.requests[-1]["top_logprobs"] == 1


def test_a_server_that_refuses_log_probabilities_is_asked_without_them(
    fake: FakeOpenAi, caplog: pytest.LogCaptureFixture
) -> None:
    refusal = Script(kind="status", status=400, message="logprobs is not supported by this model")
    fake.script(refusal, Script(), Script())
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    with caplog.at_level(logging.WARNING, logger="voice.llm_openai"):
        for _ in range(2):
            deltas = [e for e in llm.generate(ASK, max_tokens=40, cancel=threading.Event()) if isinstance(e, TextDelta)]
            assert "".join(d.text for d in deltas) == "Paris is the capital."
            assert all(d.logprob is None for d in deltas)
    llm.close()
    assert [("logprobs" in r) for r in fake.requests] == [True, False, False]  # asked again once, then never
    assert "refused log-probabilities (HTTP 400" in caplog.text and "not_sure" in caplog.text


def test_request_logprobs_off_asks_for_none(fake: FakeOpenAi) -> None:
    llm = OpenAiLlm(llm_config(fake.base_url, request_logprobs=False), warm=False)
    list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    assert "logprobs" not in fake.requests[-1] and "top_logprobs" not in fake.requests[-1]


def test_an_error_that_does_not_name_log_probabilities_is_not_retried(fake: FakeOpenAi) -> None:
    fake.script(Script(kind="status", status=400, message="messages is too long"))
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    with pytest.raises(LlmServerError, match=r"answered HTTP 400.*messages is too long"):
        list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    llm.close()
    assert len(fake.requests) == 1 and llm.logprobs


def test_the_server_gets_the_user_text_tidied_and_the_history_keeps_it_as_heard(fake: FakeOpenAi) -> None:
    heard = [ChatMessage("system", "Be brief."), ChatMessage("user", "what is the capital of france.")]
    for tidy, sent in ((True, "What is the capital of france?"), (False, "what is the capital of france.")):
        llm = OpenAiLlm(llm_config(fake.base_url, tidy_user_text=tidy), warm=False)
        list(llm.generate(heard, max_tokens=40, cancel=threading.Event()))
        assert fake.requests[-1]["messages"][-1] == {"role": "user", "content": sent}
    assert heard[-1].content == "what is the capital of france."


def test_without_usage_there_is_no_prompt_report(fake: FakeOpenAi) -> None:
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    events = list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    assert all(isinstance(e, TextDelta) for e in events) and events


def test_the_reply_stops_after_max_reply_sentences(fake: FakeOpenAi) -> None:
    fake.script(Script(tokens=("One.", " Two.", " Three.", " Four.")))
    llm = OpenAiLlm(llm_config(fake.base_url, max_reply_sentences=2), warm=False)
    events = llm.generate(ASK, max_tokens=40, cancel=threading.Event())
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "One. Two."


def test_warm_up_against_a_server_that_is_not_up_only_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "voice.llm_openai"):
        OpenAiLlm(llm_config(f"http://127.0.0.1:{dead_port()}/v1"))  # does not raise
    assert "not ready yet" in caplog.text


def test_a_missing_api_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOICE_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(Exception, match="VOICE_TEST_NO_SUCH_KEY"):
        OpenAiLlm(llm_config("http://127.0.0.1:1/v1", api_key_env="VOICE_TEST_NO_SUCH_KEY"), warm=False)


def test_the_api_key_is_sent_as_a_bearer_token(fake: FakeOpenAi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOICE_TEST_KEY", "sekrit")
    llm = OpenAiLlm(llm_config(fake.base_url, api_key_env="VOICE_TEST_KEY"), warm=False)
    list(llm.generate(ASK, max_tokens=8, cancel=threading.Event()))
    assert fake.headers[-1]["authorization"] == "Bearer sekrit"


# ---------------------------------------------------------------------- failures, one by one
@pytest.mark.parametrize(
    ("script", "message"),
    [
        (Script(kind="status", status=503), "answered HTTP 503.*fake failure 503"),
        (Script(kind="hold"), "sent no first token .*within read_timeout_s=0.5 s"),
        (Script(kind="cut", after=2), "cut the stream after 2 tokens"),
        (Script(kind="interrupted", after=3), "after 3 tokens without a finish_reason.*--interrupt_requests"),
    ],
)
def test_each_failure_raises_a_clear_error(fake: FakeOpenAi, script: Script, message: str) -> None:
    fake.script(script)
    llm = OpenAiLlm(llm_config(fake.base_url, read_timeout_s=0.5), warm=False)
    with pytest.raises(LlmServerError, match=message):
        list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    # The same instance serves the next request.
    assert any(isinstance(e, TextDelta) for e in llm.generate(ASK, max_tokens=40, cancel=threading.Event()))


def test_a_server_that_is_not_up_is_named() -> None:
    url = f"http://127.0.0.1:{dead_port()}/v1"
    llm = OpenAiLlm(llm_config(url), warm=False)
    with pytest.raises(LlmServerError, match=f"cannot reach the LLM server at {url}.*is the server up"):
        list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))


# ---------------------------------------------------------------------- cancellation
def test_interrupt_ends_a_stalled_stream_without_waiting_for_the_server(fake: FakeOpenAi) -> None:
    fake.script(Script(kind="stall", after=2))
    llm = OpenAiLlm(llm_config(fake.base_url, read_timeout_s=60.0), warm=False)
    cancel = threading.Event()
    got: list[str] = []
    two = threading.Event()

    def consume() -> None:
        for ev in llm.generate(ASK, max_tokens=40, cancel=cancel):
            if isinstance(ev, TextDelta):
                got.append(ev.text)
                if len(got) == 2:
                    two.set()

    worker = threading.Thread(target=consume)
    worker.start()
    assert two.wait(10)
    cancel.set()
    llm.interrupt()  # what the runtime's cancel event calls
    worker.join(10)  # the stall only ends when the fake server closes (after the test)
    assert not worker.is_alive()
    assert got == ["Paris", " is"]
    assert fake.disconnected.wait(10)  # the server saw the stream closed
    assert not fake.release.is_set()


# ---------------------------------------------------------------------- buffering
def test_a_buffered_stream_is_warned_about(fake: FakeOpenAi, caplog: pytest.LogCaptureFixture) -> None:
    tokens = tuple(f" w{i}" for i in range(12))
    fake.script(Script(kind="buffered", tokens=tokens, wait_s=0.3))
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    with caplog.at_level(logging.WARNING, "voice.llm_openai"):
        list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    assert "looks buffered" in caplog.text and "X-Accel-Buffering: no" in caplog.text


def test_a_progressive_stream_is_not_warned_about(fake: FakeOpenAi, caplog: pytest.LogCaptureFixture) -> None:
    tokens = tuple(f" w{i}" for i in range(12))
    fake.script(Script(tokens=tokens, gap_s=0.01))
    llm = OpenAiLlm(llm_config(fake.base_url), warm=False)
    with caplog.at_level(logging.WARNING, "voice.llm_openai"):
        list(llm.generate(ASK, max_tokens=40, cancel=threading.Event()))
    assert "looks buffered" not in caplog.text


# ---------------------------------------------------------------------- through a session
SCALE = 0.1 * FAKE_MS


async def test_failures_give_error_events_and_the_session_keeps_serving(fake: FakeOpenAi) -> None:
    section = {"backend": "openai", "base_url": fake.base_url, "model": "fake", "read_timeout_s": 1.0}
    llm = OpenAiLlm(make_config(llm=section).llm, warm=False)
    runtime = tagged_runtime(SCALE, llm=llm)
    # No speculation: a speculative reply that fails is discarded and the turn asks afresh, so whether one
    # started (timing) would decide which script each turn's request gets.
    async with running(runtime, llm=section, turn={"speculate_after_ms": 0}) as srv:
        p = await Probe.connect(srv.url)
        expected = {
            "s503": "answered HTTP 503",
            "hold": "sent no first token",
            "cut": "cut the stream after 2 tokens",
        }
        fake.script(Script(kind="status", status=503), Script(kind="hold"), Script(kind="cut", after=2))
        for tag, message in expected.items():
            report = await p.turn(tagged_speech(tag))
            assert report["outcome"] == "error"
            err = p.errors()[-1]
            assert err["code"] == "internal" and message in err["message"] and fake.base_url in err["message"]
            assert not err["fatal"]
        report = await p.turn(tagged_speech("fine"))  # the same session, the next turn
        assert report["outcome"] == "ok" and report["reply_text"] == "Paris is the capital."
        assert report["llm"]["n_tokens"] == 5 and report["llm"]["spread_ms"] >= 0
        status, _ = await http_get(srv.port, "/health")
        assert status == 200
        await p.close()
    runtime.close()


@pytest.mark.parametrize(("logprob", "reply"), [(-0.1, "Paris is the capital."), (-2.5, "I'm not sure.")])
async def test_the_not_sure_gate_judges_a_remote_model_by_its_log_probabilities(
    fake: FakeOpenAi, logprob: float, reply: str
) -> None:
    section = {"backend": "openai", "base_url": fake.base_url, "model": "fake", "read_timeout_s": 1.0}
    config = make_config(llm=section)
    assert config.llm.not_sure and config.llm.not_sure_reply == "I'm not sure."
    llm = OpenAiLlm(config.llm, warm=False)
    runtime = tagged_runtime(SCALE, llm=llm)
    async with running(runtime, llm=section, turn={"speculate_after_ms": 0}) as srv:
        p = await Probe.connect(srv.url)
        fake.script(Script(logprobs=(logprob,) * 5))
        report = await p.turn(tagged_speech("capital"))
        assert report["outcome"] == "ok" and report["reply_text"] == reply
        assert report["answer_logprob_mean"] == pytest.approx(logprob)
        await p.close()
    runtime.close()


async def test_a_server_that_is_not_up_gives_an_error_event_every_turn() -> None:
    section = {"backend": "openai", "base_url": f"http://127.0.0.1:{dead_port()}/v1", "model": "m"}
    runtime = tagged_runtime(SCALE, llm=OpenAiLlm(make_config(llm=section).llm, warm=False))
    async with running(runtime, llm=section) as srv:
        p = await Probe.connect(srv.url)
        for tag in ("first", "second"):
            report = await p.turn(tagged_speech(tag))
            assert report["outcome"] == "error"
            assert "cannot reach the LLM server" in p.errors()[-1]["message"]
        await p.close()
    runtime.close()


# ---------------------------------------------------------------------- config
@pytest.mark.parametrize(
    ("llm", "message"),
    [
        ({"backend": "vllm"}, "backend must be one of llama, openai"),
        ({"base_url": "127.0.0.1:8000/v1"}, "base_url must start with http:// or https://"),
        ({"read_timeout_s": 0}, "connect_timeout_s and read_timeout_s must be positive"),
        ({"api_key_env": "MY KEY"}, "api_key_env names an environment variable"),
        ({"backend": "openai", "model": ""}, "needs model"),
    ],
)
def test_bad_llm_backend_settings_are_named(llm: dict[str, object], message: str) -> None:
    from voice.config.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        make_config(llm=llm)


def test_the_openai_backend_needs_no_local_model_file() -> None:
    from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, ModelError
    from voice.models.preflight import check_model_files

    if not (DEFAULT_MODELS_ROOT / "stt").is_dir() or not (DEFAULT_MODELS_ROOT / "tts").is_dir():
        pytest.skip("needs the default STT and TTS models in models/ (voice models pull)")
    catalogue = Catalogue.load(DEFAULT_CATALOGUE)
    no_turn = {"end_of_turn_model": ""}
    with pytest.raises(ModelError, match="served-name"):  # in-process: a catalogue name, looked up
        check_model_files(make_config(llm={"model": "served-name"}, turn=no_turn), DEFAULT_MODELS_ROOT, catalogue)
    served = make_config(llm={"backend": "openai", "model": "served-name"}, turn=no_turn)
    assert len(check_model_files(served, DEFAULT_MODELS_ROOT, catalogue)) == 3  # STT, (none), TTS: all fine
