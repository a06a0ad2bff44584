"""Configuration: frozen dataclasses loaded from ``config.toml``.

Every section and key is checked: an unknown section or key, or a value of the wrong type, raises
:class:`ConfigError` naming the key; sections and keys left out keep their defaults, which equal the values
in the repository's ``config.toml``. All validation lives here and runs whenever a :class:`Config` is made
(also by :meth:`Config.with_server`): a ``Config`` that exists is usable.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from voice.tomlfile import check_keys, load_toml

DEFAULT_CONFIG_PATH = Path(__file__).resolve().parent.parent / "config.toml"
#: Whisper conditions on at most 223 tokens of earlier text; ~600 characters of English stays under that.
MAX_STT_CONTEXT_CHARS = 600


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the key and what to do."""


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
    pause_energy_drop_db: float = 30.0
    """A frame this many dB under the utterance's loudest counts towards the pause (not the end); 0 = VAD only."""
    score_in_gate: bool = False
    """True: the end-of-turn model runs alone on the cores (the compute gate, before any other step) in a model
    thread, instead of on the VAD thread beside the speculative reply's STT and LLM."""
    end_on_energy: bool = False
    """After a pause found on energy, the turn's silence window also counts from the energy drop (once the VAD
    hears silence too), so the VAD's lag after the last word is not added to the window."""


@dataclass(frozen=True)
class SttConfig:
    model: str = "tiny.en"
    compute_type: str = "int8"
    beam_size: int = 1
    language: str = "en"
    cpu_threads: int = 2
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


LLM_BACKENDS = ("llama", "openai")


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
    skills: bool = True
    kv_cache_mb: int = 256
    """Memory for saved per-conversation KV states (0 = off: only the live context is reused)."""


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


@dataclass(frozen=True)
class Config:
    server: ServerConfig = ServerConfig()
    vad: VadConfig = VadConfig()
    turn: TurnConfig = TurnConfig()
    stt: SttConfig = SttConfig()
    llm: LlmConfig = LlmConfig()
    tts: TtsConfig = TtsConfig()
    budget: BudgetConfig = BudgetConfig()
    wyoming: WyomingConfig = WyomingConfig()

    def __post_init__(self) -> None:
        _validate(self)

    def with_server(self, **changes: Any) -> Config:
        """A copy with some server settings replaced (used by CLI flags)."""
        return dataclasses.replace(self, server=dataclasses.replace(self.server, **changes))

    def with_wyoming(self, **changes: Any) -> Config:
        """A copy with some ``[wyoming]`` settings replaced (used by ``voice wyoming``'s flags)."""
        return dataclasses.replace(self, wyoming=dataclasses.replace(self.wyoming, **changes))


_T = TypeVar("_T")


def _coerce(section: str, key: str, value: Any, annotation: Any) -> Any:
    where = f"[{section}] {key}"
    origin = typing.get_origin(annotation)
    if origin is tuple:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: expected a list of strings, got {value!r}")
        return tuple(value)
    if annotation is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if annotation is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if annotation is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if annotation is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type {annotation!r}")  # pragma: no cover


def _section(cls: type[_T], name: str, data: Any) -> _T:
    if not isinstance(data, dict):
        raise ConfigError(f"[{name}] must be a table")
    hints = typing.get_type_hints(cls)
    check_keys(data, (f.name for f in dataclasses.fields(cls)), f"[{name}]", ConfigError)  # type: ignore[arg-type]
    values = {k: _coerce(name, k, v, hints[k]) for k, v in data.items()}
    return cls(**values)


def _validate(config: Config) -> None:
    b = config.budget
    total = sum(b.allocations_ms().values())
    if total != b.target_ms:
        raise ConfigError(
            f"[budget] stage allocations add up to {total} ms but target_ms is {b.target_ms} ms; "
            "make them add up"
        )
    if not 0 <= config.server.port <= 65535:
        raise ConfigError(f"[server] port {config.server.port} is not a TCP port (0-65535; 0 picks a free one)")
    if not 0.0 < config.vad.neg_threshold <= config.vad.threshold < 1.0:
        raise ConfigError("[vad] need 0 < neg_threshold <= threshold < 1")
    _validate_turn(config)
    _validate_stt(config.stt)
    _validate_reply(config)
    if config.vad.max_utterance_s <= 0:
        raise ConfigError(f"[vad] max_utterance_s must be positive, got {config.vad.max_utterance_s}")
    _check_server_limits(config.server)
    _check_wyoming(config.wyoming)
    for name, section in (("stt", config.stt), ("tts", config.tts)):
        _check_backend(name, section.backend, section.uri, section.timeout_s)


