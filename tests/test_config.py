import dataclasses

import pytest

from voice.config.config import DEFAULT_CONFIG_PATH, Config, ConfigError, load_config, parse_config


def test_repository_config_matches_defaults() -> None:
    assert load_config(DEFAULT_CONFIG_PATH) == Config()


def test_every_default_key_is_in_the_repository_config() -> None:
    import tomllib

    data = tomllib.loads(DEFAULT_CONFIG_PATH.read_text())
    for section in dataclasses.fields(Config):
        keys = {f.name for f in dataclasses.fields(getattr(Config(), section.name))}
        assert set(data[section.name]) == keys, section.name


def test_unknown_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"\[llm\]: unknown key 'n_ctxx'"):
        parse_config({"llm": {"n_ctxx": 1}})


def test_unknown_section_is_named() -> None:
    with pytest.raises(ConfigError, match=r"unknown section \[sttt\]"):
        parse_config({"sttt": {}})


def test_wrong_type_is_named() -> None:
    with pytest.raises(ConfigError, match=r"\[server\] port: expected an integer"):
        parse_config({"server": {"port": "80"}})


def test_budget_must_add_up() -> None:
    with pytest.raises(ConfigError, match="add up to 520 ms"):
        parse_config({"budget": {"stt_ms": 130}})


def test_missing_file_and_bad_toml(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\nport=1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_cli_overrides() -> None:
    c = Config().with_server(host="0.0.0.0", port=9000)
    assert (c.server.host, c.server.port) == ("0.0.0.0", 9000)
    assert c.llm == Config().llm


def test_ask_again_settings_are_checked() -> None:
    config = parse_config({"stt": {"ask_again_below_logprob": -1.2}})
    assert config.stt.unsure(-1.3) and not config.stt.unsure(-1.1) and not config.stt.unsure(None)
    assert not parse_config({"stt": {"ask_again": False}}).stt.unsure(-4.0)
    for bad in (0.0, 0.5, -6.0):
        with pytest.raises(ConfigError, match=r"\[stt\] ask_again_below_logprob must be between -5 and 0"):
            parse_config({"stt": {"ask_again_below_logprob": bad}})
    assert parse_config({"stt": {"ask_again_llm_below_logprob": -0.4}}).stt.ask_again_llm_below_logprob == -0.4
    for bad in (0.0, 0.2, -5.5):
        with pytest.raises(ConfigError, match=r"\[stt\] ask_again_llm_below_logprob must be between -5 and 0"):
            parse_config({"stt": {"ask_again_llm_below_logprob": bad}})
    assert parse_config({"stt": {"ask_again_llm_below_word_prob": 0.2}}).stt.ask_again_llm_below_word_prob == 0.2
    for bad in (-0.1, 1.0, 3.0):
        with pytest.raises(ConfigError, match=r"\[stt\] ask_again_llm_below_word_prob must be in \[0, 1\)"):
            parse_config({"stt": {"ask_again_llm_below_word_prob": bad}})
    with pytest.raises(ConfigError, match=r"\[stt\] ask_again_llm_above_words must be 0 \(off\) or more, got -1"):
        parse_config({"stt": {"ask_again_llm_above_words": -1}})
    with pytest.raises(ConfigError, match=r"\[stt\] ask_shorter_reply must not be empty"):
        parse_config({"stt": {"ask_shorter_reply": " "}})
    assert parse_config({"stt": {"unsure_beam_size": 5}}).stt.unsure_beam_size == 5
    for beams in ({"unsure_beam_size": 1}, {"unsure_beam_size": 11}, {"beam_size": 5, "unsure_beam_size": 3}):
        with pytest.raises(ConfigError, match=r"\[stt\] unsure_beam_size must be 0 \(off\) or a beam wider"):
            parse_config({"stt": beams})
    with pytest.raises(ConfigError, match=r"\[stt\] ask_again_reply must not be empty"):
        parse_config({"stt": {"ask_again_reply": "  "}})
    assert parse_config({"stt": {"ask_again": False, "ask_again_reply": ""}}).stt.ask_again_reply == ""


def test_stt_threads_are_checked() -> None:
    assert parse_config({"stt": {"decode_threads": 2}}).stt.decode_threads == 2
    assert parse_config({}).stt.decode_threads == 1
    for bad in ({"decode_threads": 0}, {"cpu_threads": 0}, {"decode_threads": -1}):
        with pytest.raises(ConfigError, match=r"\[stt\] cpu_threads and decode_threads must be at least 1"):
            parse_config({"stt": bad})


def test_stt_context_is_checked() -> None:
    config = parse_config({"stt": {"initial_prompt": "Siobhan, Kubernetes.", "hotwords": ["Reykjavik", "Oslo"]}})
    assert config.stt.hotwords == ("Reykjavik", "Oslo")
    with pytest.raises(ConfigError, match=r"\[stt\] hotwords must not contain empty strings"):
        parse_config({"stt": {"hotwords": ["Oslo", " "]}})
    with pytest.raises(ConfigError, match=r"\[stt\] initial_prompt and hotwords are 1210 characters"):
        parse_config({"stt": {"initial_prompt": "x" * 1200, "hotwords": ["Oslo", "Rome"]}})
    with pytest.raises(ConfigError, match=r"\[stt\] hotwords"):
        parse_config({"stt": {"hotwords": "Oslo"}})


def test_kv_cache_bound_is_checked() -> None:
    assert parse_config({"llm": {"kv_cache_mb": 0}}).llm.kv_cache_mb == 0
    with pytest.raises(ConfigError, match=r"\[llm\] kv_cache_mb must be 0 \(off\) or positive"):
        parse_config({"llm": {"kv_cache_mb": -1}})
