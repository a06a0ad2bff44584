"""The rules a config's values must meet: ranges, limits and backends, each refused with a :class:`ConfigError`
that names the key.

:func:`check_config` is the one place a config is validated: :class:`~voice.config.config.Config` calls it whenever
one is made (also by ``with_server`` and ``with_wyoming``), so a ``Config`` that exists is usable. The rules
take the sections they read, not the ``Config``, so this module sits between :mod:`voice.config.sections`
and :mod:`voice.config.config` without an import cycle. (A value's type is checked before, as
:func:`~voice.config.config.parse_config` reads the TOML.)
"""

from __future__ import annotations

from voice.config import sections
from voice.config.tcp_address import parse_tcp_uri

#: Whisper conditions on at most 223 tokens of earlier text; ~600 characters of English stays under that.
MAX_STT_CONTEXT_CHARS = 600
#: ``[llm] backend``: llama-cpp-python in this process, or an OpenAI-compatible streaming server.
LLM_BACKENDS = ("llama", "openai")
#: ``[stt] backend`` and ``[tts] backend``: the model in this process, or a Wyoming server.
BACKENDS = ("local", "wyoming")


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the key and what to do."""


def check_config(
    *,
    server: sections.ServerConfig,
    vad: sections.VadConfig,
    turn: sections.TurnConfig,
    stt: sections.SttConfig,
    llm: sections.LlmConfig,
    tts: sections.TtsConfig,
    budget: sections.BudgetConfig,
    wyoming: sections.WyomingConfig,
) -> None:
    """Raise :class:`ConfigError` for the first value of these sections that breaks a rule."""
    total = sum(budget.allocations_ms().values())
    if total != budget.target_ms:
        raise ConfigError(
            f"[budget] stage allocations add up to {total} ms but target_ms is {budget.target_ms} ms; "
            "make them add up"
        )
    if not 0 <= server.port <= 65535:
        raise ConfigError(f"[server] port {server.port} is not a TCP port (0-65535; 0 picks a free one)")
    if not 0.0 < vad.neg_threshold <= vad.threshold < 1.0:
        raise ConfigError("[vad] need 0 < neg_threshold <= threshold < 1")
    _validate_turn(turn, vad)
    _validate_stt(stt)
    _validate_reply(llm, tts)
    if vad.max_utterance_s <= 0:
        raise ConfigError(f"[vad] max_utterance_s must be positive, got {vad.max_utterance_s}")
    _check_server_limits(server)
    _check_wyoming(wyoming)
    for name, section in (("stt", stt), ("tts", tts)):
        _check_backend(name, section.backend, section.uri, section.timeout_s)


def _validate_turn(t: sections.TurnConfig, vad: sections.VadConfig) -> None:
    """[turn]: speculation, the end-of-turn model's thresholds and windows (some against [vad])."""
    if t.speculate_after_ms < 0:
        raise ConfigError("[turn] speculate_after_ms must be 0 (off) or positive")
    if t.speculate_after_ms > vad.silence_ms:
        raise ConfigError(
            f"[turn] speculate_after_ms ({t.speculate_after_ms}) is longer than [vad] silence_ms "
            f"({vad.silence_ms}): the turn would end before any speculation starts"
        )
    if t.score_after_ms <= 0:
        raise ConfigError("[turn] score_after_ms must be positive")
    if t.pause_energy_drop_db < 0 or t.pause_energy_drop_db > 90:
        raise ConfigError("[turn] pause_energy_drop_db must be between 0 (off) and 90 dB")
    if not 0.0 < t.complete_threshold < 1.0:
        raise ConfigError(f"[turn] complete_threshold ({t.complete_threshold:g}) must be between 0 and 1")
    if t.complete_silence_ms <= 0:
        raise ConfigError(f"[turn] complete_silence_ms ({t.complete_silence_ms}) must be positive")
    if t.complete_silence_ms > t.incomplete_silence_ms:
        raise ConfigError(
            f"[turn] complete_silence_ms ({t.complete_silence_ms}) is longer than [turn] incomplete_silence_ms "
            f"({t.incomplete_silence_ms}): a turn scored complete would wait longer than one scored unfinished"
        )
    _validate_graded(t)
    _validate_words(t)


