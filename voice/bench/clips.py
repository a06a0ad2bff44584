"""A folder of recordings to speak into the server: any WAV/FLAC/OGG, any rate, mono or stereo, with an
optional ``transcripts.tsv`` (``filename<TAB>text``, no header) for word error rates."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.audio import AUDIO_SUFFIXES, AudioFileError, EnergyAnalysis, analyse_speech, load_audio
from voice.bench.machine import REPO_ROOT
from voice.client import Utterance

CLIENT_RATE_HZ = 16_000
TRANSCRIPTS_NAME = "transcripts.tsv"
MIN_SEGMENT_MS = 100.0
"""Voiced stretches shorter than this are clicks or taps, not the end of speech."""
BRIDGE_MS = 150.0
SPEECH_END_METHOD = EnergyAnalysis.METHOD + EnergyAnalysis.BURST_METHOD.format(
    bridge=BRIDGE_MS, min_segment=MIN_SEGMENT_MS
)


class BenchError(Exception):
    """A problem with the benchmark's inputs; ``str()`` is a message for the user."""


def default_speech_dir() -> Path:
    """``$VOICE_SPEECH_DIR``, else ``../shared/speech`` next to the repository."""
    env = os.environ.get("VOICE_SPEECH_DIR")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "speech"


@dataclass(frozen=True)
class Clip:
    name: str
    """File name inside the folder."""
    path: Path
    audio: np.ndarray
    """float32 mono at ``rate_hz`` (resampled from the file)."""
    rate_hz: int
    analysis: EnergyAnalysis
    reference: str | None
    """The transcript from ``transcripts.tsv``, if any."""
    file_rate_hz: int
    file_channels: int

    @property
    def duration_s(self) -> float:
        return len(self.audio) / self.rate_hz

    @property
    def speech_end_s(self) -> float:
        return self.analysis.last_voiced_sample / self.rate_hz

    def utterance(self) -> Utterance:
        return Utterance(self.audio, self.rate_hz, self.analysis.last_voiced_sample)

    def describe(self) -> dict[str, object]:
        return {
            "clip": self.name,
            "duration_s": round(self.duration_s, 3),
            "speech_start_s": round(self.analysis.first_voiced_sample / self.rate_hz, 3),
            "speech_end_s": round(self.speech_end_s, 3),
            "file_rate_hz": self.file_rate_hz,
            "file_channels": self.file_channels,
            "noise_floor_db": self.analysis.noise_floor_db,
            "threshold_db": self.analysis.threshold_db,
            "ignored_bursts": self.analysis.ignored_bursts,
            "reference": self.reference,
        }


def read_transcripts(path: Path) -> dict[str, str]:
    """``filename<TAB>text`` per line; blank lines and ``#`` comments are skipped."""
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" not in line:
            raise BenchError(f"{path}:{n}: expected 'filename<TAB>text', got {line[:60]!r}")
        name, text = line.split("\t", 1)
        out[name.strip()] = text.strip()
    return out


def _reference(transcripts: dict[str, str], path: Path) -> str | None:
    return transcripts.get(path.name, transcripts.get(path.stem))


def load_clips(
    folder: Path, names: Sequence[str] | None = None, *, rate_hz: int = CLIENT_RATE_HZ
) -> tuple[list[Clip], list[str]]:
    """The readable clips of ``folder`` (sorted by name) and warnings about what was skipped.

    Raises :class:`BenchError` if the folder does not exist or holds no usable recording."""
    import soundfile

    if not folder.is_dir():
        raise BenchError(
            f"speech folder {folder} does not exist; pass --speech DIR (a folder of WAV/FLAC recordings) "
            "or set VOICE_SPEECH_DIR"
        )
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    if names:
        wanted = set(names)
        files = [p for p in files if p.name in wanted or p.stem in wanted]
        missing = wanted - {p.name for p in files} - {p.stem for p in files}
        if missing:
            raise BenchError(f"no such clip(s) in {folder}: {', '.join(sorted(missing))}")
    if not files:
        raise BenchError(
            f"no audio files ({', '.join(AUDIO_SUFFIXES)}) in {folder}; record some (see benchmarks/README.md)"
        )
    tsv = folder / TRANSCRIPTS_NAME
    transcripts = read_transcripts(tsv) if tsv.is_file() else {}
    warnings: list[str] = []
    clips: list[Clip] = []
    for path in files:
        try:
            info = soundfile.info(str(path))
            audio = load_audio(path, rate_hz)
            analysis = analyse_speech(audio, rate_hz, min_segment_ms=MIN_SEGMENT_MS, bridge_ms=BRIDGE_MS)
        except AudioFileError as e:
            warnings.append(f"skipped {path.name}: {e}")
            continue
        clips.append(
            Clip(
                name=path.name,
                path=path,
                audio=audio,
                rate_hz=rate_hz,
                analysis=analysis,
                reference=_reference(transcripts, path),
                file_rate_hz=int(info.samplerate),
                file_channels=int(info.channels),
            )
        )
    known = {p.name for p in files} | {p.stem for p in files}
    stray = sorted(k for k in transcripts if k not in known)
    if stray and not names:
        warnings.append(f"{TRANSCRIPTS_NAME} names files that are not in the folder: {', '.join(stray)}")
    if not clips:
        raise BenchError(
            f"none of the {len(files)} audio file(s) in {folder} is usable: " + "; ".join(warnings)
        )
    return clips, warnings
