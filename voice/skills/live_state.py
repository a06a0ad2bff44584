"""Questions about how things are right now, which the assistant cannot see: one rule, answered honestly.

The assistant has no sensors and no internet connection. Asked for a reading or a state of the home or the world
("What's the temperature in the living room?", "Is the front door locked?", "What was the score last night?",
"How's the traffic?"), a small model makes one up. :mod:`voice.skills.capabilities` knows the common topics by
name; this rule knows none: it reads the question's shape.

A question asks for live state when it asks for a value or a state (it opens with "what", "how", "which",
"who won", "is", "are", "will", "did"…, and not for advice or an opinion: "what should I…", "how do I…", "what's
the best way to…", nor about the assistant: "how are you today?") and one of these holds:

- it is tied to the present or a moment near it: now, currently, at the moment, today, tonight, tomorrow, this
  morning, latest, current, last night, yesterday (time deixis);
- it is tied to here: in here, inside, outside, at home, in the kitchen or another room of a home (place deixis);
- it asks whether something of the user's is in a state: "is the light on?", "are our windows open?", "is the
  number 12 bus running on time?" (the/my/our, a noun, and a state one can only check: on, off, open, closed,
  locked, running, late, on time, delayed, cancelled…);
- it asks for a reading with nothing to read it of, as a sensor or a feed gives it: "what is the humidity?",
  "how's the traffic?", "what's the weather like?"; prices and rates are readings whatever they are of ("what is
  the price of gold?");
- it asks how the weather itself is: "how cold is it?", "is it raining?";
- it asks what a thing of the user's shows, says or reads: "is the baby monitor showing she's asleep?", "what does
  the thermostat say?" (the/my/our, a noun, and a verb of showing).

Questions about the clock and the calendar ("What time is it right now?", "What day is it today?") are the
clock's (:mod:`voice.skills.clock_questions`), so they never count; nor do facts that do not change ("What is the
capital of France?", "How hot is the sun?", "What is the boiling point of water?"). It runs after every skill and
after :mod:`voice.skills.capabilities` (:class:`voice.conversation.skills_llm.SkillsLlm`). Pure.
"""

from __future__ import annotations

import re

from voice.skills.word_classes import FUNCTION_WORDS

REPLY = (
    "I can't see that: I have no sensors or internet connection, so I don't know how things are right now."
)

