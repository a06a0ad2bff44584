"""voice bench remote's typed result writes the JSON the dict-based code wrote (keys, order, values): each part on
a small input, its JSON worked out by hand; the whole command on fake LLMs and scripted turns (with and without the
mouth-to-ear part), against digests of the JSON, Markdown and console text the dict-based code wrote; and the
committed result read back, to its Markdown and to its JSON but for the keys added since it was made."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.bench_results import RESULTS, committed_machine, digests, run_command, same_json, sha256
from tests.conftest import make_config
from tests.test_bench_e2e_json import EMPTY_SUMMARY, FakeClip, scripted
from tests.test_bench_quality_json import SET, Tick
from voice.bench import scaffold
from voice.bench.e2e import measure as e2e
from voice.bench.e2e.measure import E2eOptions
from voice.bench.e2e.turn import PlanItem, TurnResult
from voice.bench.quality import measure as quality
from voice.bench.quality.question_set import Item
from voice.bench.quality.result import TextRow
from voice.bench.remote import measure as remote
from voice.bench.remote.result import E2eComparison, RemoteResult, TextComparison
from voice.runtime.fakes import FakeLlm

#: sha256 of the JSON (``json.dumps``), the Markdown and the console text the dict-based code wrote.
DIGESTS = {
    "e2e": ("c5ad53c761bb4b958205fb6baca248488fbf33a875c2c8314f5c9911ad5094f2",
            "fa7db620d659ea072db739c582c0b6c4aededb41be20c04cd8f4c70388d7240c",
            "b065c32bc912b75998f85c46edc8ad8cfecfa748dac5f678200ec7ec61477b0d"),
    "no-e2e": ("f62885017fdc3c665d666c3a5aeaef6669b306cdf3a2022b844de9948ceba046",
               "fe453a1a4e66820544bb4b2195f81447a0178df396c23fe0e477d243b0636bfa",
               "30eaa198518fa74be1678dce39b451be4fd6f96807324e43d6023a89735b9826"),
}  # fmt: skip

COMMITTED = "2026-12-03-remote.json"


class Named:
    """An LLM that only has a name (the replies come from a stand-in ``run_item``) and can be closed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close(self) -> None:
        self.closed = True


def text_row(item: Item, reply: str, ttft_ms: float, **judged: Any) -> TextRow:
    return TextRow(id=item.id, category=item.category, question=item.question, reply=reply, tokens=3, by="llm",
                   ttft_ms=ttft_ms, reply_ms=ttft_ms + 50.0, **judged)  # fmt: skip


ITEMS = [Item("q0", "knowledge", "Capital of Spain?"), Item("q1", "cannot", "Open the door."),
         Item("q2", "arithmetic", "12 plus 30?")]  # fmt: skip
RIGHT = {"right": True, "refusal_expected": False, "refused": False, "repeats": False, "hit_cap": False,
         "words": 1, "spoken_s_est": 0.4, "failed": ()}  # fmt: skip
REFUSED = {**RIGHT, "refusal_expected": True, "refused": True, "words": 5, "spoken_s_est": 2.0}
#: The replies of each LLM: the same to q0 and q2, different to q1 (the server's is wrong: it does not refuse).
REPLIES = {
    ("in-process", "q0"): text_row(ITEMS[0], "Madrid.", 60.0, **RIGHT),
    ("in-process", "q1"): text_row(ITEMS[1], "I cannot open doors, sorry.", 70.0, **REFUSED),
    ("in-process", "q2"): text_row(ITEMS[2], "42.", 80.0, **RIGHT),
    ("server", "q0"): text_row(ITEMS[0], "Madrid.", 75.0, **RIGHT),
    ("server", "q1"): text_row(
        ITEMS[1], "Sure, the door is open.", 85.0, **{**REFUSED, "right": False, "refused": False,
                                                      "failed": ("refusal",)}
    ),
    ("server", "q2"): text_row(ITEMS[2], "42.", 95.0, **RIGHT),
}  # fmt: skip


def row_json(r: TextRow) -> dict[str, Any]:
    """A row as the dict-based code wrote it (by hand: the keys of a row not answered from the timers)."""
    return {"id": r.id, "category": r.category, "question": r.question, "reply": r.reply, "tokens": r.tokens,
            "by": r.by, "ttft_ms": r.ttft_ms, "reply_ms": r.reply_ms, "right": r.right,
            "refusal_expected": r.refusal_expected, "refused": r.refused, "repeats": r.repeats,
            "hit_cap": r.hit_cap, "words": r.words, "spoken_s_est": r.spoken_s_est,
            "failed": list(r.failed)}  # fmt: skip


