import pytest

from voice.conversation.history import ContextTooSmallError, History, fit_prompt
from voice.runtime.fakes import render_words
from voice.runtime.model_api import ChatMessage

SYSTEM = ChatMessage("system", "be brief")


def count(messages) -> int:  # type: ignore[no-untyped-def]
    return len(render_words(messages))


def test_merge_same_role_and_skip_empty() -> None:
    h = History()
    h.add("user", "hello")
    h.add("user", "again")
    h.add("assistant", "  ")
    assert h.messages == [ChatMessage("user", "hello again")]


def test_no_trim_when_it_fits() -> None:
    h = History()
    h.add("user", "one two three")
    prompt, dropped = fit_prompt(SYSTEM, h, count, n_ctx=100, reply_tokens=20)
    assert dropped == 0 and prompt == [SYSTEM, ChatMessage("user", "one two three")]


def test_long_conversation_is_trimmed_to_low_water_and_never_overflows() -> None:
    h = History()
    n_ctx, reply = 200, 40
    drops = []
    for i in range(60):
        h.add("user", f"question {i} " + "word " * 10)
        prompt, dropped = fit_prompt(SYSTEM, h, count, n_ctx=n_ctx, reply_tokens=reply)
        drops.append(dropped)
        assert count(prompt) <= n_ctx - reply
        assert prompt[0] == SYSTEM and prompt[-1].content.startswith(f"question {i} ")
        assert prompt[1].role == "user"
        h.add("assistant", "answer " * 8)
    # trimming goes down to half the window, so it happens rarely, not on every turn
    assert sum(1 for d in drops if d) < 20
    assert any(d >= 4 for d in drops)


def test_context_too_small() -> None:
    h = History()
    h.add("user", "word " * 100)
    with pytest.raises(ContextTooSmallError, match="raise \\[llm\\] n_ctx"):
        fit_prompt(SYSTEM, h, count, n_ctx=64, reply_tokens=16)