def _validate_turn(config: Config) -> None:
    """[turn]: speculation, the end-of-turn model's thresholds and windows (some against [vad])."""
    t = config.turn
    if t.speculate_after_ms < 0:
        raise ConfigError("[turn] speculate_after_ms must be 0 (off) or positive")
    if t.speculate_after_ms > config.vad.silence_ms:
        raise ConfigError(
            f"[turn] speculate_after_ms ({t.speculate_after_ms}) is longer than [vad] silence_ms "
            f"({config.vad.silence_ms}): the turn would end before any speculation starts"
        )
    if t.score_after_ms <= 0:
        raise ConfigError("[turn] score_after_ms must be positive")
    if t.pause_energy_drop_db < 0 or t.pause_energy_drop_db > 90:
        raise ConfigError("[turn] pause_energy_drop_db must be between 0 (off) and 90 dB")
    if not 0.0 < t.complete_threshold < 1.0:
        raise ConfigError("[turn] complete_threshold must be between 0 and 1")
    if not 0 < t.complete_silence_ms <= t.incomplete_silence_ms:
        raise ConfigError("[turn] need 0 < complete_silence_ms <= incomplete_silence_ms")


def _validate_stt(stt: SttConfig) -> None:
    """[stt]: the decode window and Whisper's context (initial prompt, hotwords)."""
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


def _validate_reply(config: Config) -> None:
    """[llm] and [tts]: the backend, the reply's length and sampling, the KV cache, the audio chunks."""
    _check_llm_backend(config.llm)
    if config.llm.max_reply_tokens >= config.llm.n_ctx // 2:
        raise ConfigError("[llm] max_reply_tokens must be less than half of n_ctx")
    if config.tts.max_first_chunk_words < 0 or config.tts.min_first_clause_words < 1:
        raise ConfigError("[tts] need min_first_clause_words >= 1 and max_first_chunk_words >= 0 (0 = never cut)")
    if not 1.0 <= config.llm.repeat_penalty <= 2.0:
        raise ConfigError(
            f"[llm] repeat_penalty must be between 1.0 (off) and 2.0, got {config.llm.repeat_penalty}"
        )
    if config.llm.kv_cache_mb < 0:
        raise ConfigError(f"[llm] kv_cache_mb must be 0 (off) or positive, got {config.llm.kv_cache_mb}")
    if config.llm.max_reply_sentences < 0:
        raise ConfigError("[llm] max_reply_sentences must be 0 (no cap) or positive")
    if config.tts.chunk_ms < 5 or config.tts.chunk_ms > 1000:
        raise ConfigError("[tts] chunk_ms must be between 5 and 1000")


BACKENDS = ("local", "wyoming")


def _check_backend(section: str, backend: str, uri: str, timeout_s: float) -> None:
    if backend not in BACKENDS:
        raise ConfigError(f"[{section}] backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if timeout_s <= 0:
        raise ConfigError(f"[{section}] timeout_s must be positive, got {timeout_s}")
    if backend == "wyoming":
        from voice.wyoming.uri import parse_tcp_uri

        problem = parse_tcp_uri(uri)
        if isinstance(problem, str):
            raise ConfigError(f"[{section}] uri: {problem}")


def _check_wyoming(w: WyomingConfig) -> None:
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


def _check_llm_backend(llm: LlmConfig) -> None:
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


def _check_server_limits(s: ServerConfig) -> None:
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


_SECTIONS: dict[str, type[Any]] = {
    "server": ServerConfig,
    "vad": VadConfig,
    "turn": TurnConfig,
    "stt": SttConfig,
    "llm": LlmConfig,
    "tts": TtsConfig,
    "budget": BudgetConfig,
    "wyoming": WyomingConfig,
}


def parse_config(data: dict[str, Any]) -> Config:
    """Build a :class:`Config` from parsed TOML; sections left out keep their defaults."""
    for name in data:
        if name not in _SECTIONS:
            raise ConfigError(f"unknown section [{name}]; known sections: {', '.join(_SECTIONS)}")
    parts = {name: _section(cls, name, data.get(name, {})) for name, cls in _SECTIONS.items()}
    return Config(**parts)  # validated by Config itself


def load_config(path: Path | str | None = None) -> Config:
    """Load and check a config file (default: the repository's ``config.toml``)."""
    p = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    data = load_toml(p, "config file", ConfigError)
    try:
        return parse_config(data)
    except ConfigError as e:
        raise ConfigError(f"{p}: {e}") from None


__all__ = [
    "BudgetConfig",
    "Config",
    "ConfigError",
    "LlmConfig",
    "ServerConfig",
    "SttConfig",
    "TtsConfig",
    "TurnConfig",
    "VadConfig",
    "WyomingConfig",
    "load_config",
    "parse_config",
]
