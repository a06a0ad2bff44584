"""One turn from audio to reply: the listener, the end-of-turn decision (:mod:`~voice.turn.endpoint`,
:mod:`~voice.turn.speech_end`), speculation, the pipeline (STT → LLM → sentences → TTS), delivery, asking
again, and the latency budget."""