def compare_text(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str], Named]:
    """:func:`remote.compare_text` on :data:`ITEMS` with the replies of :data:`REPLIES`: its result, what it said
    and the server's LLM."""
    served = Named("server")
    monkeypatch.setattr(remote, "load_llm", lambda config, name: Named("in-process"))
    monkeypatch.setattr("voice.backends.llm_openai.OpenAiLlm", lambda llm_config: served)
    monkeypatch.setattr(quality, "run_item", lambda llm, config, item: REPLIES[(llm.name, item.id)])
    said: list[str] = []
    config = make_config()
    result = remote.compare_text(config, remote.remote_config(config, "http://x/v1", None), ITEMS, said.append)
    return result, said, served


def test_the_text_comparison_is_what_the_dict_code_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    result, said, served = compare_text(monkeypatch)
    # in-process: all right, the refusal honest; spoken p50 of 0.4, 2.0, 0.4 s; TTFT 60, 70, 80; reply 110, 120,
    # 130 ms
    local = {"items": 3, "right_pct": 100.0, "honest_refusal_pct": 100.0, "cap_or_repeat_pct": 0.0,
             "by_skill_pct": 0.0, "right_pct_by_category": {"knowledge": 100.0, "cannot": 100.0, "arithmetic": 100.0},
             "median_spoken_s_est": 0.4, "median_ttft_ms": 70.0, "median_reply_ms": 120.0}  # fmt: skip
    # server: q1 wrong (2 of 3 right), not refused; TTFT 75, 85, 95; reply 125, 135, 145 ms
    server = {**local, "right_pct": 66.7, "honest_refusal_pct": 0.0,
              "right_pct_by_category": {"knowledge": 100.0, "cannot": 0.0, "arithmetic": 100.0},
              "median_ttft_ms": 85.0, "median_reply_ms": 135.0}  # fmt: skip
    expected = {
        "same_replies": 2,
        "items": 3,
        "backends": {
            "in-process": {"summary": local, "rows": [row_json(REPLIES[("in-process", i.id)]) for i in ITEMS]},
            "server": {"summary": server, "rows": [row_json(REPLIES[("server", i.id)]) for i in ITEMS]},
        },
    }
    assert same_json(result.to_json(), expected) and TextComparison.from_json(expected) == result
    assert said == [
        "  same q0: ttft 60 / 75 ms  'Madrid.'",
        "  DIFF q1: ttft 70 / 85 ms  'Sure, the door is open.'",
        "  same q2: ttft 80 / 95 ms  '42.'",
    ]
    assert served.closed


def turn_json(phase: str, repeat: int, first: bool, m2e: float) -> dict[str, Any]:
    """A turn of :func:`test_the_mouth_to_ear_comparison_is_what_the_dict_code_wrote` as the dict-based code wrote
    it (every field of a turn, in order)."""
    return {
        "clip": "a.wav", "repeat": repeat, "phase": phase, "first_after_load": first, "outcome": "ok",
        "session_id": "", "turn_id": None, "turns_heard": 0, "first_answer_ms": None,
        "first_answer_interrupted": False, "mouth_to_ear_ms": m2e, "stages_ms": {}, "server_total_ms": None,
        "reconciliation_error_ms": None, "speech_end_offset_ms": None, "reply_lead_silence_ms": None,
        "residual_ms": None, "wer": None, "wer_normalized": None, "uncertain": None, "reference": None,
        "transcript": "", "reply_text": "", "asked_again": False, "reply_tokens": None, "reply_audio_s": None,
        "llm": None, "prompt_tokens_reused": None, "prompt_tokens_evaluated": None, "speech_end_s": 0.0,
        "send_lag_max_ms": 0.0, "send_lag_before_endpoint_ms": 0.0, "other_cpu_percent": None,
        "audio_file": None, "error": None, "route": "", "arrival_spread_ms": None, "audio_sent_spread_ms": None,
        "burst": None, "burst_why": "",
    }  # fmt: skip


class FakeRuntime:
    def close(self) -> None:
        pass