def _validate_words(t: sections.TurnConfig) -> None:
    """[turn]: the words model's two thresholds (the model itself is looked up in the catalogue at start)."""
    if not 0.0 <= t.words_unfinished_below <= t.words_finished_at <= 1.0:
        raise ConfigError(
            f"[turn] words_unfinished_below ({t.words_unfinished_below:g}) and [turn] words_finished_at "
            f"({t.words_finished_at:g}) must be probabilities (0 to 1), the first no greater than the second"
        )


def _validate_graded(t: sections.TurnConfig) -> None:
    """[turn]: the graded window (sure_threshold, sure_silence_ms) and the re-scores (rescore_at_ms)."""
    if not 0.0 < t.sure_threshold <= 1.0:
        raise ConfigError(f"[turn] sure_threshold ({t.sure_threshold:g}) must be between 0 and 1")
    if t.sure_silence_ms < 0:
        raise ConfigError(f"[turn] sure_silence_ms ({t.sure_silence_ms}) must be 0 (off) or positive")
    if t.sure_silence_ms:
        if t.sure_threshold < t.complete_threshold:
            raise ConfigError(
                f"[turn] sure_threshold ({t.sure_threshold:g}) is under [turn] complete_threshold "
                f"({t.complete_threshold:g}): a score too low to count as complete would count as surely complete"
            )
        if t.sure_silence_ms > t.complete_silence_ms:
            raise ConfigError(
                f"[turn] sure_silence_ms ({t.sure_silence_ms}) is longer than [turn] complete_silence_ms "
                f"({t.complete_silence_ms}): a surer score would wait longer"
            )
        if t.sure_silence_ms < t.score_after_ms:
            raise ConfigError(
                f"[turn] sure_silence_ms ({t.sure_silence_ms}) is shorter than [turn] score_after_ms "
                f"({t.score_after_ms}): the window would close before the score that grants it"
            )
    if t.text_finished_silence_ms and not (
        t.complete_silence_ms <= t.text_finished_silence_ms <= t.incomplete_silence_ms
    ):
        raise ConfigError(
            f"[turn] text_finished_silence_ms ({t.text_finished_silence_ms}) must lie between [turn] "
            f"complete_silence_ms ({t.complete_silence_ms}) and [turn] incomplete_silence_ms "
            f"({t.incomplete_silence_ms}), or be 0 (off)"
        )
    if t.text_finished_silence_ms and not t.text_evidence:
        raise ConfigError(
            "[turn] text_finished_silence_ms needs [turn] text_evidence = true (it acts on the words)"
        )
    points = list(t.rescore_at_ms)
    if points != sorted(set(points)) or any(p <= t.score_after_ms for p in points):
        raise ConfigError(
            f"[turn] rescore_at_ms ({points}) must increase, each after [turn] score_after_ms ({t.score_after_ms})"
        )
    if points and points[-1] >= t.incomplete_silence_ms:
        raise ConfigError(
            f"[turn] rescore_at_ms ({points}) must end under [turn] incomplete_silence_ms "
            f"({t.incomplete_silence_ms}): a re-score after the long window could change nothing"
        )


