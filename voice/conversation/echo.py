"""A reply that says the user's words back (:mod:`voice.conversation.reply_check` asks again instead), and a
user's turn that tells rather than asks, whose words said back are a read-back. Pure."""

from __future__ import annotations

from voice.skills.word_classes import (
    ASKING,
    DETERMINERS,
    FUNCTION_WORDS,
    PRONOUNS,
    QUESTION_WORDS,
    is_filler,
    words_in,
)


def echoes(sentence: str, user: str) -> bool:
    """``sentence`` says back ``user``'s words and adds nothing: ≥ 80 % of its words (at least three) appear in
    ``user`` in the same order, covering ≥ 60 % of ``user``'s words (any share, when it is a question), and every
    word of it with meaning is among ``user``'s words."""
    said, heard = _unframed(words_in(sentence)), words_in(user)
    if len(said) < 3 or not heard:
        return False
    # Most of the user's words too: "The Sun is a star." picks one of "Is the Sun a star or a planet?"; a question
    # of theirs put back to them asks nothing new however much of the turn it leaves out ("What do tadpoles turn
    # into?" after "Come what do tadpoles turn into when they grow up?")
    asks_back = sentence.rstrip(" \"'”’)").endswith("?")
    return echoing(said, heard) and (asks_back or _in_order(said, heard) >= 0.6 * len(heard))


_FRAMES = (("the", "answer", "is"), ("the", "question", "is"), ("you", "asked"), ("you", "said"), ("answer",))


def _unframed(said: list[str]) -> list[str]:
    """``said`` without a frame that only introduces it: "The answer is: 'Why do some hydrangeas come out blue?'"
    (the thirty-fourth set) says the question back all the same."""
    frame = next((f for f in _FRAMES if tuple(said[: len(f)]) == f), ())
    return said[len(frame) :]


def may_echo(said: list[str], heard: list[str]) -> bool:
    """What is said so far may still be an echo (:func:`echoes`): the user's words so far (:func:`echoing`), after a
    frame, or no more than a frame yet ("The answer is:")."""
    if said and any(f[: len(said)] == tuple(said) for f in _FRAMES):
        return True
    return echoing(_unframed(said), heard)


def echoing(said: list[str], heard: list[str]) -> bool:
    """``said`` (any length) is so far the user's words in order: what :func:`echoes` asks, but of a part."""
    if not said:
        return False
    content = [w for w in said if w not in FUNCTION_WORDS and not is_filler(w)]
    if any(w not in heard for w in content):
        return False
    return _in_order(said, heard) >= 0.8 * len(said)


def _in_order(a: list[str], b: list[str]) -> int:
    """The length of the longest run of ``a``'s words found in ``b`` in the same order (not necessarily adjacent)."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def tells(user: str) -> bool:
    """``user``'s words tell something rather than ask: they open, after any hesitation, with the subject of a
    statement (a pronoun or a determiner: "the plumber is coming on thursday", "I'm meeting Tom at six", "he's
    turning seven"), and hold no "?", no question word and no word that only asks for an answer ("tell", "know",
    "give": :data:`~voice.skills.word_classes.ASKING`). A request ("cancel the five minute one") or a question
    ("what's 120 divided by 8") does not tell."""
    said = [w for w in words_in(user) if not is_filler(w)]
    if not said or "?" in user or said[0].split("'")[0] not in PRONOUNS | DETERMINERS:  # "he's" opens as "he"
        return False
    return not any(w.split("'")[0] in QUESTION_WORDS or w in ASKING for w in said)
