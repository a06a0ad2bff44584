"""The conversation as the LLM sees it: history, the prompt view, follow-ups, ellipsis, pronouns, the
user's words tidied, grounding, the loop guard, and :class:`~voice.conversation.skills_llm.SkillsLlm`, which lets
the skills answer first."""
