"""Things the user asks the assistant to remember in their own words, said back when a question is about them.

"Remember that I parked on level 3, spot 42." … "Where did I park?" SmolLM2-135M answered "I'm sorry for your
loss, but I don't have the ability to remember specific locations." (the third held-out quality set,
2026-12-04). :mod:`voice.skills.personal_facts` keeps facts of fixed forms (a name, a favourite, a birth year); a note
is any sentence after "remember (that)" (or "so you know", "just so you remember") that is about the user ("I
…", "my …", "we …", "our …"), kept as said, and acknowledged ("OK, I'll remember that …"). A plain statement
about the user ("I parked on level three, row B.") is a note too, kept without a word (the LLM replies to it as
to any other), and found only by a question that recalls what was said ("Where did I park?", "Where are my
keys?", "Can you tell me my membership number?"), or by a question about something of the user's, or of what they
do, whose every word the statement says ("When's my dentist appointment?" after "My dentist appointment is on
Thursday at 3."; "Where am I meeting Sven?"; not "What colour is my car?" after "My car is red."), but for a form of
answer the statement gives ("What's my seat number?" after "My seat is 42C.") or the kind a "which" names ("Which
station does my train leave from?" after "My train leaves from Paddington."): :func:`_tells`. Not by "How do I …?".
A statement of a thing, about the user or not ("The float in the till was 150 pounds."), is said back to a
question of that thing ("How much was the float again?") when the thing is its subject: :func:`_the_thing`.

A question about the user ("Where did I park?", "Where are my keys?", "What did I say about the car?") is
answered with the latest note that shares a word with it, other than the small words every question has
("parked" and "park" count as one word): "You told me you parked on level 3, spot 42." A question no note
shares a word with goes on to the LLM, which may know the answer some other way. Notes are read again from the
conversation's own user turns at each question, so they are forgotten with it. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from voice.skills import personal_facts
from voice.skills.clock_questions import DAY_NAMES
from voice.skills.numbers import NUMBER_PATTERN

_A_THING_IS = r"(?:the|a|an) (?:[a-z0-9'-]+ ){1,6}?(?:is|are|was|were) .+"
"""A thing and what it is: "the spare key is taped under the mailbox", "the gate code at my mum's building is
4419" (a note when the user asks for it to be kept, or, with "my"/"our" in it, a plain statement about the user)."""
_NOTE = re.compile(
    r"(?:(?:ok(?:ay)?|hey|so|and|please)[, ]+)*(?:please )?"
    r"(?:remember|note|keep in mind|don'?t forget|(?:just )?so you (?:remember|know)|for (?:the|your) record)"
    r"(?: that)?[, ]+(?P<note>(?:i|i'm|i've|my|we|we're|our)\b.+|" + _A_THING_IS + ")",
    re.IGNORECASE,
)
_STATEMENT = re.compile(
    r"(?:(?:ok(?:ay)?|hi|hello|so|and|well)[, ]+)*"
    r"(?P<note>(?:i|i've|my|we|we've|our)\b.{8,}|(?=[^,]*\b(?:my|our)\b)" + _A_THING_IS + ")",
    re.IGNORECASE,
)
"""A plain statement about the user ("I parked on level three, row B."): kept as a note, not acknowledged."""
_ABOUT_ME = re.compile(
    r"^(?:where|when|what|which|who|how|did|do|have|is|are)\b.*\b(?:i|my|we|our|me)\b", re.I
)
_HOW_MUCH = r"how (?:many|much|old|long|far|big|heavy|wide|tall|high|often)"
_RECALL = re.compile(
    r"^(?:(?:where|when|what|which|who)\b.*\b(?:did i|did we|have i|i said|i told you)\b"
    rf"|{_HOW_MUCH}\b.*\b(?:did (?:i|we) (?:say|tell you|mention)|i said|i told you)\b"
    r"|(?:where|when) (?:is|are|was|were) (?:my|our)\b|did i (?:say|tell|mention)\b)"
)
"""A question that recalls what was said ("Where did I park?", "Where are my keys?", "How many parcels did I say I
had left?"): only these search plain statements, which are not notes the user asked to be kept ("How do I bake a
cake?" after "I want to bake a cake." is a new question; "How many did I sell?" asks for a sum, not what was
said)."""
_SAID_THE = re.compile(
    rf"^(?P<wh>what|{_HOW_MUCH}|where|when|which)(?: [a-z]+)? did (?:i|we) (?:say|tell you|mention) "
    r"(?P<thing>(?:that|the|this) [a-z0-9' -]+?) (?P<verb>is|are|was|were)(?: again| now| then)?$"
)
"""A question of what the user said a thing was ("What did I say the boiler pressure was?", "How wide did I say the
living room is?"): asked of the thing ("what was the boiler pressure", "what is the living room"), which a
statement of that thing answers though it is not about the user (:func:`_the_thing`)."""
_SMALL = frozenset({
    "where", "when", "what", "which", "who", "how", "did", "do", "does", "have", "has", "had", "is", "are", "was",
    "were", "am", "be", "i", "i'm", "i've", "my", "me", "we", "we're", "our", "you", "your", "the", "a", "an",
    "to", "on", "in", "at", "of", "for", "it", "that", "this", "about", "say", "said", "tell", "told", "remember",
    "again", "now", "there", "any", "can", "could", "please", "and", "so",
})  # fmt: skip
_YOURS = {
    "i": "you", "i'm": "you're", "i've": "you've", "i'd": "you'd", "i'll": "you'll", "my": "your", "me": "you",
    "mine": "yours", "am": "are", "we": "you", "we're": "you're", "our": "your", "us": "you",
}  # fmt: skip


