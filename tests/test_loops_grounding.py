from datetime import UTC, datetime

from voice.conversation.grounding import Grounding, note
from voice.conversation.loops import ReplyGuard
from voice.runtime.model_api import ChatMessage


def emitted(pieces: list[str], max_sentences: int) -> str:
    guard = ReplyGuard(max_sentences=max_sentences)
    out = ""
    for p in pieces:
        if guard.stop_before(p):
            break
        out += p
    return out


def test_sentence_cap_ends_on_a_sentence_boundary() -> None:
    pieces = ["One", " is", " 1.5", ".", " Two", " here", "!", " Three", " now", ".", " Four", "."]
    assert emitted(pieces, 2) == "One is 1.5. Two here!"
    assert emitted(pieces, 0) == "".join(pieces)


def test_a_list_counts_its_items_not_its_numbers() -> None:
    recipe = ["1", ".", " Boil", " eggs", ".", "\n\n", "2", ".", " Add", " salt", ".", "\n\n", "3", ".", " Serve", ".",
              "\n\n", "4", ".", " Eat", "."]  # fmt: skip
    assert emitted(recipe, 3) == "1. Boil eggs.\n\n2. Add salt.\n\n3. Serve."  # no dangling "4."
    assert emitted(recipe, 1) == "1. Boil eggs."
    countries = ["Sure", ".", " Here", " are", " some", ":", "\n", "1", ".", " Peru", "\n", "2", ".", " Chile", "\n",
                 "3", ".", " Spain", "\n", "4", ".", " Japan"]  # fmt: skip
    # items without an end mark end at their line break; the line that introduces them does not count
    assert emitted(countries, 3) == "Sure. Here are some:\n1. Peru\n2. Chile"
    assert emitted(["b", ")", " Second", " point", ".", " More", "."], 1) == "b) Second point."


def test_a_loop_ends_at_the_next_sentence_end() -> None:
    pieces = [" I'm glad you're here."] * 16
    out = emitted(pieces, 0)
    assert out.count("glad") == 3
    # without sentence ends the loop is cut at its fourth repetition
    assert emitted([" report on North's"] * 20, 0).count("report") < 6


def test_grounding_note_states_time_zone_and_unknown_location() -> None:
    now = datetime(2026, 12, 3, 16, 5, tzinfo=UTC)
    assert note(now, "") == "[Now: Thursday 3 December 2026, 16:05 (UTC+00:00, UTC). Location: unknown.]"
    assert "Location: Lisbon." in note(now, "Lisbon")


def test_grounding_keeps_earlier_turns_as_they_were_sent() -> None:
    times = iter([datetime(2026, 12, 3, 16, m, tzinfo=UTC) for m in (1, 2, 3)])
    g = Grounding(clock=lambda: next(times))
    sys = ChatMessage("system", "S")
    first = g.apply([sys, ChatMessage("user", "What time is it?")])
    assert first[0] == sys and "16:01" in first[1].content
    second = g.apply([sys, ChatMessage("user", "What time is it?"), ChatMessage("assistant", "16:01"),
                      ChatMessage("user", "And now?")])  # fmt: skip
    assert second[:2] == first  # the cached prefix renders the same
    assert "16:02" in second[3].content
    # the same question as the newest message again gets the time of this turn
    assert "16:03" in g.apply([sys, ChatMessage("user", "What time is it?")])[1].content


def test_preview_renders_like_apply_and_remembers_nothing() -> None:
    now = datetime(2026, 12, 3, 16, 1, tzinfo=UTC)
    g = Grounding(clock=lambda: now)
    turn = [ChatMessage("system", "S"), ChatMessage("user", "Hi")]
    preview = g.preview(turn)
    assert preview == g.apply(turn)  # the tokens counted before the turn are the tokens evaluated
    fresh = Grounding(clock=lambda: now)
    fresh.preview(turn)
    later = [*turn, ChatMessage("assistant", "Hello."), ChatMessage("user", "Bye")]
    assert fresh.apply(later)[1].content == "Hi"  # preview left no note behind for the earlier message
