"""voice bench load's typed result writes the JSON and the Markdown the dict-based code wrote: the whole command
with fake talkers (their conversations scripted from their plans), against an external server and with the KV
cache off and on in process (digests of what that code wrote for the same runs), and the committed results,
whose Markdown the typed result reproduces too."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import check_committed, fake_machine
from tests.conftest import make_config
from voice.bench.load import command as load_cmd
from voice.bench.load import measure as load
from voice.bench.load.measure import TalkerPlan
from voice.bench.load.result import LoadOptions, LoadResult
from voice.cli import main
from voice.runtime.kvcache import KvStats

#: sha256 of the JSON (``json.dumps``) and of the Markdown the dict-based code wrote for the same fake runs (the
#: JSON's with the fake machine record of :mod:`tests.bench_results` as a dict, at d5b686f).
DIGESTS = {
    "url": ("7526e40258cb13113fd42c511f9c5edfbe3aff6e9208920aac0b900df4c5c1d3",
            "50a1b10a1c8e8b12e13e627c96c22e507db74d677189536ed1701ea2f9c061c4"),
    "kv": ("f3579e1503b4df46f22ea6cbb808f1cb67746dd3e59a65498b2c8b968a63c676",
           "44034d1ce4a37cf1320f934cdf370eddf57d03626bfb2df5ecec32719b2a7a32"),
}  # fmt: skip


class FakeClip:
    def __init__(self, name: str) -> None:
        self.name = name


class FakeTurn:
    def __init__(self, report: dict[str, Any], m2e: float | None) -> None:
        self.report, self._m2e = report, m2e

    def mouth_to_ear_ms(self) -> float | None:
        return self._m2e


class FakeConversation:
    def __init__(self) -> None:
        self.turns: dict[int, FakeTurn] = {}
        self.utterance_turns: list[list[int]] = []
        self.errors: list[dict[str, Any]] = []


def fake_talk(url: str, plan: TalkerPlan, opts: LoadOptions) -> FakeConversation:
    """A talker's conversation, made from its plan: slower with more talkers; among them a refused turn (with
    a retry hint), an utterance heard as two turns, one not heard, a reply without audio, a skill's answer, a
    talker whose connection fails."""
    n = max(opts.sessions)
    if plan.talker == 3:
        raise RuntimeError("connection lost")
    conv = FakeConversation()
    for k, clip in enumerate(plan.clips):
        if plan.talker == 1 and k == 1:
            conv.utterance_turns.append([])
            continue
        base = 100.0 * (plan.talker + 1) + 10 * k + 1000 * plan.start_delay_s + n
        outcome = "busy" if (plan.talker == 1 and k == 0 and n > 1) else "ok"
        skill = clip.name == "c.wav"
        report: dict[str, Any] = {
            "outcome": outcome,
            "stages_ms": {
                "stt_queue": 1.5 * k,
                "llm_queue": 2.0 * plan.talker,
                "tts_queue": 0.5,
                "stt": 40.0,
            },
            "llm": {"ttft_ms": base / 4},
            "prompt_tokens_evaluated": 0 if skill else 20 + 30 * (k == 0),
            "prompt_tokens_reused": 0 if skill else 60 * k,
            "kv_restore_ms": 1.25 * k,
            "kv_evicted": plan.talker == 0 and k == 1,
            "kv_cache_mb": 3.5 + k,
            "reply_audio_ms": 900 + 10 * k,
        }
        m2e = None if outcome == "busy" or (plan.talker == 2 and k == 1) else base + plan.pauses_s[k]
        conv.turns[len(conv.turns)] = FakeTurn({"outcome": "ok"}, 50.0)
        conv.turns[len(conv.turns)] = FakeTurn(report, m2e)
        conv.utterance_turns.append([len(conv.turns) - 2, len(conv.turns) - 1])
        if outcome == "busy":
            conv.errors.append({"code": "busy", "retry_after_ms": 250 + 10 * k})
    return conv


class FakeRuntime:
    def kv_stats(self) -> KvStats | None:
        return KvStats(256 * 2**20, 9 * 2**20, 3, 5, 4, 1, 30, 12.5, 3.25)

    def close(self) -> None:
        pass


def run_load(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """``voice bench load`` with fake talkers (and fake models in process); its JSON."""

    async def in_process(config: Any, runtime: Any, clips: Any, opts: Any, on_level: Any) -> Any:
        return await load.run_sweep("ws://in-process", clips, opts, on_level)

    clips = [FakeClip(n) for n in ("a.wav", "b.wav", "c.wav")]
    monkeypatch.setattr(load, "_talk", fake_talk)
    monkeypatch.setattr(load_cmd, "load_config", lambda p: make_config(llm={"kv_cache_mb": 0}))
    monkeypatch.setattr(load_cmd, "load_clips", lambda folder, names: (clips, ["c.wav: a warning"]))
    monkeypatch.setattr(load_cmd, "run_sweep_in_process", in_process)
    monkeypatch.setattr(load_cmd, "ram_peak_mb", lambda: 512.5)
    # The variant's configuration, cut to the setting it changes (the whole of it changes with every new option).
    monkeypatch.setattr(load_cmd, "_config_meta", lambda cfg: {"llm": {"kv_cache_mb": cfg.llm.kv_cache_mb}})
    monkeypatch.setattr("voice.loader.load_runtime", lambda cfg: FakeRuntime())
    ticks = iter(range(100))
    monkeypatch.setattr(load_cmd.time, "perf_counter", lambda: 2.5 * next(ticks))
    fake_machine(monkeypatch)
    out = tmp_path / "r.json"
    main(
        [
            "bench",
            "load",
            "--speech",
            "/speech",
            "--sessions",
            "1,4",
            "--turns",
            "2",
            "--json",
            str(out),
            *extra,
        ]
    )
    return dict(json.loads(out.read_text(encoding="utf-8")))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("name", "extra"), [("url", ("--url", "ws://x:1/")), ("kv", ("--compare-kv",))])
def test_the_command_writes_the_json_and_markdown_the_dicts_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, extra: tuple[str, ...]
) -> None:
    written = run_load(monkeypatch, tmp_path, *extra)
    result = LoadResult.from_json(written)
    assert result.to_json() == written and LoadResult.from_json(result.to_json()) == result
    four = result.variants[0].levels[1]
    assert (four.sessions, four.ok, four.busy, four.outcomes["error"], four.retry_after_ms.p50) == (
        4,
        3,
        1,
        2,
        250,
    )
    assert [v.in_process is None for v in result.variants] == ([True] if name == "url" else [False, False])
    # The digests' runs had a fake machine record without a start time, for which no machine block was written.
    monkeypatch.setattr(load_cmd, "machine_markdown", lambda m: "")
    md = load_cmd.markdown(result, None, Path("r.md"))
    assert (sha256(json.dumps(written)), sha256(md)) == DIGESTS[name]


@pytest.mark.parametrize("name", ["2026-12-03-load.json", "2026-12-03-load-kv.json"])
def test_the_committed_results_read_back_to_the_same_json_and_markdown(name: str) -> None:
    def markdown(result: LoadResult, md: Path) -> str:
        return load_cmd.markdown(result, md.with_suffix(".png"), md)

    check_committed(name, LoadResult.from_json, markdown)