_POLITE = re.compile(
    r"^(?:(?:ok(?:ay)?|hey|hi|so|and|now|well|please|um+|uh+|assistant|computer)[, ]+)*"
    r"(?:(?:can|could) you (?:please )?tell me |do you know |tell me |i (?:want|need|would like) to know |"
    r"i wonder )?"
)
_FRAME = re.compile(
    r"^(?:what(?:'s|s)?|how(?:'s|s)?|which|who (?:won|is winning|scored|is playing)|who's (?:winning|playing)|"
    r"whether|if|any|is|are|was|were|will|did|has|have)\b"
)
_ADVICE = re.compile(
    r"^(?:what|how|which)(?:'s)? (?:should|could|would|can|do|does|might|must|shall)\b"
    r"|\b(?:best|better|good|easiest|fastest|way|ways)\b.*\bto \w+"
    r"|\bto (?!be\b|the\b|a\b|an\b|my\b|our\b|your\b)[a-z]+\b.*\b(?:at home|inside|outside|in here|today|tonight)\b"
    r"|^who(?:'s| is) the\b"
)
"""Advice, an opinion or who someone is: "what should I cook tonight?", "what's a good thing to do at home?"."""
_ABOUT_YOU = re.compile(r"\b(?:you|your|yourself)\b")
_CLOCK = re.compile(
    r"\b(?:(?:time|day|date|year|month|hour|minute|weekday|weekend|timer)s?|o'clock|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
"""The moment itself, which the clock knows (looked for once "today", "this weekend" are taken out)."""
_TIME = re.compile(
    r"\b(?:right now|now|currently|at the moment|at present|so far|today(?:'s)?|tonight(?:'s)?|tomorrow(?:'s)?|"
    r"this (?:morning|afternoon|evening|week|weekend)|next week|latest|current|last night|yesterday(?:'s)?)\b"
)
_ON_TIME = re.compile(r" (?:on|in) time\b")
"""Not the clock's: "is the bus running on time?" asks for a state (read as "on schedule", which :data:`_STATE`
knows)."""
_HOME = (
    r"(?:kitchen|bedroom|bathroom|living room|lounge|dining room|hall|hallway|garage|garden|basement|attic|"
    r"cellar|loft|office|study|nursery|shed|yard|backyard|porch|room|house|flat|apartment)"
)
_PLACE = re.compile(
    rf"\b(?:in here|inside|outside|out there|at home|upstairs|downstairs|at (?:my|our) (?:house|place|home)|"
    rf"in (?:the|this|my|our|your) (?:[a-z]+ )?{_HOME})\b"
)
_STATE = re.compile(
    r"^(?:is|are|was|were) (?:the|my|our) (?:[a-z0-9'-]+ ){1,5}(?:still )?(?:on|off|open|closed|shut|locked|"
    r"unlocked|running|working|charging|plugged in|switched on|switched off|turned on|turned off|armed|disarmed|lit|"
    r"online|offline|(?:running )?(?:late|early|on schedule|behind schedule)|delayed|cancell?ed)"
    r"(?: yet| again)?$"
)
_SHOWS = re.compile(
    r"^(?:is|are|was|does|do|did|what(?:'s|s| is| does| do| did)?) (?:the|my|our) (?:[a-z0-9'-]+ ){1,4}"
    r"(?:shows?|showing|says?|saying|reads?|reading|displays?|displaying|flashing|beeping|blinking)\b"
)
"""What a thing of the user's shows, says or reads ("is the baby monitor showing she's asleep", "what does the
thermostat say", "what's the meter reading"): only someone who can look at it knows."""
_NEVER_A_FACT = r"(?:score|traffic|forecast)"
"""Readings that are never a fact, whatever they are of: "what's the score in the football match"."""
_AMBIENT = rf"(?:temperature|humidity|weather|{_NEVER_A_FACT}|wind|air quality|pollen(?: count)?|pressure)"
_MARKET = r"(?:price|prices|stock price|share price|stock market|exchange rate|interest rate|news|headlines)"
_READING = re.compile(
    rf"^(?:what|how)(?:'s| is| are| was)? (?:the|my|our) (?:[a-z]+ )?(?:{_AMBIENT}(?: like)?$|{_MARKET}\b)"
)
_ALWAYS_LIVE = re.compile(rf"^(?:what|how)(?:'s|s| is| was) the {_NEVER_A_FACT}\b")
_WEATHER = re.compile(
    r"^how (?:hot|cold|warm|cool|humid|windy|sunny|wet|dry|chilly|bright|dark|loud|noisy|busy) is it$"
    r"|^(?:is|was) it (?:raining|snowing|pouring|drizzling|freezing|hailing|storming)(?: in [a-z ]+)?$"
)


def _clean(transcript: str) -> str:
    """Lower case, sentence punctuation removed, polite openings ("okay", "can you tell me") dropped."""
    text = " ".join(re.sub(r"[.!?,;:\"]", " ", transcript.lower().replace("’", "'")).split())
    return _POLITE.sub("", text)


def asks_live_state(transcript: str) -> bool:
    """``transcript`` asks for a reading or a state of the home or the world as it is now (see the module)."""
    q = _clean(transcript)
    bare = " ".join(_TIME.sub(" ", _PLACE.sub(" ", _ON_TIME.sub(" on schedule", q))).split())  # without here and now
    if _ABOUT_YOU.search(q) or _CLOCK.search(bare):
        return False
    if _SHOWS.search(q):  # before the advice: "what does the thermostat say" asks no "what does one do"
        return True
    if not _FRAME.match(q) or _ADVICE.search(q):
        return False
    if _STATE.search(bare) or _READING.search(q) or _ALWAYS_LIVE.search(q) or _WEATHER.search(bare):
        return True
    if all(w in FUNCTION_WORDS for w in bare.split()):  # "what's today?", "which is it today?": nothing named
        return False
    return _TIME.search(q) is not None or _PLACE.search(q) is not None


def cannot_see(transcript: str) -> str | None:
    """The honest reply to a question about live state (:func:`asks_live_state`), or None."""
    return REPLY if asks_live_state(transcript) else None
