"""The per-conversation KV cache: which state a prompt starts from, redundancy, LRU eviction and what it costs,
on the cache alone and through the data-driven FakeLlm (which keeps states like the real LLM)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.conftest import RuntimeFactory, make_config
from tests.test_turn import UTT, ListSink
from voice.clock import FakeClock
from voice.conversation.history import History
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import Delay, FakeLlm, FakeStt
from voice.runtime.kvcache import MIN_RESTORE_GAIN_TOKENS, REDUNDANT_TAIL_TOKENS, KvCache, common_prefix
from voice.runtime.model_api import ChatMessage, PromptInfo, TextDelta
from voice.serve.metrics import Metrics
from voice.turn.budget import TurnTimer
from voice.turn.pipeline import run_turn
from voice.wire.report import TurnReport


def seq(start: int, n: int) -> list[int]:
    return list(range(start, start + n))


SYSTEM = seq(0, 50)


def test_common_prefix() -> None:
    a = np.array([1, 2, 3, 4])
    assert common_prefix(a, np.array([1, 2, 9])) == 2
    assert common_prefix(a, np.array([1, 2])) == 2
    assert common_prefix(a, np.array([], dtype=np.int64)) == 0
    assert common_prefix(a, a) == 4


def test_plan_restores_the_state_holding_most_of_the_prompt() -> None:
    kv: KvCache[str] = KvCache(10_000)
    a = SYSTEM + seq(100, 40)
    b = SYSTEM + seq(200, 40)
    kv.put(a, "A", 100)
    kv.put(b, "B", 100)
    prompt = a + seq(300, 10)
    # The live context holds B: only the system prompt is shared with the new prompt.
    plan = kv.plan(prompt, live_tokens=len(SYSTEM))
    assert plan.restore == tuple(a) and kv.get(tuple(a)) == "A"
    assert plan.cached_tokens == len(a) and plan.reevaluated_tokens == 0
    # The live context already holds it (or nearly): nothing to restore.
    assert kv.plan(prompt, live_tokens=len(a)).restore is None
    assert kv.plan(prompt, live_tokens=len(a) - MIN_RESTORE_GAIN_TOKENS + 1).restore is None


def test_a_newer_state_of_the_same_conversation_replaces_the_older_one() -> None:
    kv: KvCache[str] = KvCache(10_000)
    short = SYSTEM + seq(700, 5)  # another conversation, short: kept although it adds only 5 tokens
    kv.put(short, "short", 10)
    turn1 = SYSTEM + seq(100, 40)
    kv.put(turn1, "1", 100)
    # The next turn's state: the previous one minus a few re-rendered reply tokens, then more.
    turn2 = turn1[:-REDUNDANT_TAIL_TOKENS] + seq(500, 30)
    kv.plan(turn2[:-5], live_tokens=len(turn1) - REDUNDANT_TAIL_TOKENS)
    kv.put(turn2, "2", 150, common_tokens=len(SYSTEM))
    other = SYSTEM + seq(200, 40)
    kv.put(other, "other", 100)
    extended = [*other, 1, 2, 3]  # a state that is a prefix of a new one is always dropped
    kv.put(extended, "other+", 103)
    s = kv.stats()
    assert s.states == 3 and s.bytes_in_use == 263 and s.saves == 5
    assert kv.plan([*short, 9], live_tokens=len(SYSTEM)).restore is None  # gain 5 < MIN_RESTORE_GAIN_TOKENS
    # The live context (saved last) is another short conversation: sharing only the system prompt with the
    # next one, it is not taken for an older state of it.
    kv.put(SYSTEM + seq(750, 5), "short2", 5)
    kv.plan(SYSTEM + seq(800, 20), live_tokens=len(SYSTEM))
    kv.put(SYSTEM + seq(800, 30), "new", 30, common_tokens=len(SYSTEM))
    assert kv.stats().states == 5


def test_full_cache_evicts_the_least_recently_used_and_reports_the_cost() -> None:
    kv: KvCache[str] = KvCache(250)
    a, b, c = (SYSTEM + seq(k, 40) for k in (100, 200, 300))
    kv.put(a, "A", 100)
    kv.put(b, "B", 100)
    kv.plan([*a, 7], live_tokens=len(SYSTEM))  # A was used: B is now the oldest
    assert kv.put(c, "C", 100) == 1
    s = kv.stats()
    assert s.evictions == 1 and s.states == 2 and s.bytes_in_use == 200
    plan = kv.plan(b + seq(400, 5), live_tokens=len(SYSTEM))
    # B's state is gone: the prompt starts after the system prompt, and its 40 tokens are evaluated again.
    assert plan.restore is None and plan.cached_tokens == len(SYSTEM)
    assert plan.reevaluated_tokens == 40 and kv.stats().reevaluated_tokens == 40
    # The eviction is charged once, to the turn that paid for it.
    assert kv.plan(b + seq(400, 5), live_tokens=len(SYSTEM)).reevaluated_tokens == 0


def test_state_larger_than_the_bound_is_not_kept_and_zero_disables() -> None:
    kv: KvCache[str] = KvCache(50)
    assert kv.put(SYSTEM, "big", 51) == 1 and kv.stats().states == 0
    off: KvCache[str] = KvCache(0)
    assert off.put(SYSTEM, "x", 1) == 0 and off.stats().states == 0
    assert off.plan(SYSTEM, live_tokens=3).cached_tokens == 3
    with pytest.raises(ValueError, match="limit_bytes"):
        KvCache(-1)


# ------------------------------------------------------------------ through the FakeLlm

SYSTEM_MSG = ChatMessage("system", "You are a helpful voice assistant. Answer briefly.")


def say(llm: FakeLlm, history: list[ChatMessage], text: str) -> PromptInfo:
    history.append(ChatMessage("user", text))
    events = list(llm.generate([SYSTEM_MSG, *history], max_tokens=20, cancel=threading.Event()))
    info = events[0]
    assert isinstance(info, PromptInfo)
    history.append(ChatMessage("assistant", "".join(e.text for e in events if isinstance(e, TextDelta))))
    return info


def interleave(llm: FakeLlm) -> tuple[PromptInfo, PromptInfo]:
    a: list[ChatMessage] = []
    b: list[ChatMessage] = []
    say(llm, a, "what is the capital of france and why is it so famous")
    say(llm, b, "tell me a joke about cats and dogs living together")
    second_a = say(llm, a, "and of germany")
    second_b = say(llm, b, "another one")
    return second_a, second_b


def test_interleaved_sessions_evaluate_only_their_new_tokens() -> None:
    on = FakeLlm(replies=("Paris is the capital.",), kv_cache_bytes=1_000_000)
    off = FakeLlm(replies=("Paris is the capital.",))
    a_on, b_on = interleave(on)
    a_off, _b_off = interleave(off)
    # The new tokens: "<end> <user> and of germany <end> <assistant>" after the saved reply.
    assert a_on.evaluated_tokens == len(["<user>", "and", "of", "germany", "<end>", "<assistant>"]) + 1
    assert b_on.evaluated_tokens == len(["<user>", "another", "one", "<end>", "<assistant>"]) + 1
    assert a_off.evaluated_tokens > a_on.evaluated_tokens + 10
    assert a_on.kv_reevaluated_tokens == 0 and a_on.kv_cache_bytes > 0
    stats = on.kv_stats()
    assert stats is not None and stats.restores == 2 and stats.evictions == 0
    assert off.kv_stats() is None


def test_a_tiny_bound_evicts_and_the_next_turn_reports_it() -> None:
    # One conversation's state is ~20 tokens: room for one.
    llm = FakeLlm(replies=("Paris is the capital.",), kv_cache_bytes=30, kv_bytes_per_token=1)
    a_second, _b_second = interleave(llm)
    stats = llm.kv_stats()
    assert stats is not None and stats.evictions >= 1
    assert a_second.kv_reevaluated_tokens > 0
    assert a_second.evaluated_tokens >= a_second.kv_reevaluated_tokens
    assert stats.bytes_in_use <= 30


def test_metrics_show_the_kv_cache() -> None:
    llm = FakeLlm(kv_cache_bytes=30, kv_bytes_per_token=1)
    interleave(llm)
    m = Metrics()
    assert "voice_kv" not in m.render()
    m.kv = llm.kv_stats()
    text = m.render()
    assert "voice_kv_cache_limit_bytes 30" in text
    evictions = next(line for line in text.splitlines() if line.startswith("voice_kv_evictions_total "))
    assert int(evictions.split()[1]) >= 1
    assert "voice_kv_reevaluated_tokens_total" in text


async def test_turn_reports_and_runtime_show_the_kv_states(
    clock: FakeClock, fake_runtime: RuntimeFactory
) -> None:
    delay = Delay(clock)
    # Room for one conversation's state (the system prompt and a turn, ~85 tokens) but not two: the sessions
    # take turns (A says the first text, B the second), so each evicts the other.
    llm = FakeLlm(replies=("Paris is the capital.",), delay=delay, kv_cache_bytes=120, kv_bytes_per_token=1)
    texts = ("what is the capital of france and why is it famous", "tell me a joke about cats and dogs")
    stt = FakeStt(texts=texts, latency_ms=10.0, delay=delay)
    runtime = fake_runtime(clock=clock, llm=SkillsLlm(llm), stt=stt)
    config = make_config(tts={"min_first_clause_words": 1})
    histories = {"A": History(), "B": History()}
    reports: dict[str, list[TurnReport]] = {"A": [], "B": []}
    for turn_id in (1, 2):
        for s in ("A", "B"):
            timer = TurnTimer(clock, s, turn_id)
            timer.mark("speech_end")
            timer.mark("endpoint")
            report = await run_turn(runtime, config, histories[s], UTT, timer, ListSink())
            reports[s].append(report)
    second = reports["A"][1]
    assert second.kv_evicted and second.kv_reevaluated_tokens > 0
    assert reports["B"][1].kv_evicted  # A's turn, saved, evicted B's state in turn
    assert second.prompt_tokens_evaluated >= second.kv_reevaluated_tokens
    assert not reports["A"][0].kv_evicted
    stats = runtime.kv_stats()  # through the skills layer, as the server's /metrics reads it
    assert stats is not None and stats.evictions >= 2 and stats.limit_bytes == 120 and stats.bytes_in_use <= 120
    assert second.to_dict()["kv_evicted"] is True
