"""The config's sections: one frozen dataclass per table of ``config.toml``, its defaults equal to the values in
the repository's ``config.toml``.

They hold values and nothing else. The rules a value must meet are in :mod:`voice.config.checks`, and they run
whenever a whole :class:`~voice.config.config.Config` is made (a section made on its own is not checked).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str = field(default="", repr=False)
    allowed_origins: tuple[str, ...] = ()
    max_message_bytes: int = 262144
    realtime_max_message_bytes: int = 2097152
    max_sessions: int = 8
    max_queue: int = 4
    session_max_s: float = 3600.0
    idle_timeout_s: float = 300.0
    max_ingress_realtime: float = 4.0
    start_timeout_s: float = 10.0
    ping_interval_s: float = 20.0
    ping_timeout_s: float = 20.0
    close_timeout_s: float = 5.0
    write_limit_bytes: int = 65536
    send_queue_frames: int = 256
    shutdown_grace_s: float = 3.0
    turn_log: str = "logs/turns.jsonl"
    record: bool = False


@dataclass(frozen=True)
class VadConfig:
    threshold: float = 0.5
    neg_threshold: float = 0.5
    min_speech_ms: int = 160
    silence_ms: int = 320
    pre_roll_ms: int = 300
    max_utterance_s: float = 30.0
    barge_in: bool = True


@dataclass(frozen=True)
class TurnConfig:
    """When a turn ends, and how much of the reply is prepared before it does (see config.toml)."""

    speculate_after_ms: int = 32
    """After this much silence inside speech, start the reply speculatively (0 = off)."""
    end_of_turn_model: str = "smart-turn-v3.2"
    """Catalogue name of an end-of-turn classifier ("" = silence window only)."""
    complete_threshold: float = 0.5
    """The classifier's probability at or above which the turn counts as complete."""
    complete_silence_ms: int = 320
    """With the classifier: a turn it scores complete ends after this much silence."""
    incomplete_silence_ms: int = 960
    """With the classifier: a turn it scores incomplete ends after this much silence."""
    score_after_ms: int = 96
    """With the classifier: it is asked once the VAD has heard this much silence (at most complete_silence_ms)."""
    sure_threshold: float = 0.9
    """With the classifier and ``sure_silence_ms``: its probability at or above which the turn is *surely*
    complete and ends after the shorter ``sure_silence_ms``."""
    sure_silence_ms: int = 0
    """With the classifier: a turn it scores at or above ``sure_threshold`` ends after this much silence
    (graded windows); 0 = off (every complete score waits ``complete_silence_ms``)."""
    text_evidence: bool = True
    """With the classifier: the speculative transcript's words also decide (:mod:`voice.turn.text_evidence`):
    words that cannot end a sentence keep the long window, and the sure window waits for the words."""
    text_finished_silence_ms: int = 0
    """With ``text_evidence``: a turn the classifier scored unfinished whose words read finished (a question
    mark, a command a skill recognises) ends after this much silence instead of ``incomplete_silence_ms``;
    0 = off."""
    words_model: str = "smollm2-135m"
    """With the classifier and ``text_evidence``: catalogue name of a language model (an ``llm`` entry, e.g.
    ``smollm2-135m``) that reads the speculative transcript and gives the probability that its words end the turn
    (:mod:`voice.turn.words_end`); "" = off. Without them it is not loaded (:attr:`reads_words`)."""
    words_unfinished_below: float = 0.02
    """With ``words_model``: words it says end the turn with less than this probability keep the long window,
    whatever the classifier's score."""
    words_finished_at: float = 0.2
    """With ``words_model``: words it says end the turn with at least this probability give a turn the classifier
    scored unfinished the complete window."""
    graded_window: bool = False
    """With the classifier: a turn it scored under ``complete_threshold`` ends after a window that shortens as
    the score rises, from ``incomplete_silence_ms`` at 0 to ``complete_silence_ms`` at the threshold
    (:func:`voice.turn.end_window.graded_ms`), instead of always the long one; words that cannot end a sentence
    still keep the long window."""
    rescore_at_ms: tuple[int, ...] = ()
    """With the classifier: a turn it scored incomplete is scored again, on the audio so far, when the VAD's
    silence reaches each of these (ms, increasing, under ``incomplete_silence_ms``): more silence is more
    evidence, and a finished question it first heard as unfinished need not wait the whole long window."""
    pause_energy_drop_db: float = 30.0
    """A frame this many dB under the utterance's loudest counts towards the pause (not the end); 0 = VAD only."""
    score_in_gate: bool = False
    """True: the end-of-turn model runs alone on the cores (the compute gate, before any other step) in a model
    thread, instead of on the VAD thread beside the speculative reply's STT and LLM."""
    end_on_energy: bool = False
    """After a pause found on energy, the turn's silence window also counts from the energy drop (once the VAD
    hears silence too), so the VAD's lag after the last word is not added to the window."""

    @property
    def reads_words(self) -> str:
        """The words model in use: ``words_model`` when there is a classifier and ``text_evidence`` is on, else ""
        (it acts on the words beside the classifier's score, so without them it is not loaded)."""
        return self.words_model if self.end_of_turn_model and self.text_evidence else ""


