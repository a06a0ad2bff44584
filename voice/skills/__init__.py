"""Skills: exact answers matched on the transcript, without the LLM.

:func:`voice.skills.answer.answer` asks each skill of :data:`voice.skills.answer.SKILLS` in turn; the first
reply wins, and a transcript no skill takes goes to the LLM. The conversation layer puts them in front of the
LLM (:class:`voice.conversation.skills_llm.SkillsLlm`).

**Adding a skill** (one way):

1. Write ``voice/skills/<name>.py`` with ``answer(text: str) -> str | None``. ``text`` is the cleaned transcript
   (lower case, end punctuation removed). Return the spoken reply, or None when the text is not yours. Match
   the whole request (``re.fullmatch``), not a word in it. Parse numbers with :mod:`voice.skills.numbers`. Load
   any table lazily, on the first question that needs it.
2. Add ``("<name>", lambda t, _now: <name>.answer(t))`` to ``SKILLS`` in :mod:`voice.skills.answer`, before any
   skill that would wrongly take its questions.
3. Add rows for it to ``CASES`` in ``tests/test_skills_table.py``: questions it answers (with a word the reply
   must hold) and near-misses it must leave to the LLM. Every skill needs both.

Skills import only the runtime and the base layers (``tests/test_layers.py``). Stateful helpers live here too:
timers (:mod:`voice.skills.timers`), notes and personal facts the user told, and the honest "I can't" for
requests no skill or model can carry out (:mod:`voice.skills.capabilities`).
"""
