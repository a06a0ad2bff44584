"""HeldSink: a speculative turn's frames reach the client only after commit, in order, and never after discard."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from voice.turn.speculation import HeldSink, SpeculationState
from voice.wire.events import ReplyText, ServerEvent


class Recorder:
    """A ReplySink that records what reaches it; ``gate`` makes send_audio wait (a slow socket)."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.dropped: list[int] = []
        self.gate: asyncio.Event | None = None

    async def send_event(self, ev: ServerEvent) -> None:
        assert isinstance(ev, ReplyText)
        self.frames.append(ev.text)

    async def send_audio(self, turn_id: int, pcm: bytes, on_sent: Callable[[], None] | None) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.frames.append(f"{turn_id}:{pcm.decode()}")
        if on_sent is not None:
            on_sent()

    def drop_turn(self, turn_id: int) -> None:
        self.dropped.append(turn_id)


async def test_nothing_reaches_the_client_while_held() -> None:
    target = Recorder()
    sink = HeldSink(target)
    await sink.send_event(ReplyText(1, "e1"))
    await sink.send_audio(1, b"a", None)
    assert target.frames == [] and sink.state is SpeculationState.HELD and sink.held_frames_peak == 2


async def test_commit_hands_on_the_held_frames_in_order_then_goes_live() -> None:
    target = Recorder()
    sent: list[str] = []
    sink = HeldSink(target)
    await sink.send_event(ReplyText(1, "e1"))
    await sink.send_audio(1, b"a", lambda: sent.append("a"))
    await sink.send_event(ReplyText(1, "e2"))
    sink.commit()
    assert sink.committed and target.frames == []  # commit alone sends nothing: flush does
    await sink.flush()
    assert sink.state is SpeculationState.LIVE
    await sink.send_audio(1, b"b", None)
    assert target.frames == ["e1", "1:a", "e2", "1:b"] and sent == ["a"]


async def test_frames_sent_during_the_flush_queue_behind_the_held_ones() -> None:
    target = Recorder()
    target.gate = asyncio.Event()
    sink = HeldSink(target)
    for pcm in (b"a", b"b"):
        await sink.send_audio(1, pcm, None)
    sink.commit()
    flush = asyncio.create_task(sink.flush())
    await asyncio.sleep(0)  # the flush is now blocked on the slow socket with "a"
    await sink.send_audio(1, b"c", None)  # the turn goes on producing meanwhile
    await sink.send_event(ReplyText(1, "done"))
    target.gate.set()
    await flush
    assert target.frames == ["1:a", "1:b", "1:c", "done"]


async def test_discard_drops_everything_held_and_later() -> None:
    target = Recorder()
    sink = HeldSink(target)
    await sink.send_event(ReplyText(1, "e1"))
    await sink.send_audio(1, b"a", None)
    sink.discard()
    await sink.send_audio(1, b"b", None)
    sink.commit()  # too late: a discarded turn stays discarded
    await sink.flush()
    assert target.frames == [] and sink.state is SpeculationState.DISCARDED and not sink.committed


async def test_drop_turn_while_held_removes_only_that_turns_audio() -> None:
    target = Recorder()
    sink = HeldSink(target)
    await sink.send_audio(1, b"a", None)
    await sink.send_event(ReplyText(1, "e1"))
    await sink.send_audio(2, b"b", None)
    sink.drop_turn(1)
    assert target.dropped == []  # nothing of it reached the target, so there is nothing to drop there
    sink.commit()
    await sink.flush()
    sink.drop_turn(2)
    assert target.frames == ["e1", "2:b"] and target.dropped == [2]
