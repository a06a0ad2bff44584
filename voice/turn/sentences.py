"""Streaming sentence splitter: turns an LLM token stream into chunks TTS can speak early.

Rules (every decision depends only on text that has already arrived, so the chunking is
identical however the stream was cut into deltas):

* The FIRST chunk of a reply may end at a clause boundary (``, ; : — –`` followed by
  whitespace) once it holds ``min_first_clause_words`` words (or ``max_first_clause_chars``
  characters), or at the first sentence end, whichever comes first.
* If the first chunk reaches ``max_first_chunk_words`` words with no boundary, it ends at the next
  space after a word that is not a number, abbreviation or initial: a long first sentence must not
  hold back the first audio (0 disables).
* Afterwards only whole sentences are emitted: a run of ``. ! ? …`` plus any closing
  quotes/brackets/asterisks, followed by whitespace; or a line break.
* A boundary is confirmed only once the character after it has arrived ("3." could become
  "3.5"), so digits, URLs and emails ("1,000", "3.14", "10:30", "a.b/c?d=e.f") never split.
* A period never splits after an abbreviation (Dr. e.g. p.m. U.S. etc. ...), a single initial
  ("J. R. R. Tolkien") or a list number at line start ("1. First").  "No." splits unless a
  digit follows ("No. 5").  An ellipsis splits unless the next word starts lowercase.
* Chunks shorter than ``min_sentence_chars`` are not emitted alone; they join the next chunk.

The splitter emits raw (stripped) text; callers apply :func:`clean_for_speech` before TTS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SentenceSplitter", "SplitterConfig", "clean_for_speech"]

# Words that never end a sentence before "."; dotted forms (e.g. i.e. a.m. p.m. U.S.) and single
# initials are matched by _INITIALS, and "No." is handled separately ("No. 5" vs "No. Thanks.").
_ABBREVIATION_WORDS = "dr mr mrs ms prof st vs etc inc ltd jr sr approx dept fig mt"
ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_CLAUSE = ",;:—–"
_TERMINATORS = ".!?…"
_CLOSERS = "\"'”’)]}»*_"
_OPENERS = "\"'“‘([{*_"
_NEXT_CHAR = re.compile(r"\s*(\S)")
_ENDS_SENTENCE = re.compile(rf"[{_TERMINATORS}][{re.escape(_CLOSERS)}]*$")
_INITIALS = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")  # "J", "e.g", "U.S", "p.m"


@dataclass(frozen=True)
class SplitterConfig:
    min_first_clause_words: int = 3  # first chunk may end at a clause boundary after this many words
    max_first_clause_chars: int = 120  # ...or after this many characters, whatever the word count
    min_sentence_chars: int = 2  # shorter chunks are merged into the following one
    max_first_chunk_words: int = 12  # a first chunk this long without a boundary ends at a word break


class SentenceSplitter:
    """Incremental splitter; see the module docstring for the rules."""

    def __init__(self, config: SplitterConfig = SplitterConfig()) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        """Forget all buffered text; the next chunk is again a reply's first chunk."""
        self.dropped = ""
        """The unfinished tail the last :meth:`flush` dropped, if it dropped one."""
        self._buf = ""
        self._scan = 0  # every candidate before this index was rejected for good
        self._first = True  # no chunk emitted yet in this reply
        self._line_start = True  # _buf[0] is at the start of a line

    def push(self, text: str) -> list[str]:
        """Feed a delta of any size; return the chunks now complete (stripped, in order)."""
        self._buf += text
        out: list[str] = []
        while (end := self._next_boundary()) is not None:
            out.append(self._buf[:end].strip())
            self._line_start = self._buf[end - 1] == "\n"
            self._buf, self._scan, self._first = self._buf[end:], 0, False
        return out

    def flush(self, *, cut_short: bool = False) -> list[str]:
        """End of stream: return the unterminated tail (if any) and reset. ``cut_short``: the stream was cut off
        (the LLM's token cap), so a tail that does not end a sentence is dropped rather than spoken half-said
        ("The empire consisted of s"); it is left in :attr:`dropped`."""
        rest = self._buf.strip()
        self.reset()
        if cut_short and rest and not _ENDS_SENTENCE.search(rest):
            self.dropped = rest
            return []
        return [rest] if rest else []

    # -- internals -------------------------------------------------------------------------

    def _next_boundary(self) -> int | None:
        """Index just past the next confirmed boundary, or None if none is decidable yet."""
        buf, i = self._buf, self._scan
        while i < len(buf):
            ch = buf[i]
            if ch == "\n":
                if self._long_enough(i + 1):
                    return i + 1
            elif ch.isspace() and self._first and self._word_cap_ok(i):
                return i
            elif ch in _CLAUSE and self._first:
                if i + 1 == len(buf):
                    break  # pending: need the next character
                if buf[i + 1].isspace() and self._clause_ok(i):
                    return i + 1
            elif ch in _TERMINATORS:
                j = self._run_end(i)
                verdict = self._sentence_end(i, j)
                if verdict is None:
                    break
                if verdict and self._long_enough(j):
                    return j
                i = j
                continue
            i += 1
        self._scan = i
        return None

    def _run_end(self, i: int) -> int:
        """Index past the terminators starting at ``i`` ("?!", "...") and the closers after them."""
        buf, j = self._buf, i
        while j < len(buf) and buf[j] in _TERMINATORS:
            j += 1
        while j < len(buf) and buf[j] in _CLOSERS:
            j += 1
        return j

    def _long_enough(self, end: int) -> bool:
        return len(self._buf[:end].strip()) >= self.config.min_sentence_chars

    def _word_cap_ok(self, i: int) -> bool:
        """May the first chunk end at the space ``buf[i]`` because it is already long?"""
        cap = self.config.max_first_chunk_words
        if not cap or (i > 0 and self._buf[i - 1].isspace()):
            return False
        words = self._buf[:i].split()
        if len(words) < cap:
            return False
        last = words[-1].strip(_OPENERS + _CLOSERS + _CLAUSE + _TERMINATORS)
        dotted = words[-1].rstrip(_CLOSERS).endswith(".")
        return not (
            any(c.isdigit() for c in last)  # "at 3 | p.m.", "10 | km"
            or (dotted and (last.lower() in ABBREVIATIONS or _INITIALS.fullmatch(last) is not None))
        )

    def _clause_ok(self, i: int) -> bool:
        head = self._buf[:i]
        return (
            len(head.split()) >= self.config.min_first_clause_words
            or len(head.strip()) >= self.config.max_first_clause_chars
        )

    def _sentence_end(self, i: int, j: int) -> bool | None:
        """Is the terminator run buf[i:j] (with closers) a sentence end? None = undecidable yet."""
        buf = self._buf
        if j == len(buf):
            return None  # more terminators/closers or a digit may follow
        if not buf[j].isspace():
            return False  # "3.14", "example.com", "?d=e"
        run = buf[i:j].rstrip(_CLOSERS)
        if "!" in run or "?" in run:
            return True
        nxt = _NEXT_CHAR.match(buf, j)
        if len(run) > 1 or "…" in run:  # ellipsis: continues if the next word is lowercase
            return None if nxt is None else not nxt.group(1).islower()
        words = buf[:i].split()
        word = words[-1].lstrip(_OPENERS) if words else ""
        if word.lower() == "no":  # "No. 5" vs "No. That is wrong."
            return None if nxt is None else not nxt.group(1).isdigit()
        if word.lower() in ABBREVIATIONS or _INITIALS.fullmatch(word):
            return False
        # a bare number at line start is a list item ("1. First"), not a sentence
        return not (word.isdigit() and self._at_line_start(i - len(word)))

    def _at_line_start(self, pos: int) -> bool:
        before = self._buf[:pos]
        line = before.rsplit("\n", 1)
        return line[-1].strip(" \t\r#-" + _OPENERS) == "" and (len(line) == 2 or self._line_start)


_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d\u20e3]+")
_SPEECH_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [link text](url) -> link text
    (re.compile(r"^[ \t]*(?:#{1,6}|>|[-*+•])[ \t]+", re.M), ""),  # headings, quotes, bullets
    (re.compile(r"\*+(?=\S)|(?<=\S)\*+|`+"), ""),  # **bold**, *italic*, `code` ("2 * 3" stays)
    (re.compile(r"(?<!\w)_{1,2}(?=\S)|(?<=\S)_{1,2}(?!\w)"), ""),  # __bold__, _italic_ (not snake_case)
    (_EMOJI, " "),
    (re.compile(r"\s+"), " "),
)


def clean_for_speech(text: str) -> str:
    """Strip markdown noise (bold/italic markers, `#` headings, bullets, backticks, link
    targets) and emojis, and collapse whitespace.  Pure; apply to each emitted chunk."""
    for pattern, repl in _SPEECH_RULES:
        text = pattern.sub(repl, text)
    return text.strip()