_MINE = re.compile(r"\b(?:my|our)\b")
_WHERE_THE = re.compile(
    r"^(?:where|when)(?:'s| is| are| was| were) (?P<thing>the(?: [a-z0-9'-]+){1,4}?)(?: again| now)?$"
)
"""A question of where or when a thing is ("Where are the passports?"): about the user only when a note they asked
to be kept names the thing, other than as a place ("the passports" in "I put the passports in the drawer", not
"the station" in "we meet at the station")."""
_PLACE_WORD = re.compile(r"at|in|on|under|by|to|from|near|into|onto|behind|beside|inside|of")


def _stem(word: str) -> str:
    if word.endswith(("oes", "oing")) and len(word) <= 5:  # "goes", "going": "go"
        return word[:2]
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    words = (re.sub(r"'s$", "", w) for w in re.findall(r"[a-z0-9']+", text.lower()))  # "when's", "dog's"
    return {_stem(w) for w in words if w not in _SMALL}


def _covers(said: set[str], asked: set[str]) -> bool:
    """Every word asked is a word said, or starts one or is started by one, four letters at least ("expire" and
    "expires")."""
    return all(
        any(a == w or (min(len(a), len(w)) >= 4 and (a.startswith(w) or w.startswith(a))) for w in said)
        for a in asked
    )


def note(transcript: str) -> str | None:
    """The note in a "remember that I …" statement, as said (no end mark), else None."""
    m = _NOTE.fullmatch(transcript.strip().rstrip(".!?"))  # Whisper ends some with "?": "…, spot 8-12?"
    return m.group("note").strip() if m else None


def said_back(note_text: str) -> str:
    """A note in the assistant's words: "I parked on level 3" → "you parked on level 3"."""
    text = re.sub(r"\b(?:i|we) was\b", "you were", note_text, flags=re.IGNORECASE)  # "I was born in 1986"
    text = re.sub(r"^(?:The|An?)\b", lambda m: m.group().lower(), text)  # it follows "You told me"
    return re.sub(r"[A-Za-z']+", lambda m: _YOURS.get(m.group().lower(), m.group()), text)


def answer(transcript: str, earlier_user_turns: Sequence[str]) -> str | None:
    """ "OK, I'll remember that …" to a note; the note a question about the user asks for, from
    ``earlier_user_turns`` (oldest first); else None."""
    if (said := note(transcript)) is not None:
        return f"OK, I'll remember that {said_back(said)}."
    back = personal_facts.asked_back(transcript)  # "can you tell me my …": a recall, asked as "what's my …"
    question = back or transcript.strip().rstrip("?.! ").lower()
    if not (asked := _words(question)):
        return None
    if not _ABOUT_ME.match(question):
        return _where_the(question, earlier_user_turns) or _the_thing(question, earlier_user_turns)
    recalls = back is not None or _RECALL.match(question) is not None
    mine = _MINE.search(question) is not None or _DOING.match(question) is not None
    for turn in reversed(earlier_user_turns):
        if (said := note(turn)) is not None and asked & _words(said):
            return f"You told me {said_back(said)}."
        if said is None and (said := _statement(turn, recalls)) is not None:
            words = _words(said)
            if (recalls and asked & words) or (mine and _tells(said, words, asked, question)):
                return f"You told me {said_back(said)}."
    if (m := _SAID_THE.match(question)) is not None:  # "what did I say the boiler pressure was"
        wh = "what" if m["wh"].startswith("how") else m["wh"]  # "how wide did I say the room was": what was said
        return _the_thing(f"{wh} {m['verb']} {m['thing']}", earlier_user_turns)
    return _the_thing(question, earlier_user_turns)  # "what's my locker code" of "the locker code at the club is …"


