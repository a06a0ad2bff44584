"""Facts about countries, a local skill: the capital, the main languages and the currency, from the data of
the ``countryinfo`` package (names of languages and currencies from ``pycountry``, the ISO tables).

SmolLM2-135M gets these wrong as often as right, and confidently: "What is the capital of Spain?" → "El
Salvador." (the main question set, text mode, 2026-12-05), "What language do most people speak in Brazil?" →
"Espaço! … Portuícho" (the third held-out set). A voice assistant is expected to be exact here, so these
question forms are matched on the transcript (cleaned by :func:`voice.skills.answer.answer`: lower case, no end mark):

* "what is the capital (city) of X", "X's capital", and the other way round, "which country is Y the capital
  of" / "Y is the capital of which country";
* "what language(s) do (most) people speak in X", "what is the (main/official) language of X", "what
  language is spoken in X";
* "what is the currency of X", "what currency does X use", "what money do they use in X".

X must name a country the data knows (its name, an alternative spelling such as "Holland", "USA", "the UK",
accents optional); anything else ("the capital of the world", "capital punishment", "what language is this")
goes on to the LLM. A currency the ISO table no longer lists (the data is older than some changes: Croatia's
kuna) is left to the LLM too, rather than said wrongly. The data's languages are the country's main ones as it
lists them, not ranked by speakers. Pure; the tables are built on first use (about 0.1 s).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Country:
    """One country as the replies name it, with the facts the skill says."""

    name: str
    """As said in a reply: "the United Kingdom", "Spain"."""
    capital: str
    languages: tuple[str, ...]
    """Names, in the data's order."""
    currency: str | None
    """The name of its currency ("Euro", "Brazilian Real"); None when the ISO table does not list it now."""
    code: str = ""
    """Its ISO 3166 two-letter code ("GB"; the United Kingdom's for its countries), "" when the data has none."""


_FUND_CODES = frozenset({"BOV", "CHE", "CHW", "CLF", "COU", "MXV", "USN", "USS", "UYI", "UYW"})
"""ISO 4217 codes of funds and accounting units, listed beside a country's currency."""
_CORRECTED_CAPITALS = {"Kazakhstan": "Astana", "Wales": "Cardiff"}  # Astana: renamed back in 2022, after the data
_MORE_COUNTRIES = (  # the United Kingdom's other countries, which the data lacks
    ("England", "London"), ("Scotland", "Edinburgh"), ("Northern Ireland", "Belfast"),
)
_WITH_THE = frozenset({
    "Bahamas", "Cayman Islands", "Central African Republic", "Comoros", "Cook Islands", "Czech Republic",
    "Democratic Republic of the Congo", "Dominican Republic", "Falkland Islands", "Faroe Islands", "Maldives",
    "Marshall Islands", "Netherlands", "Philippines", "Republic of the Congo", "Seychelles", "Solomon Islands",
    "United Arab Emirates", "United Kingdom", "United States", "Vatican City State",
})  # fmt: skip
_MORE_NAMES = {
    "america": "United States", "the states": "United States", "us": "United States", "u s": "United States",
    "usa": "United States", "u s a": "United States", "uk": "United Kingdom", "u k": "United Kingdom",
    "uae": "United Arab Emirates",
    "britain": "United Kingdom", "north macedonia": "Republic of Macedonia", "czechia": "Czech Republic",
    "the vatican": "Vatican City State", "burma": "Myanmar",
}  # fmt: skip


def _key(name: str) -> str:
    """A name as matched: no accents, lower case, only letters and single spaces, no leading "the"."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    words = re.sub(r"[^a-z]+", " ", plain).split()
    return " ".join(words[1:] if words[:1] == ["the"] else words)


def _language_name(code: str) -> str:
    import pycountry

    found = pycountry.languages.get(alpha_2=code) if len(code) == 2 else None
    name = str(getattr(found, "common_name", None) or found.name) if found is not None else code
    name = re.sub(r"\s*\(.*\)$", "", name)  # "Swahili (macrolanguage)"
    return name.removeprefix("Modern ")  # "Modern Greek (1453-)"


def _currency_name(codes: list[str]) -> str | None:
    import pycountry

    for code in codes:
        if code not in _FUND_CODES and (found := pycountry.currencies.get(alpha_3=code)) is not None:
            return str(found.name)
    return None


@functools.cache
def _tables() -> tuple[dict[str, Country], dict[str, Country]]:
    """Countries by every name they are asked by, and by their capital's name."""
    import countryinfo

    by_name: dict[str, Country] = {}
    by_capital: dict[str, Country] = {}
    for info in countryinfo.all_countries():
        name, capital = info.name(), _CORRECTED_CAPITALS.get(info.name(), info.capital())
        if isinstance(capital, list):  # one country's is a list of one
            capital = capital[0] if capital else None
        if not name or not isinstance(capital, str) or not capital:
            continue
        said = name.removeprefix("The ")
        country = Country(
            name=f"the {said}" if said in _WITH_THE else said,
            capital=capital,
            languages=tuple(dict.fromkeys(_language_name(c) for c in info.languages() or [])),
            currency=_currency_name(info.currencies() or []),
            code=str((info.iso() or {}).get("alpha2") or ""),
        )
        # Not the two- and three-letter codes among the spellings: "IT" would make "What currency does it use?"
        # a question about Italy. The few codes people say are in _MORE_NAMES.
        names = [name, *(a for a in info.alt_spellings() or [] if len(a) >= 4)]
        for n in names:
            by_name.setdefault(_key(n), country)
        by_capital.setdefault(_key(capital), country)
    if (uk := by_name.get(_key("United Kingdom"))) is not None:
        for name, capital in _MORE_COUNTRIES:
            extra = Country(name, capital, uk.languages, uk.currency, uk.code)
            by_name.setdefault(_key(name), extra)
            by_capital.setdefault(_key(capital), extra)
    for alias, name in _MORE_NAMES.items():
        if _key(name) in by_name:
            by_name.setdefault(_key(alias), by_name[_key(name)])  # keyed as looked up: "the states" → "states"
    return by_name, by_capital


