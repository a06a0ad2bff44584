"""An LLM reply's stream, cut into clauses and put through the reply's checks: the one loop every way of answering
shares (the websocket turn, :mod:`voice.turn.pipeline`; Home Assistant's ``handle``, :mod:`voice.wyoming.server`).

Each token is marked on the turn's timer (``llm_start``, then one mark per token), recorded by the
:class:`~voice.conversation.reply_check.CheckedReply` with its log-probability (for ``[llm] not_sure``), and pushed
through the :class:`~voice.turn.sentences.SentenceSplitter`; each clause it completes goes to the check, which queues
it, holds it, or replaces the reply. The stream is closed (which stops the model) as soon as the reply has been
replaced or cut, and at the end, also when the caller is cancelled.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence

from voice.config.config import Config
from voice.conversation.reply_check import CheckedReply
from voice.runtime.model_api import ChatMessage, PromptInfo
from voice.runtime.outputs import LlmStarted, RuntimeLlmEvent
from voice.turn.budget import TurnTimer
from voice.turn.sentences import SentenceSplitter, SplitterConfig


def splitter_for(config: Config) -> SentenceSplitter:
    """A splitter with the first-clause rules of ``[tts]``."""
    return SentenceSplitter(
        SplitterConfig(
            min_first_clause_words=config.tts.min_first_clause_words,
            max_first_chunk_words=config.tts.max_first_chunk_words,
        )
    )


async def check_stream(
    stream: AsyncGenerator[tuple[RuntimeLlmEvent, int], None],
    checked: CheckedReply,
    splitter: SentenceSplitter,
    timer: TurnTimer,
    *,
    token_cap: int | None,
) -> None:
    """Run ``stream`` through ``splitter`` and ``checked`` until it ends or the reply changed, then hand the check
    what the splitter still holds. ``checked.prompt`` is the model's :class:`PromptInfo` once it came.
    ``token_cap``: the reply's token limit (``[llm] max_reply_tokens``); a reply that reached it ends in a half
    sentence, which the splitter drops (None: a reply known without the LLM, never cut)."""
    async with contextlib.aclosing(stream):  # closing it stops the LLM: a reply replaced or cut
        async for ev, t_ns in checked.until_changed(stream):
            if isinstance(ev, LlmStarted):
                timer.mark("llm_start", at_ns=t_ns)
                continue
            if isinstance(ev, PromptInfo):
                checked.prompt = ev
                continue
            timer.token(at_ns=t_ns)
            await checked.token(ev.text, t_ns, ev.logprob)
            for raw in splitter.push(ev.text):
                await checked.push(raw, t_ns)
    cut_short = token_cap is not None and len(checked.tokens) >= token_cap
    await checked.finish(splitter.flush(cut_short=cut_short), timer.clock.now_ns())


def reply_text(checked: CheckedReply, splitter: SentenceSplitter) -> str:
    """The reply as it goes into the history: the clauses said when the check changed it, else the model's text
    without the half sentence the token cap left (it was not said)."""
    said = " ".join(checked.said) if checked.changed else "".join(checked.tokens)
    half = splitter.dropped
    return said.rstrip().removesuffix(half).rstrip() if half else said


async def whole_reply(
    stream: AsyncGenerator[tuple[RuntimeLlmEvent, int], None],
    messages: Sequence[ChatMessage],
    config: Config,
    timer: TurnTimer,
    *,
    typed: bool,
    surely_typed: bool | None = None,
) -> tuple[str, CheckedReply]:
    """The reply to ``messages`` through the reply's checks when nothing is spoken clause by clause (Home
    Assistant's ``handle``, the quality bench's typed mode): the text said and kept in the history, and the check
    (the model's prompt, its confidence). ``typed`` and ``surely_typed``: as :meth:`CheckedReply.of`."""
    checked = CheckedReply.of(messages, config, _keep, typed=typed, surely_typed=surely_typed)
    splitter = splitter_for(config)
    await check_stream(stream, checked, splitter, timer, token_cap=config.llm.max_reply_tokens)
    return reply_text(checked, splitter).strip(), checked


async def _keep(clause: str, ready_ns: int) -> None:
    """Nothing is spoken clause by clause: the check keeps what it let through (``CheckedReply.said``)."""
