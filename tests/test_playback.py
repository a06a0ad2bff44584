"""What the user heard of a reply they talked over (voice.serve.playback), without sockets."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from voice.conversation.history import History, heard
from voice.runtime.model_api import ChatMessage
from voice.serve.playback import ClauseRecorder, LastCut, Playback, new_reply
from voice.wire import events

MS = 1_000_000
CLAUSES = (("Here are three ideas.", 0.0), ("First, a walk.", 1500.0), ("Second, a book.", 2600.0))


def test_heard_keeps_the_clauses_that_had_started() -> None:
    assert heard(CLAUSES, 0.0) == ""
    assert heard(CLAUSES, 1.0) == "Here are three ideas."
    assert heard(CLAUSES, 1500.0) == "Here are three ideas."  # the second starts at 1500: not yet
    assert heard(CLAUSES, 1501.0) == "Here are three ideas. First, a walk."
    assert heard(CLAUSES, 99_000.0) == "Here are three ideas. First, a walk. Second, a book."


def conversation(reply_text: str) -> tuple[History, ChatMessage]:
    history = History()
    history.add("user", "Give me ideas.")
    history.add("assistant", reply_text)
    return history, history.messages[-1]


def playback(reply: ChatMessage | None, started_ns: int = 10 * MS, turn_id: int = 7) -> Playback:
    return Playback(turn_id, started_ns, CLAUSES, 3800.0, reply, "" if reply is None else reply.content)


def test_a_cut_keeps_what_was_heard_marked_as_cut_short() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    p = playback(reply)
    assert p.playing(10 * MS + 2000 * MS) and not p.playing(10 * MS + 3800 * MS)
    kept = p.cut(history, 10 * MS + 2000 * MS)
    assert kept is not None and kept.reply is history.messages[-1]
    assert history.messages == [
        ChatMessage("user", "Give me ideas."),
        ChatMessage("assistant", "Here are three ideas. First, a walk. …"),
    ]
    history.add("user", "And the third?")
    assert [m.role for m in history.messages] == ["user", "assistant", "user"]


def test_a_reply_heard_to_its_last_clause_is_left_whole() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    kept = playback(reply).cut(history, 10 * MS + 2700 * MS)
    assert kept is not None and kept.reply is reply
    assert history.messages[-1] is reply


def test_a_reply_heard_not_at_all_leaves_the_history() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    assert playback(reply, started_ns=50 * MS).cut(history, 40 * MS) is None
    assert history.messages == [ChatMessage("user", "Give me ideas.")]


def test_nothing_is_cut_when_the_reply_is_not_in_the_history() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    assert playback(None).cut(history, 10 * MS + 2000 * MS) is None
    other = ChatMessage("assistant", "Here are three ideas. First, a walk. Second, a book.")  # equal, not it
    assert playback(other).cut(history, 10 * MS + 2000 * MS) is None
    assert playback(other).cut(history, 10 * MS + 2700 * MS) is None  # nothing to cut, and not there either
    assert history.messages[-1] is reply


def test_the_cut_finds_the_reply_behind_a_newer_message() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    history.add("user", "Stop.")
    assert playback(reply).cut(history, 10 * MS + 1000 * MS) is not None
    assert [m.content for m in history.messages] == ["Give me ideas.", "Here are three ideas. …", "Stop."]


def test_a_later_cut_that_knows_better_redoes_the_first() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    first = playback(reply).cut_at(history, 2000.0)
    assert first is not None and history.messages[-1].content == "Here are three ideas. First, a walk. …"
    fewer = first.cut_at(history, 900.0)  # the client had played less than the server thought
    assert fewer is not None and [m.content for m in history.messages] == ["Give me ideas.", "Here are three ideas. …"]
    more = fewer.cut_at(history, 3000.0)  # or more: every clause had started, so the reply is whole again
    assert more is not None and history.messages[-1].content == "Here are three ideas. First, a walk. Second, a book."
    assert more.cut_at(history, 0.0) is None and history.messages == [ChatMessage("user", "Give me ideas.")]


def test_a_turn_left_cut_short_is_kept_as_it_was_when_all_of_it_was_heard() -> None:
    # A cancelled turn already ends its reply with " …" (the clauses it had sent): all of them heard keeps that.
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book. …")
    p = playback(reply)
    cut = p.cut_at(history, 1000.0)
    assert cut is not None and history.messages[-1].content == "Here are three ideas. …"
    assert cut.cut_at(history, 2700.0) is not None
    assert history.messages[-1].content == "Here are three ideas. First, a walk. Second, a book. …"


def test_last_cut_redoes_its_cut_from_the_clients_report() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    cuts = LastCut()
    cuts.cut(playback(reply), history, 10 * MS + 2000 * MS)  # the estimate: two clauses had started
    assert history.messages[-1].content == "Here are three ideas. First, a walk. …"
    cuts.report(6, 100.0)  # another turn's report changes nothing
    assert history.messages[-1].content == "Here are three ideas. First, a walk. …"
    cuts.report(7, 1200.0)  # the client had played 1.2 s: one clause
    assert history.messages[-1].content == "Here are three ideas. …"
    history.add("user", "Wait.")
    cuts.report(7, 1700.0)  # a corrected report still finds the reply behind the newer message
    assert [m.content for m in history.messages][1:] == ["Here are three ideas. First, a walk. …", "Wait."]


def test_last_cut_uses_a_report_that_came_before_the_cut() -> None:
    history, reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    cuts = LastCut()
    cuts.report(7, 1600.0)
    cuts.cut(playback(reply), history, 10 * MS + 3000 * MS)  # the estimate would keep all three
    assert history.messages[-1].content == "Here are three ideas. First, a walk. …"
    other_history, other_reply = conversation("Here are three ideas. First, a walk. Second, a book.")
    cuts.cut(playback(other_reply, turn_id=8), other_history, 10 * MS + 1000 * MS)  # no report for turn 8
    assert other_history.messages[-1].content == "Here are three ideas. …"


def add_turn(history: History) -> None:
    history.add("user", "Give me ideas.")
    history.add("assistant", "Here are three ideas.")


def ask_again(history: History) -> None:
    """A turn that asked the user to say it again: nothing goes into the history."""


def announce(history: History) -> None:
    history.add("assistant", "Your timer is done.")  # merged into the reply before it


@pytest.mark.parametrize(
    ("turn", "is_new"), [(add_turn, True), (ask_again, False), (announce, False)], ids=["reply", "ask-again", "merged"]
)
def test_new_reply_is_only_a_message_the_turn_appended(turn: Callable[[History], None], is_new: bool) -> None:
    history = History()
    history.add("user", "What time is it?")
    history.add("assistant", "It's ten past three.")
    before = list(history.messages)
    turn(history)
    reply = new_reply(before, history.messages)
    assert (reply is history.messages[-1]) if is_new else reply is None


def test_new_reply_of_a_first_turn() -> None:
    history = History()
    add_turn(history)
    assert new_reply([], history.messages) is history.messages[-1]
    assert new_reply([], []) is None


class ListSink:
    def __init__(self) -> None:
        self.sent: list[object] = []
        self.dropped: list[int] = []

    async def send_event(self, ev: events.ServerEvent) -> None:
        self.sent.append(ev)

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        self.sent.append(len(pcm))

    def drop_turn(self, turn_id: int) -> None:
        self.dropped.append(turn_id)


async def test_the_recorder_notes_where_each_clause_starts_and_passes_everything_on() -> None:
    sink = ListSink()
    rec = ClauseRecorder(sink, 16_000)
    first, second = events.ReplyText(3, "One."), events.ReplyText(3, "Two.")
    await rec.send_event(events.AudioStart(3, 16_000, 40))
    await rec.send_event(first)
    for _ in range(3):
        await rec.send_audio(3, bytes(1280), None)  # 40 ms of s16le at 16 kHz
    await rec.send_event(second)
    await rec.send_audio(3, bytes(640), None)
    rec.drop_turn(3)
    assert rec.clauses == [("One.", 0.0), ("Two.", 120.0)]
    assert rec.audio_ms == pytest.approx(140.0)
    assert sink.sent[1] is first and sink.sent[5] is second and len(sink.sent) == 7
    assert sink.dropped == [3]
