"""Requests the assistant cannot carry out, recognised on the transcript and answered honestly without the LLM.

The assistant has no devices, sensors, internet connection, maps, media player, phone, apps, calendar or camera.
Asked to do something that needs one, a small model pretends: "Turn on the lamp" → "The lamp is on.", "Will
it rain tomorrow?" → "It's not going to rain tomorrow." (``voice bench quality``, category ``cannot``: 3 of
18 right with SmolLM2-135M and the honest system prompt). A voice assistant must say what it cannot do, so
these requests are matched by intent before any LLM, the way Home Assistant matches its intents first, and
get a short, true reply that says which ability is missing. Anything not matched goes to the LLM.

The patterns describe intents, not the question set's sentences: a verb of control with a thing one would
control ("switch the heating off", "dim the bedroom lights"), a question about live information ("do I need
an umbrella today?"), an imperative to play, call, launch or book. Questions *about* such things stay with
the LLM ("How does a thermostat work?", "Why does it rain?", "Who invented the telephone?"); the tests hold
both kinds (``tests/test_capabilities.py``). Timers, the time and the date are skills (:mod:`voice.skills.answer`),
not refusals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_POLITE = r"^(?:(?:ok(?:ay)?|hey|hi|so|and|now|please|assistant|computer)[, ]+)*"
_ASK = r"(?:(?:can|could|would|will) you (?:please )?|i want you to |i'?d like you to |i need you to |please )?"
_START = _POLITE + _ASK
_DEVICE = (
    r"(?:lights?|lamps?|heating|heater|thermostat|air ?con(?:ditioning)?|a/?c|fan|tv|television|radio|"
    r"oven|stove|kettle|coffee (?:machine|maker)|dishwasher|washing machine|dryer|vacuum|robot|"
    r"garage(?: door)?|front door|back door|door|gate|windows?|blinds|curtains|shutters|sprinklers?|"
    r"alarm system|security system|plugs?|sockets?|switch(?:es)?|speakers?|volume)"
)
DEVICE = _DEVICE
"""The things at home one would control, as a regular expression's alternatives ("lights?|lamps?|heating|…")."""
WHAT_I_CAN_DO = (
    "I can answer questions, tell the time and the date, do sums and conversions, and set timers, but I can't "
    "control devices, play music, make calls or look things up online."
)
"""What the assistant can do, and the main things it cannot: said instead of a reply that claimed otherwise
(:mod:`voice.conversation.reply_check`)."""
_THINGS = r"(?:the |my |all (?:the )?|a |some )?(?:[\w'-]+ ){0,3}"
_WHEN = (
    r"(?:today|tonight|tomorrow|(?:this|next) (?:morning|afternoon|evening|week|weekend)|the weekend|right now|now|"
    r"outside|later)"
)
_WEATHER_WORD = r"(?:weather|forecast|rain|snow|storm|sunny|cloudy|windy|umbrella|temperature|degrees)"
_NOT_A_QUESTION_ABOUT = r"^(?!.*\b(?:why|how (?:does|do|did|can|could)|what (?:causes|makes)|who invented|explain)\b)"


@dataclass(frozen=True)
class Limit:
    """One thing the assistant cannot do: what it is called, how a request for it sounds, the honest reply."""

    name: str
    pattern: re.Pattern[str]
    reply: str