_DOING = re.compile(r"^(?:where|when|which|what|who)\b.*\b(?:am|are|was|were|do|did) (?:i|we)\b")
"""A question of what the user does ("Where am I meeting Sven?", "Which platform am I going from?"): about the user
as one with "my" is; not "how" ("How do I bake a cake?" asks how it is done) nor "can/should I" (advice)."""
_FORMS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = (
    (frozenset({"number", "code", "pin"}), re.compile(rf"\b(?:\d|{NUMBER_PATTERN})", re.I)),
    (
        frozenset({"old", "age"}),
        re.compile(
            rf"\b(?:is|turned|turns|turning|aged) (?:just |nearly |almost )?(?:\d+|{NUMBER_PATTERN})"
            r"(?: and a half)?(?: (?:years?|months?)(?: old)?)?$|\b(?:years?|months?) old\b",
            re.I,
        ),
    ),
    (
        frozenset({"time"}),
        re.compile(
            rf"\d[:.]\d\d|\bat (?:\d|{NUMBER_PATTERN})|\bhalf (?:{NUMBER_PATTERN})"
            r"|\b(?:o'? ?clock|noon|midnight|half past|quarter past|quarter to|a\.?m|p\.?m)\b",
            re.I,
        ),
    ),
    (frozenset({"day", "date"}), re.compile(rf"\b(?:{'|'.join(DAY_NAMES)}|today|tonight|tomorrow)\b", re.I)),
)
"""Words a question asks a form of answer with, and what a statement says to give one: a number ("What was my seat
number?" after "My seat is 42C."), an age ("How old is my son?" after "My son is 7.", not "My son has 2 cats."), a
time of day ("at seven", "6.40", "half six"; not "gate 5"), a day."""
_FORM_WORDS = frozenset(word for form, _ in _FORMS for word in form)
"""A form the statement does not give is not the kind a "what …" names ("what time" after "…from gate 5")."""
_WH_NOUN = re.compile(r"^(?:which|what)\s+(?P<noun>[a-z]+)\b")


def _tells(said: str, words: set[str], asked: set[str], question: str) -> bool:
    """The statement ``said`` (its ``words``) answers ``question`` (its ``asked`` words): every word asked is a word
    said (:func:`_covers`), or a form the statement gives (:data:`_FORMS`), or the noun of "which …"/"what …",
    which names the kind of answer ("Which station does my train leave from?" after "My train leaves from
    Paddington."), when at least two other words are said: with one, the question may ask of something else of the
    thing ("What colour is my car?" after "My car is fast.")."""
    asked = {a for a in asked if not any(a in form and shows.search(said) for form, shows in _FORMS)}
    if _covers(words, asked):
        return True
    wh = _WH_NOUN.match(question)
    noun = _stem(wh["noun"]) if wh and wh["noun"] not in _SMALL | _FORM_WORDS else None
    rest = asked - {noun}
    return noun in asked and len(rest) >= 2 and _covers(words, rest)


def _where_the(question: str, earlier_user_turns: Sequence[str]) -> str | None:
    """The latest note the user asked to be kept that names the thing a "where/when is the …" question asks of."""
    if (m := _WHERE_THE.match(question)) is None:
        return None
    thing = re.compile(rf"(?P<before>[a-z']+ )?{re.escape(m.group('thing'))}\b")
    for turn in reversed(earlier_user_turns):
        if (said := note(turn)) is None:
            continue
        if any(not _PLACE_WORD.fullmatch((n.group("before") or "").strip()) for n in thing.finditer(said.lower())):
            return f"You told me {said_back(said)}."
    return None


_ASKS_THE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|and|well|right|now)[, ]+)*"
    r"(?:what(?: time| day| date)?|how much|how many|where|when|which)(?:'s| is| are| was| were| does| do| did)"
    r" (?:that|the|this|my|our) "
    r"(?P<thing>[a-z0-9' -]+?)(?: again| now| then)?$"
)
"""A question of a thing told about ("How much was the float again?", "What was that gate code?", "When does the
reception start?", "What's my locker code?" after "The locker code at the running club is 4719.")."""
_THE_THING_IS = re.compile(
    r"(?:(?:ok(?:ay)?|so|and|well|right|make a note|note|(?:please )?remember(?: that)?|don'?t forget(?: that)?)[, ]+)*"
    r"(?P<said>the (?P<subject>(?:[a-z0-9'-]+ ){1,8}?)(?:is|are|was|were|starts?|begins?|opens?|closes?|ends?) .+)",
    re.IGNORECASE,
)


def _the_thing(question: str, earlier_user_turns: Sequence[str]) -> str | None:
    """The latest statement the user made of a thing ("The float in the till this morning was 150 pounds.", "The
    gate code for the farm is 2580.") whose subject (before its verb) says every word a question of that thing asks
    (:data:`_ASKS_THE`), said back; else None. The thing must be what the statement is about, not a place in it."""
    if (m := _ASKS_THE.match(question)) is None or not (thing := _words(m["thing"]) - {"start", "begin", "end"}):
        return None
    for turn in reversed(earlier_user_turns):
        t = turn.strip()
        if t.endswith("?") or (stated := _THE_THING_IS.fullmatch(t.rstrip(".!"))) is None:
            continue
        if _covers(_words(stated["subject"]), thing):
            return f"You told me {said_back(stated['said'])}."
    return None


def _statement(turn: str, recalls: bool = False) -> str | None:
    """A plain statement about the user, unless it states one of :mod:`voice.skills.personal_facts`' facts and the
    question does not ask what was said (``recalls``): "I live in Lisbon." is a fact, and "Which country do I live
    in?" needs knowledge on top of it (the LLM's to answer); "What did I say my brother was called?" is said back."""
    t = turn.strip()
    m = _STATEMENT.fullmatch(t.rstrip(".!"))
    if m is None or t.endswith("?") or (personal_facts.facts([t]) and not recalls):
        return None
    return m.group("note").strip()