def _validate_stt(stt: sections.SttConfig) -> None:
    """[stt]: threads, the decode window and Whisper's context (initial prompt, hotwords)."""
    if stt.cpu_threads < 1 or stt.decode_threads < 1:
        raise ConfigError(
            f"[stt] cpu_threads and decode_threads must be at least 1, got {stt.cpu_threads} and {stt.decode_threads}"
        )
    if not 0.0 <= stt.min_window_s <= 30.0 or not 0.0 <= stt.pad_s <= 30.0:
        raise ConfigError("[stt] min_window_s and pad_s must be between 0 and 30 seconds")
    stt_context = len(stt.initial_prompt) + sum(len(w) + 1 for w in stt.hotwords)
    if stt_context > MAX_STT_CONTEXT_CHARS:
        raise ConfigError(
            f"[stt] initial_prompt and hotwords are {stt_context} characters together; Whisper reads at most "
            f"~223 tokens of context, keep them under {MAX_STT_CONTEXT_CHARS} characters"
        )
    if any(not w.strip() for w in stt.hotwords):
        raise ConfigError("[stt] hotwords must not contain empty strings")
    if not -5.0 <= stt.ask_again_below_logprob < 0.0:
        raise ConfigError("[stt] ask_again_below_logprob must be between -5 and 0 (a mean log-probability per token)")
    if not -5.0 <= stt.ask_again_llm_below_logprob < 0.0:
        raise ConfigError(
            "[stt] ask_again_llm_below_logprob must be between -5 and 0 (a mean log-probability per token; 0 would "
            f"ask again before every answer of the LLM), got {stt.ask_again_llm_below_logprob}"
        )
    if not 0.0 <= stt.ask_again_llm_below_word_prob < 1.0:
        raise ConfigError(
            "[stt] ask_again_llm_below_word_prob must be in [0, 1) (a word's probability; 0 = off, 1 would ask again "
            f"before every answer of the LLM), got {stt.ask_again_llm_below_word_prob}"
        )
    if stt.unsure_beam_size != 0 and not stt.beam_size < stt.unsure_beam_size <= 10:
        raise ConfigError(
            f"[stt] unsure_beam_size must be 0 (off) or a beam wider than beam_size ({stt.beam_size}) and at most 10"
        )
    if stt.ask_again and not stt.ask_again_reply.strip():
        raise ConfigError("[stt] ask_again_reply must not be empty when ask_again is on")
    if stt.ask_again_llm_above_words < 0:
        most = stt.ask_again_llm_above_words
        raise ConfigError(f"[stt] ask_again_llm_above_words must be 0 (off) or more, got {most}")
    if stt.ask_again and stt.ask_again_llm_above_words and not stt.ask_shorter_reply.strip():
        raise ConfigError("[stt] ask_shorter_reply must not be empty when ask_again_llm_above_words is on")


def _validate_reply(llm: sections.LlmConfig, tts: sections.TtsConfig) -> None:
    """[llm] and [tts]: the backend, the reply's length and sampling, the KV cache, the audio chunks."""
    _check_llm_backend(llm)
    if llm.max_reply_tokens >= llm.n_ctx // 2:
        raise ConfigError("[llm] max_reply_tokens must be less than half of n_ctx")
    if tts.max_first_chunk_words < 0 or tts.min_first_clause_words < 1:
        raise ConfigError("[tts] need min_first_clause_words >= 1 and max_first_chunk_words >= 0 (0 = never cut)")
    if not 1.0 <= llm.repeat_penalty <= 2.0:
        raise ConfigError(f"[llm] repeat_penalty must be between 1.0 (off) and 2.0, got {llm.repeat_penalty}")
    if llm.kv_cache_mb < 0:
        raise ConfigError(f"[llm] kv_cache_mb must be 0 (off) or positive, got {llm.kv_cache_mb}")
    if llm.max_reply_sentences < 0:
        raise ConfigError("[llm] max_reply_sentences must be 0 (no cap) or positive")
    if llm.not_sure and not (llm.not_sure_below_logprob < 0 and llm.not_sure_reply.strip()):
        raise ConfigError(
            "[llm] not_sure needs not_sure_below_logprob < 0 (a log-probability; 0 would replace every reply), "
            f"got {llm.not_sure_below_logprob}, and a non-empty not_sure_reply"
        )
    if llm.not_sure and llm.not_sure_typed and not llm.not_sure_typed_below_logprob < 0:
        raise ConfigError(
            "[llm] not_sure_typed needs not_sure_typed_below_logprob < 0 (a log-probability; 0 would replace every "
            f"typed reply), got {llm.not_sure_typed_below_logprob}"
        )
    if tts.chunk_ms < 5 or tts.chunk_ms > 1000:
        raise ConfigError("[tts] chunk_ms must be between 5 and 1000")
    if not (tts.stream_first_ms == 0 or 20 <= tts.stream_first_ms <= 5000):
        raise ConfigError(
            f"[tts] stream_first_ms must be 0 (a sentence is one piece) or 20-5000 ms, got {tts.stream_first_ms}"
        )