@dataclass(frozen=True)
class SttConfig:
    model: str = "tiny.en"
    compute_type: str = "int8"
    beam_size: int = 3
    language: str = "en"
    cpu_threads: int = 2
    """CTranslate2's threads for the encoder (and for the decoder when ``decode_threads`` is the same)."""
    decode_threads: int = 1
    """CTranslate2's threads for the decoder. When it differs from ``cpu_threads`` the decoder runs on its own copy
    of the model (tiny.en: ~40 MB more) with this many threads: on 2 cores one decoder thread is ~2x faster than
    two (a step is too small to share), while the encoder gains from two."""
    min_window_s: float = 10.0
    """Encode at least this many seconds (the real length + ``pad_s``); 0 = always Whisper's full 30 s."""
    pad_s: float = 2.56
    """Padding after the utterance in the short window."""
    pad_silence: bool = False
    """Pad the short window with the log-mel of silence (Whisper's training: zero audio) instead of zeros."""
    initial_prompt: str = ""
    """Text Whisper sees as if it came just before the utterance (spelling, style, domain words)."""
    hotwords: tuple[str, ...] = ()
    """Names and domain words Whisper should prefer (faster-whisper's ``hotwords`` prompt)."""
    backend: str = "local"
    """"local": faster-whisper in this process; "wyoming": a Wyoming ASR server at ``uri``."""
    uri: str = ""
    """With ``backend = "wyoming"``: the server, ``tcp://HOST:PORT``."""
    timeout_s: float = 30.0
    """With ``backend = "wyoming"``: connecting, and each wait for the server, may take this long."""
    ask_again: bool = True
    """When the STT is unsure of what it heard (``ask_again_below_logprob``), reply ``ask_again_reply`` instead
    of answering words the user probably did not say; neither goes into the conversation's history."""
    ask_again_below_logprob: float = -0.6
    """The STT's mean log-probability per token under which it counts as unsure (local backend only: a Wyoming
    server gives no confidence)."""
    ask_again_llm_below_logprob: float = -0.4
    """The stricter bar for words no skill takes, which the LLM would answer (it makes up an answer to a misheard
    question as readily as to a heard one): under it they are asked again too. At or under
    ``ask_again_below_logprob``: no stricter bar (:mod:`voice.turn.ask_again`)."""
    ask_again_llm_below_word_prob: float = 0.0
    """Words no skill takes whose least likely word (:attr:`~voice.runtime.model_api.Heard.min_word_prob`) is
    under this probability are asked again too, however sure the mean is: one misheard word in a sentence. 0 =
    off, and the word probabilities (a decoder pass, ~15 ms) are not read (local backend only). Off by default:
    the fit's 0.3 traded one right answer per wrong one caught and slowed the loop (config.toml)."""
    ask_again_reply: str = "Sorry, I didn't catch that. Could you say it again?"
    ask_again_llm_above_words: int = 12
    """With ``ask_again``: words no skill takes that run to more than this many (hesitations not counted) are not
    handed to the LLM; ``ask_shorter_reply`` asks for the question in fewer words. 0 = off. A small LLM answers a
    long, rambling turn badly (:mod:`voice.turn.ask_again`)."""
    ask_shorter_reply: str = "Sorry, I lost the question in all that. Could you ask it in a few words?"
    skills_take_unsure: bool = True
    """With ``[llm] skills``: an unsure transcript that a local skill recognises whole (a sum, a conversion, the
    clock, a timer, a request it cannot carry out), or as a follow-up it answers from the conversation ("and
    30?" after a conversion), is answered, not asked again (:mod:`voice.turn.ask_again`)."""
    unsure_beam_size: int = 0
    """When a short-window greedy decode is unsure (below ``ask_again_below_logprob``), decode the same encoded
    audio again with this beam and keep whichever is surer, before asking the user again; 0 = never. Only
    unsure turns pay for it (the encoder is not run again)."""
    unsure_full_window: bool = False
    """When a short-window decode is unsure (below ``ask_again_below_logprob``), transcribe the utterance again on
    Whisper's full 30 s window and keep whichever is surer, before asking the user again. Only unsure turns pay
    for it (a second encoder pass: ~300 ms for tiny.en on 2 cores)."""

    def unsure(self, avg_logprob: float | None) -> bool:
        """The STT's confidence says its words are probably wrong: ask the user again (``ask_again``)."""
        return self.ask_again and self.doubtful(avg_logprob)

    def unsure_for_llm(self, avg_logprob: float | None, min_word_prob: float | None = None) -> bool:
        """:meth:`unsure` with the stricter bars for words only the LLM would answer (``ask_again_llm_below_logprob``,
        or ``ask_again_below_logprob`` where that is stricter; ``ask_again_llm_below_word_prob`` for the least
        likely word)."""
        bar = max(self.ask_again_below_logprob, self.ask_again_llm_below_logprob)
        word_unsure = min_word_prob is not None and min_word_prob < self.ask_again_llm_below_word_prob
        return self.ask_again and ((avg_logprob is not None and avg_logprob < bar) or word_unsure)

    def doubtful(self, avg_logprob: float | None) -> bool:
        """Under ``ask_again_below_logprob`` (None: the backend gives no confidence), whether or not ``ask_again``
        is on: what ``unsure_beam_size`` and ``unsure_full_window`` decode again."""
        return avg_logprob is not None and avg_logprob < self.ask_again_below_logprob


