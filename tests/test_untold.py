"""Things only the user could know, asked when never told (:mod:`voice.skills.untold`), and through the skills in
front of the LLM (:class:`voice.conversation.skills_llm.SkillsLlm`): the notes say back what was told first."""

from __future__ import annotations

import pytest

from tests.skills_chat import converse
from voice.conversation.skills_llm import SkillsLlm
from voice.runtime.fakes import FakeLlm
from voice.skills.answer import clean
from voice.skills.untold import not_told


@pytest.mark.parametrize(
    ("earlier", "question", "reply"),
    [
        ([], "What's the alarm code?", "I don't know the alarm code: I haven't heard it from you."),
        (["What's the capital of Peru?"], "what's my locker number again",
         "I don't know your locker number: I haven't heard it from you."),
        ([], "what was the wifi password", "I don't know the wifi password: I haven't heard it from you."),
        ([], "what's the code for the gate", "I don't know the code for the gate: I haven't heard it from you."),
        # Maybe told, in words the notes did not take: left to the LLM, which may read it.
        (["My Wi-Fi password is Bluetooth F70."], "What's my wifi password?", None),
        (["The gl8 code for my building is 4 4 7 1."], "What was the gate code?", None),
        # Not a thing only the user could know.
        ([], "What's the atomic number of carbon?", None),
        ([], "What's the phone number for the police?", None),
        ([], "What's the code of conduct?", None),
    ],
)  # fmt: skip
def test_a_thing_only_the_user_could_know(earlier: list[str], question: str, reply: str | None) -> None:
    assert not_told(clean(question), earlier) == reply


def test_a_told_code_is_said_back_and_an_untold_one_is_not_made_up() -> None:
    llm = SkillsLlm(FakeLlm(replies=("The alarm code is 1234567890.",)))  # what SmolLM2-135M made up
    _, told = converse(llm, ["The alarm code is 4 4 1 9.", "What's 12 times 12?", "What's the alarm code?"])
    assert "4 4 1 9" in told[-1]
    _, untold = converse(llm, ["What's 12 times 12?", "What's the alarm code?"])
    assert untold[-1].startswith("I don't know the alarm code")