def _check_backend(section: str, backend: str, uri: str, timeout_s: float) -> None:
    if backend not in BACKENDS:
        raise ConfigError(f"[{section}] backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if timeout_s <= 0:
        raise ConfigError(f"[{section}] timeout_s must be positive, got {timeout_s}")
    if backend == "wyoming":
        problem = parse_tcp_uri(uri)
        if isinstance(problem, str):
            raise ConfigError(f"[{section}] uri: {problem}")


def _check_wyoming(w: sections.WyomingConfig) -> None:
    import ipaddress

    if not 0 <= w.port <= 65535:
        raise ConfigError(f"[wyoming] port {w.port} is not a TCP port (0-65535; 0 picks a free one)")
    for key in ("max_conversations", "max_audio_s", "max_text_chars", "idle_timeout_s", "max_connections"):
        if getattr(w, key) <= 0:
            raise ConfigError(f"[wyoming] {key} must be positive, got {getattr(w, key)}")
    if w.max_event_bytes < 65536:
        raise ConfigError(f"[wyoming] max_event_bytes must be at least 65536, got {w.max_event_bytes}")
    for entry in w.allowed_clients:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise ConfigError(
                f"[wyoming] allowed_clients: {entry!r} is not an IP address or network "
                '(e.g. "192.168.1.20" or "192.168.1.0/24"; host names are not accepted)'
            ) from None


def _check_llm_backend(llm: sections.LlmConfig) -> None:
    if llm.backend not in LLM_BACKENDS:
        raise ConfigError(f"[llm] backend must be one of {', '.join(LLM_BACKENDS)}, got {llm.backend!r}")
    if not llm.base_url.startswith(("http://", "https://")):
        raise ConfigError(f"[llm] base_url must start with http:// or https://, got {llm.base_url!r}")
    if llm.connect_timeout_s <= 0 or llm.read_timeout_s <= 0:
        raise ConfigError("[llm] connect_timeout_s and read_timeout_s must be positive")
    if llm.api_key_env and not llm.api_key_env.replace("_", "").isalnum():
        raise ConfigError(
            f"[llm] api_key_env names an environment variable (letters, digits, _), got {llm.api_key_env!r}"
        )
    if llm.backend == "openai" and not llm.model:
        raise ConfigError('[llm] backend = "openai" needs model: the model name the server serves')


def _check_server_limits(s: sections.ServerConfig) -> None:
    """Every limit must be usable (positive, and a message must hold at least a small audio frame)."""
    positive = {
        "max_sessions": s.max_sessions,
        "max_queue": s.max_queue,
        "session_max_s": s.session_max_s,
        "idle_timeout_s": s.idle_timeout_s,
        "max_ingress_realtime": s.max_ingress_realtime,
        "start_timeout_s": s.start_timeout_s,
        "close_timeout_s": s.close_timeout_s,
        "write_limit_bytes": s.write_limit_bytes,
        "send_queue_frames": s.send_queue_frames,
    }
    for key, value in positive.items():
        if value <= 0:
            raise ConfigError(f"[server] {key} must be positive, got {value}")
    for key, value in (("ping_interval_s", s.ping_interval_s), ("ping_timeout_s", s.ping_timeout_s),
                       ("shutdown_grace_s", s.shutdown_grace_s)):  # fmt: skip
        if value < 0:
            raise ConfigError(f"[server] {key} must be 0 or more, got {value}")
    if s.max_message_bytes < 4096:
        raise ConfigError(f"[server] max_message_bytes must be at least 4096, got {s.max_message_bytes}")
    if s.realtime_max_message_bytes < 4096:
        raise ConfigError(
            f"[server] realtime_max_message_bytes must be at least 4096, got {s.realtime_max_message_bytes}"
        )
