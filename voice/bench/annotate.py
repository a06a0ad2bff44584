"""``voice bench annotate DIR``: the automatic speech ends, written where a person can check and correct them.

For every recording of ``DIR`` it computes the reference speech end (:mod:`voice.turn.speech_end`: the offline
speech detector's last stretch, refined on the noise-whitened energy envelope), then

* writes it into the third column of ``transcripts.tsv`` (``filename<TAB>text<TAB>speech_end_s``): printed, or
  written in place with ``--write`` (the old file kept as ``transcripts.tsv.bak``). Rows that already carry an
  end keep it unless ``--overwrite``; comments, blank lines and row order are kept; clips without a row get one
  with an empty transcript;
* draws one PNG per clip into ``--png-dir``: the waveform, the detector's speech probability, the energy
  envelope against the background, the detector's edge, the reference end, and the annotated end if any.
  Clips whose reference is ambiguous are listed with the reason: those are the ones to look at.

``voice bench e2e`` and ``voice bench mix`` then use the annotated end instead of the automatic one.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voice.bench.clips import TRANSCRIPTS_NAME, BenchError, Clip, load_clips, read_annotations
from voice.turn.speech_end import VAD_HOP_SAMPLES

DEFAULT_PNG_ROOT = Path("out") / "annotate"


@dataclass(frozen=True)
class Annotated:
    text: str
    """The new ``transcripts.tsv``."""
    written: tuple[str, ...]
    """Clips whose speech end was written (new or replaced)."""
    kept: tuple[str, ...]
    """Clips whose existing annotation was kept (no ``overwrite``)."""


def annotate_tsv(tsv_text: str, ends_s: Mapping[str, float], *, overwrite: bool = False) -> Annotated:
    """``tsv_text`` with the speech end of every clip in ``ends_s`` in its third column (pure)."""
    lines_out: list[str] = []
    written: list[str] = []
    kept: list[str] = []
    seen: set[str] = set()
    for line in tsv_text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or "\t" not in line:
            lines_out.append(line)
            continue
        name, text, *rest = line.split("\t")
        key = name.strip()
        match = key if key in ends_s else next((k for k in ends_s if Path(k).stem == key), None)
        if match is None:
            lines_out.append(line)
            continue
        seen.add(match)
        if rest and rest[0].strip() and not overwrite:
            kept.append(match)
            lines_out.append(line)
            continue
        written.append(match)
        lines_out.append(f"{name}\t{text}\t{ends_s[match]:.3f}")
    for name in sorted(set(ends_s) - seen):
        written.append(name)
        lines_out.append(f"{name}\t\t{ends_s[name]:.3f}")
    return Annotated("\n".join(lines_out) + "\n", tuple(written), tuple(kept))


def plot_clip(clip: Clip, probs: np.ndarray, automatic_end_s: float, path: Path) -> None:
    """One PNG: waveform, speech probability and energy envelope, with the ends as vertical lines."""
    from voice.bench.plots import _pyplot
    from voice.turn.speech_end import envelope_db

    plt = _pyplot()
    t = np.arange(len(clip.audio)) / clip.rate_hz
    fig, (wave_ax, env_ax) = plt.subplots(2, 1, figsize=(10, 4.5), sharex=True)
    wave_ax.plot(t, clip.audio, color="#555555", linewidth=0.4)
    prob_t = (np.arange(len(probs)) + 0.5) * VAD_HOP_SAMPLES / clip.rate_hz
    prob_ax = wave_ax.twinx()
    prob_ax.plot(prob_t, probs, color="#1f77b4", linewidth=1.0, label="speech probability")
    prob_ax.set_ylim(-0.02, 1.02)
    prob_ax.set_ylabel("speech prob.")
    env_t, env_db = envelope_db(clip.audio, clip.rate_hz)
    env_ax.plot(env_t, env_db, color="#444444", linewidth=0.8, label="energy (dBFS)")
    env_ax.axhline(clip.speech_end.background_db, color="#9e9e9e", linestyle=":", label="background")
    lines = [("reference (automatic)", automatic_end_s, "#d62728", "-")]
    if clip.speech_end.vad_end_s is not None:
        lines.append(("detector edge", clip.speech_end.vad_end_s, "#1f77b4", "--"))
    if clip.speech_end.overridden:
        lines.append(("annotated", clip.speech_end_s, "#2ca02c", "-."))
    for ax in (wave_ax, env_ax):
        for label, x, colour, style in lines:
            ax.axvline(x, color=colour, linestyle=style, linewidth=1.2, label=label if ax is env_ax else None)
    wave_ax.set_ylabel("waveform")
    env_ax.set_ylabel("dBFS")
    env_ax.set_xlabel("seconds from the clip's start")
    env_ax.legend(loc="lower left", fontsize=7, ncol=3)
    title = f"{clip.name}: speech end {automatic_end_s:.3f} s"
    if clip.speech_end.ambiguous:
        title += f" (CHECK: {clip.speech_end.ambiguous})"
    wave_ax.set_title(title, fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    from voice.backends.vad_silero import SileroVad, clip_probabilities
    from voice.turn.speech_end import find_speech_end

    folder: Path = args.dir
    vad = SileroVad()

    def probabilities(audio: np.ndarray) -> np.ndarray:
        return clip_probabilities(audio, vad)

    clips, warnings = load_clips(folder, speech_probabilities=probabilities)
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)
    tsv = folder / TRANSCRIPTS_NAME
    old_text = tsv.read_text(encoding="utf-8-sig") if tsv.is_file() else ""
    if old_text:
        read_annotations(tsv)  # a malformed file is reported before anything is written
    png_dir: Path = args.png_dir or DEFAULT_PNG_ROOT / folder.resolve().name
    automatic: dict[str, float] = {}
    for clip in clips:
        probs = probabilities(clip.audio)
        auto = find_speech_end(clip.audio, clip.rate_hz, probs, clip.analysis)
        automatic[clip.name] = auto.end_s
        plot_clip(clip, probs, auto.end_s, png_dir / f"{Path(clip.name).stem}.png")
        flag = f"  CHECK: {auto.ambiguous}" if auto.ambiguous else ""
        note = f" (annotated {clip.speech_end_s:.3f} s)" if clip.speech_end.overridden else ""
        print(f"{clip.name}: speech end {auto.end_s:.3f} s{note}{flag}", file=sys.stderr)
    result = annotate_tsv(old_text, automatic, overwrite=args.overwrite)
    if args.write:
        if tsv.is_file():
            shutil.copyfile(tsv, tsv.with_name(TRANSCRIPTS_NAME + ".bak"))
        try:
            tsv.write_text(result.text, encoding="utf-8")
        except OSError as e:
            raise BenchError(f"cannot write {tsv} ({e}); run without --write and save the printed file") from e
        print(f"wrote {len(result.written)} speech end(s) to {tsv}", file=sys.stderr)
    else:
        sys.stdout.write(result.text)
    if result.kept:
        print(
            f"kept the existing annotation of {len(result.kept)} clip(s) (--overwrite replaces them)",
            file=sys.stderr,
        )
    print(f"one PNG per clip in {png_dir}", file=sys.stderr)
    return 0
