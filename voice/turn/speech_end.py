"""The reference speech end of a recording: where the user's speech really ends, robust to what real
recordings carry around it (an onset chime, a click or a breath after the speech, room noise, a music bed, a
quiet speaker), and a statement of when that is ambiguous.

Two kinds of evidence, combined (``docs/measuring.md`` states the same with the accuracy measured):

1. **Which sound is the last speech** — an offline pass of a speech detector (Silero VAD, the model the
   server uses, but over the whole clip with a fresh state, independent of the server's endpointing) gives a
   speech probability per 32 ms frame. Frames ≥ 0.5 form stretches (joined across gaps up to 160 ms,
   stretches under 96 ms dropped); a stretch counts only if it holds ≥ 50 ms of voiced (periodic) sound, so
   chimes, clicks, breaths and noise bursts are not the end of speech. Its edge is coarse (32 ms frames, and
   the probability lags the sound).
2. **Where the sound of that speech stops** — 10 ms Hann windows every 5 ms, power spectra over
   100–7000 Hz whitened by the background's spectrum (the per-bin median over the windows the detector calls
   non-speech, floored 25 dB under the speech's mean level); a window holds sound when its whitened power is
   6 standard deviations above the background's. From the last such window inside the last speech stretch,
   the end is followed forward across gaps up to 60 ms (a stop's closure before its release), at most 250 ms
   past the detector's edge; the reference is that window's centre + half a hop.

The reference is **ambiguous** (a turn measured against it is reported ``uncertain``) when the detector
finds no voiced speech (then the whole-clip energy end is used, and flagged); the speech peak is less than
6 dB above the background; the sound stays above the background all the way to the 250 ms limit (a noise
or music bed at speech level); or the refined end and the detector's edge disagree by more than 150 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from voice.audio import EnergyAnalysis

VAD_HOP_SAMPLES = 512
SPEECH_PROB = 0.5
NON_SPEECH_PROB = 0.15
JOIN_GAP_MS = 160.0
VOICING_CORR = 0.5
MIN_VOICED_MS = 50.0
MIN_STRETCH_MS = 96.0
WINDOW_MS = 10.0
HOP_MS = 5.0
FLOOR_BELOW_SPEECH_DB = 25.0
BRIDGE_MS = 60.0
BAND_HZ = (100.0, 7000.0)
DETECT_Z = 6.0
"""A window holds sound when its noise-whitened band power is this many standard deviations above noise."""
HORIZON_MS = 250.0
MIN_SNR_DB = 6.0
AGREEMENT_MS = 150.0

METHOD = (
    "reference speech end = Silero VAD offline over the whole clip (32 ms frames, p >= 0.5, stretches joined "
    f"across {JOIN_GAP_MS:g} ms, under {MIN_STRETCH_MS:g} ms or with under {MIN_VOICED_MS:g} ms of voiced sound "
    f"dropped) locates the last speech; {WINDOW_MS:g} ms windows every {HOP_MS:g} ms, spectra whitened by the "
    f"background's (median over windows with p < {NON_SPEECH_PROB}, floored {FLOOR_BELOW_SPEECH_DB:g} dB under "
    f"the speech), hold sound when {DETECT_Z:g} standard deviations above it; followed from inside that "
    f"speech across gaps up to {BRIDGE_MS:g} ms, at most {HORIZON_MS:g} ms past the VAD's edge; the end is the "
    f"last window with sound. Ambiguous (turns `uncertain`) when the VAD finds no voiced speech, the peak is "
    f"under {MIN_SNR_DB:g} dB above the background, the sound lasts to the {HORIZON_MS:g} ms limit, or the end "
    f"and the VAD's edge differ by more than {AGREEMENT_MS:g} ms; a third column of transcripts.tsv overrides it"
)


@dataclass(frozen=True)
class SpeechEnd:
    """The reference speech end of one clip and the evidence behind it. Times from the clip's start."""

    end_s: float
    vad_end_s: float | None
    """End of the last speech stretch by the offline speech detector (32 ms resolution); None: no speech."""
    background_db: float
    """Mean power of the non-speech windows, dBFS."""
    peak_db: float
    """95th percentile of window power inside speech, dBFS."""
    ambiguous: str | None = None
    """Why the reference cannot be trusted to ~20 ms, or None."""
    overridden: bool = False
    """True when the end comes from an annotation (``transcripts.tsv`` third column), not from the audio."""


