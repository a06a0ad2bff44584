"""A folder of recordings to speak into the server: any WAV/FLAC/OGG, any rate, mono or stereo, with an
optional ``transcripts.tsv`` (``filename<TAB>text``, no header) for word error rates."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.audio import AUDIO_SUFFIXES, AudioFileError, EnergyAnalysis, analyse_speech, load_audio
from voice.bench.e2e.meta import ClipInfo, SpeechEndEvidence
from voice.bench.machine import REPO_ROOT
from voice.client import SpokenClip
from voice.turn.endpoint import level_db
from voice.turn.speech_end import SpeechEnd, find_speech_end

CLIENT_RATE_HZ = 16_000
TRANSCRIPTS_NAME = "transcripts.tsv"
MIN_SEGMENT_MS = 100.0
"""Voiced stretches shorter than this are clicks or taps, not the end of speech."""
BRIDGE_MS = 150.0
SpeechProbabilities = Callable[[np.ndarray], np.ndarray]
"""A speech detector over a whole 16 kHz clip: one probability per 512-sample frame."""


ROOM_MARGIN_MS = 100.0
"""Room tone is taken at least this far from the speech."""
ROOM_WINDOW_MS = 20.0
ROOM_TRANSIENT_DB = 3.0
"""A window this much louder than the median of the clip's non-speech windows holds a chime, click or breath."""
MIN_ROOM_MS = 100.0
CROSSFADE_MS = 10.0


