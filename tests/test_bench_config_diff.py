"""A result measured with ``--config`` records how that file differed from the repo's config.toml, key by key,
in its JSON and its Markdown, so the result can be reproduced from the commit once the scratch file is gone."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from voice.bench.config_diff import config_changes
from voice.bench.machine import machine_markdown
from voice.bench.machine_record import Machine
from voice.bench.scaffold import BenchRun
from voice.config.config import DEFAULT_CONFIG_PATH

BASE = """\
[stt]
model = "tiny.en"
hotwords = []

[llm]
repeat_penalty = 1.1
max_reply_sentences = 3

[server]
token = ""
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_same_settings_give_no_changes(tmp_path: Path) -> None:
    base = _write(tmp_path, "config.toml", BASE)
    reordered = _write(
        tmp_path,
        "copy.toml",
        '[server]\ntoken = ""\n[llm]\nmax_reply_sentences = 3\nrepeat_penalty = 1.1\n'
        '[stt]\nhotwords = []\nmodel = "tiny.en"\n',
    )
    assert config_changes(reordered, base) == ()
    assert config_changes(DEFAULT_CONFIG_PATH, DEFAULT_CONFIG_PATH) == ()


def test_each_changed_added_or_left_out_key_is_named_with_both_values(tmp_path: Path) -> None:
    base = _write(tmp_path, "config.toml", BASE)
    given = _write(
        tmp_path,
        "lever.toml",
        BASE.replace("repeat_penalty = 1.1", "repeat_penalty = 1.0")
        .replace("hotwords = []", 'hotwords = ["Siobhan"]')
        .replace("max_reply_sentences = 3\n", "")
        + "\n[turn]\nspeculate_after_ms = 0\n",
    )
    assert config_changes(given, base) == (
        '[stt] hotwords = ["Siobhan"] (config.toml: [])',
        "[llm] repeat_penalty = 1.0 (config.toml: 1.1)",
        "[llm] max_reply_sentences: left out (config.toml: 3)",
        "[turn] speculate_after_ms = 0 (not in config.toml)",
    )


def test_a_secret_is_never_written(tmp_path: Path) -> None:
    base = _write(tmp_path, "config.toml", BASE)
    given = _write(tmp_path, "lan.toml", BASE.replace('token = ""', 'token = "s3cr3t-s3cr3t-s3cr3t"'))
    assert config_changes(given, base) == ("[server] token = set (config.toml: empty)",)


def test_an_unreadable_file_says_so_instead_of_failing_the_run(tmp_path: Path) -> None:
    base = _write(tmp_path, "config.toml", BASE)
    (line,) = config_changes(tmp_path / "gone.toml", base)
    assert line.startswith("could not compare: config file not found:") and "gone.toml" in line
    (line,) = config_changes(_write(tmp_path, "bad.toml", "[llm\n"), base)
    assert "is not valid TOML" in line


def test_a_run_with_config_records_the_changes_in_its_json_and_markdown(tmp_path: Path) -> None:
    text = DEFAULT_CONFIG_PATH.read_text(encoding="utf-8")
    assert "\nrepeat_penalty = 1.1 " in text  # the line this test changes
    lever = _write(tmp_path, "lever.toml", text.replace("\nrepeat_penalty = 1.1 ", "\nrepeat_penalty = 1.0 "))
    machine = BenchRun(argparse.Namespace(config=lever)).begin()
    assert machine.config_changes == ("[llm] repeat_penalty = 1.0 (config.toml: 1.1)",)
    back = Machine.from_json(json.loads(json.dumps(machine.to_json())))
    assert back.config_changes == machine.config_changes
    assert "| Config | the repo's config.toml except: `[llm] repeat_penalty = 1.0 (config.toml: 1.1)` |" in (
        machine_markdown(back)
    )
    # The repo's own file, given as --config: said so. No --config: no row, and no key in the JSON.
    same = BenchRun(argparse.Namespace(config=DEFAULT_CONFIG_PATH)).begin()
    assert "| Config | `--config` says the same as the repo's config.toml |" in machine_markdown(same)
    plain = BenchRun(argparse.Namespace()).begin()
    assert plain.config_changes is None and "config_changes" not in plain.to_json()
    assert "| Config |" not in machine_markdown(plain)


def test_a_pipe_in_a_value_does_not_break_the_markdown_table(tmp_path: Path) -> None:
    base = _write(tmp_path, "config.toml", BASE)
    given = _write(tmp_path, "pipe.toml", BASE.replace('model = "tiny.en"', 'model = "a|b"'))
    machine = Machine.from_json(
        {
            **BenchRun(argparse.Namespace()).begin().to_json(),
            "config_changes": list(config_changes(given, base)),
        }
    )
    row = next(line for line in machine_markdown(machine).splitlines() if line.startswith("| Config |"))
    assert row.count("|") - row.count("\\|") == 3 and "a\\|b" in row
