"""The chemical elements, a local skill: symbols and atomic numbers, both ways, from the ``periodictable``
package (NIST's table, public domain).

SmolLM2-135M is unreliable here: "Which element has the chemical symbol K?" → "The chemical symbol for K is K."
(the fourth held-out quality set). Every blind question set written since has asked one. Matched on the
transcript as :func:`voice.skills.answer.answer` cleans it (lower case, no end mark):

* "what is the (chemical) symbol for/of X", "what is X's symbol";
* "which element has the (chemical) symbol S" (the word "symbol" must be said: "which element is he" is a
  question about someone, not helium);
* "what is the atomic number of X";
* "which element has atomic number N" ("element number one" too).

X must be an element's name (British and American spellings: aluminium, caesium, sulphur); anything else
("the symbol for water", "the symbol of peace") goes on to the LLM. A two-letter symbol is spelled out after
it, since the voice reads "Au" as a word. Pure; the table loads on first use (about 0.05 s).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from voice.skills.numbers import parse_number


@dataclass(frozen=True)
class Element:
    """One element of the table: its English name (American spelling, as the table has it), symbol, number."""

    name: str
    symbol: str
    number: int


_SPELLINGS = {"aluminium": "aluminum", "caesium": "cesium", "sulphur": "sulfur"}


@functools.cache
def _table() -> tuple[dict[str, Element], dict[str, Element], dict[int, Element]]:
    """Elements by name, by lower-case symbol and by atomic number (not the neutron, number 0)."""
    import periodictable

    elements = [Element(e.name, e.symbol, e.number) for e in periodictable.elements if e.number > 0]
    by_name = {e.name: e for e in elements}
    by_name |= {alias: by_name[name] for alias, name in _SPELLINGS.items()}
    return by_name, {e.symbol.lower(): e for e in elements}, {e.number: e for e in elements}


def load() -> None:
    """Load the table now rather than on the first question (~0.05 s)."""
    _table()


def _said(symbol: str) -> str:
    """ "Au, spelled A U" (the voice reads a two-letter symbol as a word), "K"."""
    return symbol if len(symbol) == 1 else f"{symbol}, spelled {' '.join(symbol.upper())}"


_ASK = r"(?:(?:what'?s|what is|what|do you know|tell me) )?"
_SYMBOL_OF = (
    re.compile(rf"{_ASK}(?:the|a) (?:chemical |atomic |element )?symbol (?:for|of) (?:the element )?(?P<e>[a-z]+)"),
    re.compile(rf"{_ASK}(?P<e>[a-z]+)(?:'s| s) (?:chemical )?symbol"),
)
_WITH_SYMBOL = re.compile(
    r"(?:which|what) (?:chemical )?element (?:has|is|uses|goes by) (?:the )?(?:chemical |atomic )?symbol "
    r"(?P<s>[a-z]{1,2})"
)
_NUMBER_OF = re.compile(rf"{_ASK}(?:the|an) atomic number (?:of|for) (?P<e>[a-z]+)")
"""With "a"/"an" for "the" too: Whisper hears one for the other ("what's a chemical symbol for iron")."""
_WITH_NUMBER = re.compile(
    r"(?:which|what) element (?:has|is|with) (?:the )?(?:atomic number|number) (?P<n>[\w -]+)"
    r"|(?:what|which) is element (?:number )?(?P<m>[\w -]+)"
)


def answer(t: str) -> str | None:
    """The reply to a question about an element's symbol or atomic number in cleaned transcript ``t``, else
    None."""
    by_name, by_symbol, by_number = _table()
    for p in _SYMBOL_OF:
        if (m := p.fullmatch(t)) and (e := by_name.get(m.group("e"))) is not None:
            return f"The chemical symbol for {e.name} is {_said(e.symbol)}."
    if (m := _WITH_SYMBOL.fullmatch(t)) and (e := by_symbol.get(m.group("s"))) is not None:
        return f"{e.name.capitalize()} has the symbol {_said(e.symbol)}."
    if (m := _NUMBER_OF.fullmatch(t)) and (e := by_name.get(m.group("e"))) is not None:
        return f"The atomic number of {e.name} is {e.number}."
    if m := _WITH_NUMBER.fullmatch(t):
        n = parse_number(m.group("n") or m.group("m"))
        if n is not None and n == int(n) and (e := by_number.get(int(n))) is not None:
            return f"The element with atomic number {e.number} is {e.name}."
    return None