@dataclass(frozen=True)
class LlmConfig:
    backend: str = "llama"
    """"llama": llama-cpp-python in this process; "openai": an OpenAI-compatible streaming server."""
    model: str = "smollm2-135m"
    """Catalogue name (backend "llama"), or the model name the server serves (backend "openai")."""
    base_url: str = "http://127.0.0.1:8080/v1"
    """Backend "openai": the API root; requests go to ``{base_url}/chat/completions``."""
    api_key_env: str = ""
    """Backend "openai": the environment variable holding the API key ("" = none is sent)."""
    connect_timeout_s: float = 2.0
    """Backend "openai": longest wait for the TCP (and TLS) connection."""
    read_timeout_s: float = 10.0
    """Backend "openai": longest wait for the first token, or for any next piece of the stream."""
    request_logprobs: bool = True
    """Backend "openai": ask the server for each token's log-probability, which ``not_sure`` needs. vLLM and
    llama.cpp's server compute them natively; llama-cpp-python's server sorts the whole vocabulary in Python per
    token (measured here with SmolLM2: reply p50 358 -> 990 ms, docs/scaling.md). A server that refuses them is
    asked without."""
    n_ctx: int = 2048
    n_threads: int = 2
    n_batch: int = 256
    max_reply_tokens: int = 96
    temperature: float = 0.0
    system_prompt: str = (
        "You are a voice assistant running on the user's computer. Answer in one or two short, plain "
        "sentences. You cannot control devices, lights, doors or apps, play music, make calls, send "
        "messages, or see the weather, news, prices or sensors: when asked, say you can't do that. "
        "If you don't know, say so."
    )
    repeat_penalty: float = 1.1
    max_reply_sentences: int = 3
    grounding: bool = False
    location: str = ""
    tidy_user_text: bool = True
    """Show the model each user message with a capital first letter and a question ending in "?", as people
    type (the STT often writes "who was …." instead); history and clients keep the words as heard."""
    resolve_follow_ups: bool = True
    """Show the model (and the skills) a follow-up written out: "How about Germany?" after "What is the capital of
    France?" as "What is the capital of Germany?", "When was he born?" after a reply naming William Shakespeare as
    "When was William Shakespeare born?" (:mod:`voice.conversation.follow_ups`); history and clients keep the
    words as heard."""
    self_repair: bool = True
    """Show the skills and the model a turn that corrects itself as meant: "set a timer for three minutes, no,
    make it four" as "set a timer for four minutes" (:mod:`voice.conversation.self_repair`); history and clients
    keep the words as heard."""
    skills: bool = True
    kv_cache_mb: int = 256
    """Memory for saved per-conversation KV states (0 = off: only the live context is reused)."""
    not_sure: bool = True
    """Replace an LLM reply whose first sentence the model was unsure of with :attr:`not_sure_reply`
    (:mod:`voice.conversation.answer_confidence`)."""
    not_sure_below_logprob: float = -0.6
    """"Unsure", for words the STT heard: the first sentence's mean token log-probability (its first token left
    out) is below this."""
    not_sure_reply: str = "I'm not sure."
    not_sure_typed: bool = True
    """Gate typed text too (the browser's text box, Home Assistant's agent given words our STT did not send). On
    the thirteen question sets typed, the gate costs 14 right answers and catches 24 wrong ones (docs/quality.md);
    off, typed right % is never lower than without the gate, and wrong % is higher."""
    not_sure_typed_below_logprob: float = -0.9
    """:attr:`not_sure_below_logprob` for typed text: typed words are what the user meant, so only the model's own
    doubt counts, and a stricter bar would cost typed right answers (docs/quality.md)."""