def fake_e2e(monkeypatch: pytest.MonkeyPatch, turns: Callable[[Sequence[PlanItem], str], list[TurnResult]]) -> None:
    """The mouth-to-ear part on clips a, b, c.wav (one warning), each backend's turns by ``turns(plan, backend)``
    (``llama`` or ``openai``)."""

    async def run_plan_in_process(
        cfg: Any, runtime: Any, plan: Sequence[PlanItem], opts: E2eOptions, on_turn: Callable[[TurnResult], None]
    ) -> list[TurnResult]:
        out = turns(plan, cfg.llm.backend)
        for t in out:
            on_turn(t)
        return out

    def load_clips(folder: Path, names: list[str] | None) -> tuple[list[FakeClip], list[str]]:
        clips = [FakeClip(n) for n in ("a.wav", "b.wav", "c.wav") if not names or n in names]
        return clips, ["c.wav: a warning"]

    monkeypatch.setattr(remote, "load_clips", load_clips)
    monkeypatch.setattr("voice.loader.load_runtime", lambda cfg: FakeRuntime())
    monkeypatch.setattr(e2e, "run_plan_in_process", run_plan_in_process)


def test_the_mouth_to_ear_comparison_is_what_the_dict_code_wrote(monkeypatch: pytest.MonkeyPatch) -> None:
    """One clip, one warm-up turn and one measured: 450 ms with the LLM in-process, 640 ms through the server."""

    def turns(plan: Sequence[PlanItem], backend: str) -> list[TurnResult]:
        m2e = {"llama": 450.0, "openai": 640.0}[backend]
        return [TurnResult(i.clip.name, i.repeat, i.phase, i.first_after_load, "ok", mouth_to_ear_ms=m2e) for i in plan]

    fake_e2e(monkeypatch, turns)
    said: list[str] = []
    config = make_config()
    args = argparse.Namespace(speech=Path("/speech"), clips="a.wav", repeats=1, warmup=1)
    result = remote.compare_e2e(config, remote.remote_config(config, "http://x/v1", None), args, said.append)

    def summary(m2e: float, within: int, meets: str) -> dict[str, Any]:
        """The measured turn alone: its mouth-to-ear is every statistic; nothing else was measured."""
        return {**EMPTY_SUMMARY, "n_turns": 1, "n_measured": 1, "p50_ms": m2e, "p95_ms": m2e, "max_ms": m2e,
                "min_ms": m2e, "mean_ms": m2e, "within_target": within, "meets_target": meets,
                "meets_human_gap": "no"}  # fmt: skip

    expected = {
        "in-process": {
            "summary": summary(450.0, 1, "yes"),
            "turns": [turn_json("warmup", 0, True, 450.0), turn_json("measured", 1, False, 450.0)],
        },
        "server": {
            "summary": summary(640.0, 0, "no"),
            "turns": [turn_json("warmup", 0, True, 640.0), turn_json("measured", 1, False, 640.0)],
        },
    }
    assert same_json(result.to_json(), expected) and E2eComparison.from_json(expected) == result
    assert said == [
        "warning: c.wav: a warning",
        "mouth-to-ear, LLM in-process: 1 clip(s) × 1 (+1 warm-up)",
        "    a.wav (warmup): mouth-to-ear 450 ms, ok",
        "    a.wav (measured): mouth-to-ear 450 ms, ok",
        "mouth-to-ear, LLM server: 1 clip(s) × 1 (+1 warm-up)",
        "    a.wav (warmup): mouth-to-ear 640 ms, ok",
        "    a.wav (measured): mouth-to-ear 640 ms, ok",
    ]


class ServedLlm(FakeLlm):
    """The fake LLM behind the server (it can be closed, as the OpenAI client is)."""

    def close(self) -> None:
        pass


