"""An endpointing strategy of ``voice bench pauses``: a name, the config it runs with, and the models it needs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from voice.config.config import Config
from voice.turn.endpoint import TurnScorer

#: ``transcribe(audio) -> text``: the STT the speculative reply would run on a pause's audio.
Transcriber = Callable[[np.ndarray], str]


@dataclasses.dataclass(frozen=True)
class Strategy:
    name: str
    config: Config
    scorer: TurnScorer | None
    transcribe: Transcriber | None = None
    """With ``[turn] text_evidence``: the words of each pause, handed to the endpointer ``text_delay_ms`` of audio
    after the pause (as the speculative reply's transcript reaches it in the server)."""
    text_delay_ms: float = 0.0
    words_end: Callable[[str], float | None] | None = None
    """With ``[turn] words_model``: the probability that a pause's words end the turn."""