@dataclass(frozen=True)
class TtsConfig:
    model: str = "joe-medium"
    chunk_ms: int = 40
    length_scale: float = 1.0
    onnx_threads: int = 2
    min_first_clause_words: int = 3
    max_first_chunk_words: int = 6
    """A first sentence this long without a comma is cut at a word break (0 = never): sooner first audio."""
    trim_lead_ms: float = 10.0
    """The reply's first audio starts this long before its first sound (-1 = keep Piper's silent lead)."""
    stream_first_ms: float = 250.0
    """Piper's decoder runs on pieces of each sentence, the first about this long, and each piece is sent as it
    is ready (:mod:`voice.backends.piper_stream`); 0 = a sentence is one call and one piece."""
    backend: str = "local"
    """"local": Piper in this process; "wyoming": a Wyoming TTS server at ``uri``."""
    uri: str = ""
    """With ``backend = "wyoming"``: the server, ``tcp://HOST:PORT``."""
    voice: str = ""
    """With ``backend = "wyoming"``: the server's voice to ask for ("" = its default voice)."""
    timeout_s: float = 30.0
    """With ``backend = "wyoming"``: connecting, and each wait for the server, may take this long."""


@dataclass(frozen=True)
class WyomingConfig:
    """``voice wyoming``: the Wyoming server for Home Assistant (no authentication: see docs/home-assistant.md)."""

    host: str = "127.0.0.1"
    port: int = 10700
    allowed_clients: tuple[str, ...] = ()
    """Client addresses or networks ("192.168.1.20", "192.168.1.0/24") allowed to connect; required when
    ``host`` is not loopback (empty on loopback: every local process may connect)."""
    max_conversations: int = 64
    """Conversations whose history ``handle`` remembers; the least recently used is forgotten."""
    max_audio_s: float = 30.0
    """Longest audio accepted for one transcription."""
    max_text_chars: int = 4000
    """Longest text accepted for one synthesis (a stream in all) or one ``handle`` request."""
    max_event_bytes: int = 1048576
    """Largest event (header line, data and payload) accepted; a larger one closes the connection."""
    idle_timeout_s: float = 60.0
    """A connection that sends nothing for this long (with no request pending) is closed."""
    max_connections: int = 16
    """Connections at once; the next one gets an ``error`` (``busy``) and is closed."""


@dataclass(frozen=True)
class BudgetConfig:
    """Per-stage allocations in milliseconds; they must add up to ``target_ms``."""

    target_ms: int = 500
    endpoint_silence_ms: int = 200
    stt_queue_ms: int = 5
    stt_ms: int = 110
    llm_queue_ms: int = 5
    llm_ttft_ms: int = 55
    first_clause_ms: int = 40
    tts_queue_ms: int = 5
    tts_first_audio_ms: int = 70
    send_ms: int = 10

    def allocations_ms(self) -> dict[str, int]:
        """Stage name (without the ``_ms`` suffix) → allocated milliseconds, in pipeline order."""
        return {
            f.name.removesuffix("_ms"): int(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name != "target_ms"
        }