def _re(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


LIMITS: tuple[Limit, ...] = (
    Limit(
        "devices",
        _re(
            _START + rf"(?:turn|switch|power|shut)(?: {_THINGS}{_DEVICE})? (?:on|off|up|down)\b",
            _START + rf"(?:turn|switch|power|shut|bump|crank) (?:on|off|up|down) {_THINGS}{_DEVICE}\b",
            _START + rf"(?:bump|crank) {_THINGS}{_DEVICE} (?:up|down)\b",
            _START + rf"(?:dim|brighten|lock|unlock|open|close|shut|start|stop|pause|mute|unmute|arm|disarm)"
            rf" {_THINGS}{_DEVICE}\b",
            _START + rf"(?:set|change|put|raise|lower) {_THINGS}{_DEVICE}\b",
            rf"^(?:is|are|did i leave) {_THINGS}{_DEVICE} (?:still )?(?:open|closed|on|off|locked|unlocked|running)\b",
        ),
        "I can't do that: I'm not connected to any lights, doors or appliances, so I can't control or check them.",
    ),
    Limit(
        "sensors",
        _re(
            r"\b(?:temperature|humidity) (?:in|of) (?:this|the|my|our) (?:room|house|home|flat|kitchen|bedroom|office)",
            r"\bhow (?:warm|cold|hot|humid) is it (?:in here|inside|in this room|in the house)",
            r"\bwhat'?s the (?:temperature|humidity)(?: like)? (?:in here|inside)\b",
        ),
        "I can't tell: I have no sensors, so I don't know the temperature or anything else about the room.",
    ),
    Limit(
        "weather",
        _re(
            _NOT_A_QUESTION_ABOUT + rf".*\b{_WEATHER_WORD}\b.*\b{_WHEN}\b",
            r"\b(?:what'?s|what is|how'?s|how is) the (?:weather|forecast)\b",
            r"\bweather (?:like|forecast|report|today|tomorrow|tonight|this week|for)\b",
            r"^(?:will|is) it (?:going to )?(?:rain|snow|be (?:sunny|cold|hot|warm|windy))\b",
            r"\bdo i need (?:an umbrella|a coat|a jacket)\b",
        ),
        "I can't check the weather: I have no internet connection, so I don't know the forecast.",
    ),
    Limit(
        "news",
        _re(
            r"\b(?:the|today'?s|latest|top|any|some) (?:(?:top|latest|local|world|sports) )?(?:news|headlines)\b",
            r"\bnews (?:today|this morning|tonight)\b",
            r"\b(?:stock|share) prices?\b",
            r"\b(?:price|value) of (?:bitcoin|gold|oil|[\w.]+ (?:stock|shares))\b",
            r"\b(?:who won|who'?s winning|who is winning|what(?:'s| is| was) the (?:final )?score)\b"
            r".*\b(?:game|match|race|last night|today|yesterday|tonight)\b",
            r"\bexchange rate\b.*\b(?:today|now)\b",
        ),
        "I can't look that up: I have no internet connection, so I don't know today's news, prices or scores.",
    ),
    Limit(
        "maps",
        _re(
            _NOT_A_QUESTION_ABOUT + r".*\btraffic\b(?! (?:light|lights|jam|jams|law|laws|cone|cones)\b)",
            r"\b(?:directions|route) (?:to|from) (?!(?:make|cook|bake|use|build|do|fix)\b)",
            _START + r"(?:navigate|take me|drive me) to\b",
            r"\bhow (?:long|far) (?:will it take|does it take|is it) to (?:drive|walk|get|cycle) to\b",
            r"\b(?:nearest|closest) (?:[\w-]+ )?(?:station|restaurant|shop|store|supermarket|pharmacy|chemist|"
            r"hospital|petrol station|gas station|cafe|coffee shop|atm|bank|bar|pub|hotel)\b",
        ),
        "I can't do that: I have no maps, traffic or location service.",
    ),
    Limit(
        "media",
        _re(
            _START + r"play (?!(?:a |the )?games?\b|with me\b|(?:twenty|20) questions\b|a joke\b|trivia\b)\S",
            _START + r"(?:put on|queue|shuffle|skip) (?:some |the |my |a |this |next )?(?:music|songs?|tracks?|"
            r"album|playlist|radio|podcast)",
            _START + r"(?:next|previous) (?:song|track)\b",
        ),
        "I can't play anything: I'm not connected to a music player or any speakers but my own voice.",
    ),
    Limit(
        "phone",
        _re(
            _START + r"(?:call|phone|ring|dial|facetime|text|message|email|e-mail) (?!me\b)(?:my |the )?[\w'-]+",
            # Whisper writes the imperative in the past at times: "Call my mother." → "called my mother." Only the
            # whole transcript ("Called my mother yesterday, she's fine." tells, it does not ask).
            _POLITE + r"(?:called|phoned|rang|texted|messaged|emailed|e-mailed) my [\w'-]+$",
            _START + r"send (?:a |an )?(?:text|message|email|e-mail|sms)\b",
            r"\bread (?:me )?(?:my |the )?(?:(?:latest|last|new|newest|recent|unread) )?"
            r"(?:messages|texts|emails|e-mails|mail)\b",
            r"\b(?:check|checking) (?:my |the )?(?:emails?|e-mails?|messages|texts|mail|inbox|voicemail)\b",
            r"\b(?:do i have|have i got|are there|any) (?:any )?(?:new |unread )?"
            r"(?:emails?|e-mails?|messages|texts|mail|voicemails?)\b",
        ),
        "I can't do that: I have no phone, contacts or email.",
    ),
    Limit(
        "apps",
        _re(
            _START + r"(?:launch|run|start|open|close|quit|kill) (?:the |my |a )?(?:app|application|program|"
            r"browser|firefox|chrome|safari|edge|spotify|youtube|netflix|terminal|calculator|settings|"
            r"file manager|email|mail|word|excel|steam|slack|zoom|whatsapp|[\w-]+ app)\b",
            _START + r"launch \S",
            _START + r"(?:search|google|look up|browse)\b (?:the web|online|the internet|for)\b",
        ),
        "I can't do that: I can't open or control apps or the web on your computer.",
    ),
    Limit(
        "calendar",
        _re(
            r"\b(?:my (?:calendar|schedule|agenda|diary|appointments?|meetings?)|on the calendar)\b",
            r"\bdo i have (?:any )?(?:meetings?|appointments?|plans)\b",
            _START + r"(?:remind me|wake me|set (?:an |my )?alarm|add (?:a |an )?(?:event|appointment|meeting|reminder)"
            r"|book (?:a |an |me )|schedule (?:a |an )|add [\w' -]+ to my (?:shopping |to-?do )?list)",
            _START + r"order (?:me )?(?:a |an |some )?\w+",
        ),
        "I can't do that: I have no calendar, alarms, reminders or lists, and I can't order anything.",
    ),
    Limit(
        "camera",
        _re(
            _START + r"(?:check|show me|look at|open|turn on) (?:the |my )?(?:[\w-]+ )?(?:camera|doorbell|cctv|webcam)",
            r"\b(?:check|on) (?:the |my )?(?:[\w-]+ )?(?:camera|doorbell|cctv|webcam)\b",
            r"\bwho(?:'s| is) at the (?:front |back )?door\b",
            r"\bcan you see (?:me|this|that|what)\b",
        ),
        "I can't see anything: I have no camera, only a microphone.",
    ),
)


def _clean(transcript: str) -> str:
    """Lower case, spaces collapsed, sentence punctuation removed (Whisper adds it inconsistently)."""
    return " ".join(re.sub(r"[.!?,;:\"]", " ", transcript.lower()).split())


def limit_for(transcript: str) -> Limit | None:
    """The ability ``transcript`` asks for that the assistant lacks, or None (the LLM answers)."""
    text = _clean(transcript)
    return next((lim for lim in LIMITS if lim.pattern.search(text)), None)


def cannot(transcript: str) -> str | None:
    """The honest reply to a request the assistant cannot carry out, or None."""
    found = limit_for(transcript)
    return found.reply if found is not None else None