def load() -> None:
    """Build the tables now rather than on the first question (~0.1 s)."""
    _tables()


def country(name: str) -> Country | None:
    """The country ``name`` names ("Spain", "the UK", "Holland", "Brasil"), else None."""
    return _tables()[0].get(_key(name))


_ASK = r"(?:(?:what'?s|what is|what|which city is|tell me|do you know|name|and|so) )*"
_OF = r"(?:of|on|in|for)"  # Whisper's "capital city on the Egypt"
_REALLY = r"(?:(?:actual|real|official|proper|current) )?"
"""A word that insists on the thing itself: "the actual capital of Morocco" (not the biggest city)."""
_CAPITAL = (
    re.compile(rf"{_ASK}(?:the |a )?{_REALLY}capital(?: city)? {_OF} (?P<c>[^?]+?)(?: is)?"),
    re.compile(r"(?:what'?s |what is )(?P<c>[^?]+?)(?:'s| s) capital(?: city)?"),
)
_CAPITAL_OF_WHICH = (
    re.compile(r"(?:which|what) country(?: is| has)? (?P<y>[^?]+?) (?:as )?(?:the |its )?capital(?: of| city of)?"),
    re.compile(r"(?P<y>[^?]+?) is the capital(?: city)? of (?:which|what) country"),
)
_LANGUAGE = (
    re.compile(
        r"(?:what|which) languages? (?:do|does) (?:most |the )?(?:people|they|you|locals) (?:speak|talk) in "
        r"(?P<c>[^?]+)"
    ),
    re.compile(r"what(?:'s| is| are) the (?:main |official |national )?languages? (?:of|in|spoken in) (?P<c>[^?]+)"),
    re.compile(r"(?:what|which) languages? (?:is|are) spoken in (?P<c>[^?]+)"),
)
_CURRENCY = (
    re.compile(rf"what(?:'s| is) the {_REALLY}(?:currency|money) (?:of|in|used in) (?P<c>[^?]+)"),
    re.compile(r"what (?:currency|money) (?:do|does) (?:they|people|you) use in (?P<c>[^?]+)"),
    re.compile(r"what currency (?:does|do) (?P<c>[^?]+?) use"),
    re.compile(r"what currency is used in (?P<c>[^?]+)"),
)


def _matched(patterns: tuple[re.Pattern[str], ...], t: str) -> Country | None:
    for p in patterns:
        if (m := p.fullmatch(t)) is not None and (found := country(m.group("c"))) is not None:
            return found
    return None


def _listed(names: tuple[str, ...]) -> str:
    shown = list(names[:4]) + (["others"] if len(names) > 4 else [])
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _capital_of(t: str) -> str | None:
    for p in _CAPITAL_OF_WHICH:
        if (m := p.fullmatch(t)) is not None and (found := _tables()[1].get(_key(m.group("y")))) is not None:
            return f"{found.capital.rstrip('.')} is the capital of {found.name}."
    return None


def answer(t: str) -> str | None:
    """The reply to a question about a country's capital, languages or currency in cleaned transcript ``t``;
    None when it is not one, or names no country the data knows."""
    if (found := _matched(_CAPITAL, t)) is not None:
        return f"The capital of {found.name} is {found.capital.rstrip('.')}."
    if (reply := _capital_of(t)) is not None:
        return reply
    if (found := _matched(_LANGUAGE, t)) is not None and found.languages:
        if len(found.languages) == 1:
            return f"The main language of {found.name} is {found.languages[0]}."
        return f"The main languages of {found.name} are {_listed(found.languages)}."
    if (found := _matched(_CURRENCY, t)) is not None and found.currency is not None:
        return f"The currency of {found.name} is the {found.currency}."
    return None


def named_in(text: str) -> list[Country]:
    """The countries ``text`` names, by names of one to three words ("Portugal", "the United Kingdom"; not codes
    such as "am" or "us"), each once, in order."""
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower())
    found: list[Country] = []
    for i in range(len(words)):
        for width in (3, 2, 1):
            name = " ".join(words[i : i + width]) if i + width <= len(words) else ""
            # a short word alone is a code or a word ("am", "us", "in"), not a name said: only "UK", "USA"
            c = country(name) if len(name) > 3 or name in ("uk", "usa") else None
            if c is not None and c not in found:
                found.append(c)
                break
    return found


def answer_there(t: str, before: str) -> str | None:
    """A question at the end of a turn that asks about "there" ("We just got back from Portugal … what currency do
    they use there?"): asked of the one country named in ``before``; None when ``t`` says no "there", or
    ``before`` names no country or more than one (which one is meant would be a guess). ``t`` is cleaned."""
    if not re.search(r"\bthere\b", t) or len(named := named_in(before)) != 1:
        return None
    return answer(re.sub(r"\s*\bthere\b", f" in {named[0].name.lower()}", t, count=1).strip())