def _spectra(audio: np.ndarray, rate_hz: int) -> tuple[np.ndarray, int, int]:
    """Power spectra (Hann, ``WINDOW_MS`` windows every ``HOP_MS``) over the speech band; (frames × bins,
    window samples, hop samples)."""
    win = max(2, round(rate_hz * WINDOW_MS / 1000))
    hop = max(1, round(rate_hz * HOP_MS / 1000))
    if len(audio) < win:
        return np.zeros((0, 0)), win, hop
    starts = np.arange(0, len(audio) - win + 1, hop)
    frames = np.lib.stride_tricks.sliding_window_view(audio.astype(np.float64), win)[starts]
    spec = np.abs(np.fft.rfft(frames * np.hanning(win), axis=1)) ** 2
    freqs = np.fft.rfftfreq(win, 1 / rate_hz)
    band = (freqs >= BAND_HZ[0]) & (freqs <= BAND_HZ[1])
    return spec[:, band], win, hop


def envelope_db(audio: np.ndarray, rate_hz: int) -> tuple[np.ndarray, np.ndarray]:
    """The energy envelope the reference is found on: (window centres in s, speech-band power in dBFS)."""
    spec, win, hop = _spectra(audio, rate_hz)
    power = spec.sum(axis=1) / win if spec.size else np.zeros(0)
    centres_s = (np.arange(len(power)) * hop + win // 2) / rate_hz
    return centres_s, 10 * np.log10(power + 1e-12)


def _db(power: float) -> float:
    return float(10 * np.log10(power + 1e-12))


def voiced_ms(audio: np.ndarray, rate_hz: int) -> float:
    """Milliseconds of voiced (periodic, 60–400 Hz) sound in ``audio``: 40 ms frames every 10 ms whose
    normalized autocorrelation peaks above ``VOICING_CORR``. Breaths, clicks and noise have none."""
    win, hop = round(rate_hz * 0.04), round(rate_hz * 0.01)
    if len(audio) < win:
        return 0.0
    frames = np.lib.stride_tricks.sliding_window_view(audio.astype(np.float64), win)[::hop]
    frames = frames - frames.mean(axis=1, keepdims=True)
    spec = np.fft.rfft(frames, n=2 * win, axis=1)
    ac = np.fft.irfft(np.abs(spec) ** 2, axis=1)[:, :win]
    lo, hi = rate_hz // 400, rate_hz // 60
    corr = ac[:, lo:hi].max(axis=1) / (ac[:, 0] + 1e-12)
    return float((corr > VOICING_CORR).sum() * 10.0)


def last_speech_stretch(
    probs: np.ndarray, hop_samples: int, rate_hz: int, audio: np.ndarray | None = None
) -> tuple[int, int] | None:
    """(first, last+1) sample of the detector's last speech stretch, or None if it found no speech.
    With ``audio``, a stretch counts only if it holds at least ``MIN_VOICED_MS`` of voiced sound."""
    frames = np.nonzero(probs >= SPEECH_PROB)[0]
    if len(frames) == 0:
        return None
    frame_ms = hop_samples * 1000 / rate_hz
    join = max(1, round(JOIN_GAP_MS / frame_ms))
    splits = np.nonzero(np.diff(frames) > join)[0] + 1
    stretches = [s for s in np.split(frames, splits) if len(s) * frame_ms >= MIN_STRETCH_MS]
    if audio is not None:
        stretches = [
            s
            for s in stretches
            if voiced_ms(audio[int(s[0]) * hop_samples : (int(s[-1]) + 1) * hop_samples], rate_hz)
            >= MIN_VOICED_MS
        ]
    if not stretches:
        return None
    last = stretches[-1]
    return int(last[0]) * hop_samples, (int(last[-1]) + 1) * hop_samples


def find_speech_end(
    audio: np.ndarray,
    rate_hz: int,
    probs: np.ndarray,
    energy: EnergyAnalysis,
    hop_samples: int = VAD_HOP_SAMPLES,
) -> SpeechEnd:
    """The reference speech end of ``audio`` from the detector's per-frame probabilities ``probs`` (frame
    ``i`` covers ``[i * hop_samples, (i + 1) * hop_samples)``) and the whole-clip energy analysis (used only
    when the detector finds no speech)."""
    if len(probs) * hop_samples < len(audio) - hop_samples:
        raise ValueError(
            f"speech probabilities cover {len(probs) * hop_samples} samples, the clip has {len(audio)}"
        )
    spec, win, hop = _spectra(audio, rate_hz)
    power = spec.sum(axis=1) / win if spec.size else np.zeros(0)
    stretch = last_speech_stretch(probs, hop_samples, rate_hz, audio)
    if stretch is None or len(power) == 0:
        return SpeechEnd(
            end_s=energy.last_voiced_sample / rate_hz,
            vad_end_s=None,
            background_db=energy.noise_floor_db,
            peak_db=energy.peak_db,
            ambiguous="the speech detector finds no voiced speech in the clip (energy end used)",
        )
    start, vad_end = stretch
    centres = np.arange(len(power)) * hop + win // 2
    frame_of = np.minimum(centres // hop_samples, len(probs) - 1)
    quiet = probs[frame_of] < NON_SPEECH_PROB
    in_speech = (centres >= start) & (centres < vad_end)
    speech_bins = spec[in_speech].mean(axis=0) if in_speech.any() else spec.mean(axis=0)
    floor = speech_bins.mean() * 10 ** (-FLOOR_BELOW_SPEECH_DB / 10)
    # The background spectrum: per bin, the median over non-speech windows (/ ln 2: the mean of an
    # exponential), so chimes and clicks outside the speech barely move it.
    noise_bins = np.median(spec[quiet], axis=0) / np.log(2) if quiet.sum() >= 10 else spec.min(axis=0)
    noise_bins = np.maximum(noise_bins, floor)
    n_bins = spec.shape[1]
    z = ((spec / noise_bins).sum(axis=1) - n_bins) / np.sqrt(n_bins)
    above = z > DETECT_Z
    bg = float(power[quiet].mean()) if quiet.any() else float(np.percentile(power, 10))
    peak = float(np.percentile(power[in_speech], 95)) if in_speech.any() else float(power.max())
    ambiguous: list[str] = []
    if _db(peak) - _db(bg) < MIN_SNR_DB:
        ambiguous.append(f"speech only {_db(peak) - _db(bg):.1f} dB above the background")

    # Anchor: the last window inside the stretch that is above threshold.
    inside_idx = np.nonzero(above & (centres >= start) & (centres < vad_end))[0]
    horizon = vad_end + round(rate_hz * HORIZON_MS / 1000)
    bridge = max(1, round(BRIDGE_MS / HOP_MS))
    if len(inside_idx) == 0:
        end_sample = vad_end
        ambiguous.append("no window inside the detected speech rises above the background")
    else:
        k = int(inside_idx[-1])
        last = k
        while k + 1 < len(power) and centres[k + 1] < horizon:
            k += 1
            if above[k]:
                last = k
            elif k - last > bridge:
                break
        else:
            if last == k and k + 1 < len(power):
                ambiguous.append(f"the sound stays above the background up to {HORIZON_MS:g} ms past the speech")
        end_sample = int(centres[last]) + hop // 2
    end_sample = min(end_sample, len(audio))
    if abs(end_sample - vad_end) * 1000 / rate_hz > AGREEMENT_MS:
        ambiguous.append(
            f"energy end and speech detector disagree by {abs(end_sample - vad_end) * 1000 / rate_hz:.0f} ms"
        )
    return SpeechEnd(
        end_s=end_sample / rate_hz,
        vad_end_s=vad_end / rate_hz,
        background_db=round(_db(bg), 1),
        peak_db=round(_db(peak), 1),
        ambiguous="; ".join(ambiguous) or None,
    )