def room_tone(audio: np.ndarray, rate_hz: int, speech_start: int, speech_end: int) -> np.ndarray | None:
    """The clip's own background, to go on after it as a room's noise goes on after the speaker stops (instead
    of a cliff to digital silence, which a noisy clip never has and which would end its noise, not its speech).

    From the audio before the speech onset and after its end (``ROOM_MARGIN_MS`` away), in ``ROOM_WINDOW_MS``
    windows: the longest run of windows no louder than ``ROOM_TRANSIENT_DB`` over the median of them all (so no
    chime, click or breath), made a seamless loop by a ``CROSSFADE_MS`` crossfade of its end into its start.
    None when no run holds ``MIN_ROOM_MS``, or it is digital silence: the clip is followed by silence."""
    margin, win = round(rate_hz * ROOM_MARGIN_MS / 1000), round(rate_hz * ROOM_WINDOW_MS / 1000)
    fade = round(rate_hz * CROSSFADE_MS / 1000)
    windows: list[tuple[np.ndarray, float] | None] = []  # None: a break between the two parts
    for part in (audio[: max(0, speech_start - margin)], audio[speech_end + margin :]):
        chunks = [part[i * win : (i + 1) * win] for i in range(len(part) // win)]
        windows += [(w, level_db(w)) for w in chunks] + [None]
    levels = [w[1] for w in windows if w is not None]
    if not levels:
        return None
    limit = float(np.median(levels)) + ROOM_TRANSIENT_DB
    best: list[np.ndarray] = []
    current: list[np.ndarray] = []
    for w in windows:
        current = [*current, w[0]] if w is not None and w[1] <= limit else []
        best = current if len(current) > len(best) else best
    part = np.concatenate(best) if best else np.zeros(0, np.float32)
    if len(part) < round(rate_hz * MIN_ROOM_MS / 1000) + fade or not np.any(part):
        return None
    loop = part[: len(part) - fade].astype(np.float32, copy=True)
    ramp = np.linspace(0.0, 1.0, fade, endpoint=False, dtype=np.float32)
    loop[:fade] = part[len(part) - fade :] * (1 - ramp) + part[:fade] * ramp
    return loop


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
    """The whole-clip energy analysis (speech start; the speech end when the detector finds none)."""
    speech_end: SpeechEnd
    """The reference speech end (:mod:`voice.turn.speech_end`), or the annotated one."""
    reference: str | None
    """The transcript from ``transcripts.tsv``, if any."""
    file_rate_hz: int
    file_channels: int

    @property
    def duration_s(self) -> float:
        return len(self.audio) / self.rate_hz

    @property
    def speech_end_s(self) -> float:
        return self.speech_end.end_s

    def utterance(self) -> SpokenClip:
        end = round(self.speech_end.end_s * self.rate_hz)
        tone = room_tone(self.audio, self.rate_hz, self.analysis.first_voiced_sample, end)
        return SpokenClip(self.audio, self.rate_hz, end, tone)

    def describe(self) -> ClipInfo:
        """What was found in the clip, for a result (times rounded to the millisecond)."""
        evidence = SpeechEndEvidence(
            speech_end_vad_s=self.speech_end.vad_end_s,
            speech_end_energy_s=round(self.analysis.last_voiced_sample / self.rate_hz, 3),
            speech_end_annotated=self.speech_end.overridden,
            speech_end_ambiguous=self.speech_end.ambiguous,
            background_db=self.speech_end.background_db,
        )
        return ClipInfo(
            clip=self.name,
            duration_s=round(self.duration_s, 3),
            speech_start_s=round(self.analysis.first_voiced_sample / self.rate_hz, 3),
            speech_end_s=round(self.speech_end_s, 3),
            evidence=evidence,
            file_rate_hz=self.file_rate_hz,
            file_channels=self.file_channels,
            noise_floor_db=self.analysis.noise_floor_db,
            threshold_db=self.analysis.threshold_db,
            ignored_bursts=self.analysis.ignored_bursts,
            reference=self.reference,
        )


def read_transcripts(path: Path) -> dict[str, str]:
    """``filename<TAB>text[<TAB>speech_end_s]`` per line; blank lines and ``#`` comments are skipped."""
    return {name: text for name, (text, _end) in read_annotations(path).items()}


def read_annotations(path: Path) -> dict[str, tuple[str, float | None]]:
    """``filename<TAB>text[<TAB>speech_end_s]`` per line: the transcript and, optionally, the speech end in
    seconds from the clip's start, which overrides the automatic reference."""
    out: dict[str, tuple[str, float | None]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" not in line:
            raise BenchError(f"{path}:{n}: expected 'filename<TAB>text[<TAB>speech_end_s]', got {line[:60]!r}")
        name, text, *rest = line.split("\t")
        end: float | None = None
        if rest and rest[0].strip():
            try:
                end = float(rest[0])
            except ValueError:
                raise BenchError(
                    f"{path}:{n}: the third column must be the speech end in seconds, got {rest[0]!r}"
                ) from None
            if end <= 0:
                raise BenchError(f"{path}:{n}: speech end must be > 0 s, got {end}")
        out[name.strip()] = (text.strip(), end)
    return out


def silero_probabilities() -> SpeechProbabilities:
    """Silero VAD over a whole clip (loaded once, on first use)."""
    from voice.backends.vad_silero import SileroVad, clip_probabilities

    vad = SileroVad()
    return lambda audio: clip_probabilities(audio, vad)


def _annotation(
    annotations: dict[str, tuple[str, float | None]], path: Path
) -> tuple[str | None, float | None]:
    return annotations.get(path.name, annotations.get(path.stem, (None, None)))


def reference_speech_end(
    audio: np.ndarray,
    rate_hz: int,
    analysis: EnergyAnalysis,
    probabilities: SpeechProbabilities,
    annotated_s: float | None = None,
) -> SpeechEnd:
    """The annotated speech end if given (it must lie inside the clip), else the automatic reference."""
    auto = find_speech_end(audio, rate_hz, probabilities(audio), analysis)
    if annotated_s is None:
        return auto
    if annotated_s > len(audio) / rate_hz:
        raise AudioFileError(f"annotated speech end {annotated_s} s is after the clip's end")
    return dataclasses.replace(auto, end_s=annotated_s, ambiguous=None, overridden=True)


def load_clips(
    folder: Path,
    names: Sequence[str] | None = None,
    *,
    rate_hz: int = CLIENT_RATE_HZ,
    speech_probabilities: SpeechProbabilities | None = None,
) -> tuple[list[Clip], list[str]]:
    """The readable clips of ``folder`` (sorted by name) and warnings about what was skipped.

    ``speech_probabilities``: the speech detector for the reference speech end (default: Silero VAD).
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
            f"no audio files ({', '.join(AUDIO_SUFFIXES)}) in {folder}; record some (see docs/measuring.md)"
        )
    tsv = folder / TRANSCRIPTS_NAME
    annotations = read_annotations(tsv) if tsv.is_file() else {}
    probabilities = speech_probabilities or silero_probabilities()
    warnings: list[str] = []
    clips: list[Clip] = []
    for path in files:
        try:
            info = soundfile.info(str(path))
            audio = load_audio(path, rate_hz)
            analysis = analyse_speech(audio, rate_hz, min_segment_ms=MIN_SEGMENT_MS, bridge_ms=BRIDGE_MS)
            text, annotated_s = _annotation(annotations, path)
            speech_end = reference_speech_end(audio, rate_hz, analysis, probabilities, annotated_s)
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
                speech_end=speech_end,
                reference=text,
                file_rate_hz=int(info.samplerate),
                file_channels=int(info.channels),
            )
        )
    known = {p.name for p in files} | {p.stem for p in files}
    stray = sorted(k for k in annotations if k not in known)
    if stray and not names:
        warnings.append(f"{TRANSCRIPTS_NAME} names files that are not in the folder: {', '.join(stray)}")
    if not clips:
        raise BenchError(
            f"none of the {len(files)} audio file(s) in {folder} is usable: " + "; ".join(warnings)
        )
    return clips, warnings
