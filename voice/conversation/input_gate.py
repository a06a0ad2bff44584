"""Transcripts with nothing to answer: asked again, never handed to the LLM.

Whisper writes noise, a cough or a half-heard mumble as punctuation ("..."), a string of digits ("1 2 3 4 5",
"7, 7, 4."), hesitation sounds ("Um, uh.") or a bracketed note ("[BLANK_AUDIO]", "(coughs)", "♪"). A small model
answers any of these with confidence, about something nobody asked. :func:`unintelligible` reads the transcript
by word classes (:mod:`voice.skills.word_classes`), not by a list of phrases: it holds a request only if some
word of it can carry one, a word of letters that is neither glue ("the", "and", "of"), a hesitation sound nor a
string no English word is made of ("brr", "aaah"). Digits alone ask nothing; with a word ("and 30?", "7 times 8")
they are read as usual.

:func:`voice.turn.ask_again.needed` uses it: an unintelligible transcript gets ``[stt] ask_again_reply`` and stays
out of the history, however sure the STT was, unless a skill takes it (as a follow-up of the conversation). An
empty transcript is no speech at all (the turn ends with outcome ``no_speech``). Pure.
"""

from __future__ import annotations

import re

from voice.skills.word_classes import is_content

_NOTE = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|[♪♫🎵🎶]")
"""What Whisper writes for sounds that are not words: "[BLANK_AUDIO]", "(coughs)", "*music*", "♪"."""
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


def words(transcript: str) -> list[str]:
    """The words of ``transcript`` that hold a letter ("R2D2" and "MP3" do; "42" and "1,000" do not), without the
    notes of sounds Whisper adds."""
    found = _WORD.findall(_NOTE.sub(" ", transcript).replace("’", "'"))
    return [w for w in found if any(c.isalpha() for c in w)]


def unintelligible(transcript: str) -> bool:
    """``transcript`` holds no word that could carry a request: punctuation, digits, hesitation sounds, glue
    words, non-words and notes of sounds only. An empty transcript is not unintelligible: nothing was heard."""
    if not transcript.strip():
        return False
    return not any(is_content(w) for w in words(transcript))