def run_remote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[dict[str, Any], str, str]:
    """``voice bench remote --url …`` on fake LLMs (the server's replies differ on one item) and scripted turns
    (the server's 31.5 ms slower): its JSON, Markdown and console text (``tmp_path`` written ``TMP``)."""

    def turns(plan: Sequence[PlanItem], backend: str) -> list[TurnResult]:
        out = scripted(plan)
        if backend == "openai":
            out = [t if t.mouth_to_ear_ms is None else dataclasses.replace(t, mouth_to_ear_ms=t.mouth_to_ear_ms + 31.5)
                   for t in out]  # fmt: skip
        return out

    fake_e2e(monkeypatch, turns)
    committed_machine(monkeypatch, COMMITTED)
    monkeypatch.setattr(scaffold, "wait_for_quiet", lambda *a, **k: None)  # no warning on the machine's load
    monkeypatch.setattr(quality, "time", Tick())
    monkeypatch.setattr(remote, "load_config", lambda path: make_config())
    monkeypatch.setattr(remote, "load_llm", lambda config, name: FakeLlm(replies=("Madrid.", "I can't do that.", "4.")))
    monkeypatch.setattr(
        "voice.backends.llm_openai.OpenAiLlm", lambda llm_config: ServedLlm(replies=("Madrid.", "Done.", "4."))
    )
    argv = ["bench", "remote", "--url", "http://fake/v1", "--model", "served", "--questions", str(SET),
            "--items", "k-capital-spain,x-lamp,a-add", "--speech", "/speech", "--repeats", "2", "--warmup", "1",
            *extra]  # fmt: skip
    written, md = run_command(argv, tmp_path / "r")
    console = capsys.readouterr().out.replace(str(tmp_path), "TMP")
    return written, md, console


@pytest.mark.parametrize("case", ["e2e", "no-e2e"])
def test_the_whole_command_writes_what_the_dict_code_wrote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    written, md, console = run_remote(monkeypatch, tmp_path, capsys, *(["--no-e2e"] if case == "no-e2e" else []))
    assert (*digests(written, md), sha256(console)) == DIGESTS[case]
    assert written["text"]["same_replies"] == 2 and (written["e2e"] is None) == (case == "no-e2e")
    result = RemoteResult.from_json(written)
    assert result.to_json() == written and RemoteResult.from_json(result.to_json()) == result


#: The keys bench remote writes that the committed result predates, each after the key it follows, with the value
#: it would have had then: every item was answered by the LLM (skills off), and [stt] ask_again did not exist.
ADDED = {
    "text row": ("tokens", "by", "llm"),
    "text summary": ("cap_or_repeat_pct", "by_skill_pct", 0.0),
    "e2e summary": ("meets_human_gap", "asked_again", 0),
    "turn": ("reply_text", "asked_again", False),
}
#: A text summary's key that came last when the committed result was made, and now follows its added key.
MOVED = "right_pct_by_category"


def _edit(data: dict[str, Any], edit: Callable[[str, dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """A result's JSON with ``edit(kind, part)`` (kind: a key of :data:`ADDED`) in place of each such part."""
    text = data["text"]
    return {
        **data,
        "text": {**text, "backends": {
            name: {"summary": edit("text summary", b["summary"]), "rows": [edit("text row", r) for r in b["rows"]]}
            for name, b in text["backends"].items()
        }},
        "e2e": {
            name: {"summary": edit("e2e summary", b["summary"]), "turns": [edit("turn", t) for t in b["turns"]]}
            for name, b in data["e2e"].items()
        },
    }  # fmt: skip


def as_now(kind: str, part: dict[str, Any]) -> dict[str, Any]:
    """A part as the committed result holds it, as the current code writes it: its added key, the moved one."""
    after, key, value = ADDED[kind]
    assert key not in part
    moved = {MOVED: part[MOVED]} if kind == "text summary" else {}
    out: dict[str, Any] = {}
    for k, v in part.items():
        if k not in moved:
            out[k] = v
        if k == after:
            out |= {key: value, **moved}
    return out


def as_then(kind: str, part: dict[str, Any]) -> dict[str, Any]:
    """A part as the current code writes it, as the committed result holds it (the reverse of :func:`as_now`)."""
    then = {k: v for k, v in part.items() if k not in (ADDED[kind][1], MOVED)}
    return then | ({MOVED: part[MOVED]} if kind == "text summary" else {})


def test_the_committed_result_reads_back_to_its_markdown_and_json() -> None:
    """Made before the keys of :data:`ADDED` and the move of :data:`MOVED`: with them, it reads back to the same
    JSON; the JSON written then is the committed one but for them, and the Markdown is the committed one."""
    path = RESULTS / COMMITTED
    committed = json.loads(path.read_text(encoding="utf-8"))
    now = _edit(committed, as_now)
    result = RemoteResult.from_json(now)
    assert same_json(result.to_json(), now)
    assert same_json(_edit(result.to_json(), as_then), committed)
    assert remote.markdown(result, None, path.with_suffix(".md")) == path.with_suffix(".md").read_text(
        encoding="utf-8"
    )
