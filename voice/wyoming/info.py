"""The ``info`` answer to ``describe``: one service with ``asr``, ``tts`` and ``handle`` programs, so
Home Assistant creates speech-to-text, text-to-speech and conversation entities from one host:port.

Home Assistant only offers programs and models marked ``installed``, and streams text to TTS only if
``supports_synthesize_streaming`` is set. ``supports_handled_streaming`` stays off: Home Assistant reads
one ``handled`` per request and ignores ``handled-start``/``-chunk``/``-stop``.
"""

from __future__ import annotations

from wyoming.event import Event
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
)

from voice.config.config import Config

PROGRAM = "voice"
OURS = Attribution(name="voice (local voice assistant)", url="")
WHISPER = Attribution(name="faster-whisper (OpenAI Whisper)", url="https://github.com/SYSTRAN/faster-whisper")
PIPER = Attribution(name="Piper", url="https://github.com/OHF-Voice/piper1-gpl")
LLAMA = Attribution(name="llama.cpp", url="https://github.com/ggml-org/llama.cpp")


def build_info(config: Config) -> Info:
    languages = [config.stt.language or "en"]
    asr = AsrProgram(
        name=PROGRAM,
        attribution=OURS,
        installed=True,
        description="voice: speech-to-text",
        version=None,
        models=[
            AsrModel(
                name=config.stt.model,
                attribution=WHISPER,
                installed=True,
                description=f"Whisper {config.stt.model}",
                version=None,
                languages=languages,
            )
        ],
        supports_transcript_streaming=False,
    )
    tts = TtsProgram(
        name=PROGRAM,
        attribution=OURS,
        installed=True,
        description="voice: text-to-speech",
        version=None,
        voices=[
            TtsVoice(
                name=config.tts.model,
                attribution=PIPER,
                installed=True,
                description=f"Piper voice {config.tts.model}",
                version=None,
                languages=languages,
            )
        ],
        supports_synthesize_streaming=True,
    )
    handle = HandleProgram(
        name=PROGRAM,
        attribution=OURS,
        installed=True,
        description="voice: a local LLM that remembers each conversation",
        version=None,
        models=[
            HandleModel(
                name=config.llm.model,
                attribution=LLAMA,
                installed=True,
                description=f"LLM {config.llm.model}",
                version=None,
                languages=languages,
            )
        ],
        supports_handled_streaming=False,
        supports_home_control=False,
    )
    return Info(asr=[asr], tts=[tts], handle=[handle])


def info_event(config: Config) -> Event:
    return build_info(config).event()
