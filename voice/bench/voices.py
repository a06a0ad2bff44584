"""Voices that speak the quality set's questions: synthesizers unlike the reply voice, so the STT is not just
hearing the assistant's own TTS.

The issue asked for Piper speakers and espeak-ng. The catalogue has one Piper voice (joe-medium, the reply
voice) and PyPI carries no other, so two Debian synthesizers stand in:

* **espeak-ng** (formant synthesis): robotic, and hard for Whisper (tiny.en: normalized WER ~0.15 on the set);
* **flite** (CMU's statistical parametric voices ``slt``, ``rms``, ``awb``): smoother, closer to recorded
  speech (tiny.en: WER 0.06-0.10 on the set, against 0.037 on the human recordings of ``../shared/speech``).

A voice is written ``<engine>:<name>``, for example ``espeak-ng:en-gb+f3`` or ``flite:slt``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.audio import load_audio
from voice.bench.clips import BenchError

RATE_HZ = 16_000
#: Words per minute for espeak-ng (its default is 175; 160 is nearer conversational speech).
ESPEAK_WPM = 160
ENGINES = ("espeak-ng", "flite")
#: espeak-ng voices that took turns alone until 2026-12-04 (an American man, a British woman, an American variant).
ESPEAK_VOICES = ("espeak-ng:en-us", "espeak-ng:en-gb+f3", "espeak-ng:en-us+m7")
#: flite's statistical voices (CMU ARCTIC: an American woman, an American man, a Scottish man).
FLITE_VOICES = ("flite:slt", "flite:rms", "flite:awb")
#: The default: the two kinds of synthesis, alternating item by item.
DEFAULT_VOICES = tuple(v for pair in zip(ESPEAK_VOICES, FLITE_VOICES, strict=True) for v in pair)


@dataclass(frozen=True)
class Voice:
    engine: str
    """``espeak-ng`` or ``flite``."""
    name: str
    """The engine's own voice name (``espeak-ng --voices``, ``flite -lv``)."""

    def __str__(self) -> str:
        return f"{self.engine}:{self.name}"


def parse_voices(spec: str | Sequence[str]) -> tuple[Voice, ...]:
    """``"espeak-ng:en-us,flite:slt"`` (or a sequence of such names) as voices; a clear error otherwise."""
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not names:
        raise BenchError("--voices: no voice given (e.g. espeak-ng:en-us,flite:slt)")
    out: list[Voice] = []
    for name in names:
        engine, sep, voice = name.partition(":")
        if not sep or not voice or engine not in ENGINES:
            raise BenchError(f"voice {name!r}: write it as <engine>:<voice>, engine one of {', '.join(ENGINES)}")
        out.append(Voice(engine, voice))
    return tuple(out)


def synthesize(voice: Voice, text: str, folder: Path, name: str) -> np.ndarray:
    """``text`` spoken by ``voice``: float32 mono at 16 kHz (the WAV is written to ``folder/name.wav``)."""
    return load_audio(write_wav(voice, text, folder / f"{name}.wav"), RATE_HZ)


def write_wav(voice: Voice, text: str, path: Path, espeak_wpm: int = ESPEAK_WPM) -> Path:
    """Write ``text`` spoken by ``voice`` to the WAV file ``path`` (the synthesizer's own rate); returns ``path``.
    A missing synthesizer, an unknown voice or no audio is a :class:`BenchError` that names it."""
    exe = shutil.which(voice.engine)
    if exe is None:
        raise BenchError(f"{voice.engine} is not installed (Debian package {voice.engine}; ./dev setup installs it)")
    if voice.engine == "flite":
        if voice.name not in flite_voices(exe):
            raise BenchError(f"flite has no voice {voice.name!r} (it has: {', '.join(flite_voices(exe))})")
        cmd = [exe, "-voice", voice.name, "-t", text, "-o", str(path)]
    else:
        cmd = [exe, "-v", voice.name, "-s", str(espeak_wpm), "-w", str(path), text]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 or not path.is_file() or path.stat().st_size <= 44:
        raise BenchError(f"{voice} could not speak {text!r}: {done.stderr.strip() or 'no audio written'}")
    return path


_FLITE_VOICES: dict[str, tuple[str, ...]] = {}


def flite_voices(exe: str) -> tuple[str, ...]:
    """The voices compiled into this flite (``flite -lv``: "Voices available: kal awb …")."""
    if exe not in _FLITE_VOICES:
        listed = subprocess.run([exe, "-lv"], capture_output=True, text=True, check=False).stdout
        _FLITE_VOICES[exe] = tuple(listed.partition(":")[2].split())
    return _FLITE_VOICES[exe]
