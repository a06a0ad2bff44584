"""Spoken test questions made at bench time with espeak-ng (a voice unlike the recordings and unlike the
reply voice), written with a ``transcripts.tsv`` into a folder :func:`~voice.bench.clips.load_clips` reads.

Synthetic speech is cleaner than a person but out of Whisper's training distribution in its own way (flat
prosody, robotic formants): a short-window decode that only holds on natural speech shows up here.
"""

from __future__ import annotations

from pathlib import Path

from voice.bench.voices import Voice, write_wav

#: Short questions and commands of the kind people put to a voice assistant.
QUESTIONS: tuple[str, ...] = (
    "What is the capital of France?",
    "What is the capital of Germany?",
    "What is the capital of Spain?",
    "How old is the Brooklyn Bridge?",
    "Turn on the living room lamp.",
    "Is the garage door open?",
    "What time is it?",
    "What's the date today?",
    "Set a timer for ten minutes.",
    "What is seven times eight?",
    "How many centimetres are in an inch?",
    "Who wrote Romeo and Juliet?",
    "What's the weather like tomorrow?",
    "Launch Firefox.",
    "Tell me a short joke.",
    "How far away is the moon?",
)


def espeak_clips(folder: Path, texts: tuple[str, ...] = QUESTIONS, voice: str = "en-us") -> Path:
    """Synthesize ``texts`` into ``folder`` (``espeak-NN.wav`` + ``transcripts.tsv``); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, text in enumerate(texts):
        name = f"espeak-{i:02d}.wav"
        write_wav(Voice("espeak-ng", voice), text, folder / name, espeak_wpm=150)
        rows.append(f"{name}\t{text}\n")
    (folder / "transcripts.tsv").write_text("".join(rows), encoding="utf-8")
    return folder
