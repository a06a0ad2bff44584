"""voice bench e2e's typed meta, method and clips: the keys in the order the dicts had them, the keys of older
results left out as they were, unknown keys kept (after the others), and a missing key refused."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests.bench_results import FAKE_MACHINE, FAKE_MACHINE_JSON, RESULTS, ended, same_json
from voice.bench.e2e.measure import E2eOptions, method_meta
from voice.bench.e2e.meta import ClipInfo, E2eMeta, E2eMethod
from voice.bench.e2e.result import E2eResult

#: The method of a result made before the uncertain turns, the normalized WER, the protocol and the burst check.
OLD_METHOD = {
    "speech_end": "s", "first_audio": "f", "reconciliation": "r", "sessions": "one each", "pacing": "p",
    "wer": "w", "clock": "c", "repeats": 2, "warmup": 1,
}  # fmt: skip
#: A clip of a result made before the reference speech end.
OLD_CLIP = {
    "clip": "a.wav", "duration_s": 2.5, "speech_start_s": 0.3, "speech_end_s": 1.8, "file_rate_hz": 44100,
    "file_channels": 2, "noise_floor_db": -70.0, "threshold_db": -50.0, "ignored_bursts": 0, "reference": None,
}  # fmt: skip
EVIDENCE = {
    "speech_end_vad_s": None, "speech_end_energy_s": 1.79, "speech_end_annotated": True,
    "speech_end_ambiguous": "noise", "background_db": -60.5,
}  # fmt: skip
NEW_CLIP = {**dict(list(OLD_CLIP.items())[:4]), **EVIDENCE, **dict(list(OLD_CLIP.items())[4:])}


def meta_json(**changes: Any) -> dict[str, Any]:
    """An in-process run's meta as the dict-based code wrote it, keys in order."""
    meta = {
        "machine": FAKE_MACHINE_JSON, "speech_dir": "/speech", "method": method_meta(E2eOptions()).to_json(),
        "load_s": 2.5, "server": "in-process", "models": {"stt": "a", "llm": "b", "tts": "c"},
        "config": {"server": {"port": 1}}, "ram_peak_mb": 800.5,
    }  # fmt: skip
    return {k: v for k, v in {**meta, **changes}.items() if v is not ...}


def test_the_method_is_written_as_the_dict_was() -> None:
    method = method_meta(E2eOptions(repeats=3, warmup=2, protocol="realtime"))
    keys = ["speech_end", "uncertain", "first_audio", "reconciliation", "sessions", "pacing", "wer",
            "wer_normalized", "clock", "protocol", "burst", "repeats", "warmup"]  # fmt: skip
    assert list(method.to_json()) == keys and (method.repeats, method.warmup) == (3, 2)
    compared = dataclasses.replace(method, compare_direct="pairs").to_json()
    assert list(compared) == [*keys, "compare_direct"] and E2eMethod.from_json(compared).compare_direct == "pairs"
    assert [k for k, _ in method.parts()] == [k for k in keys if k not in ("repeats", "warmup")]


def test_an_older_method_reads_back_without_the_keys_it_lacked() -> None:
    method = E2eMethod.from_json(OLD_METHOD)
    assert method.uncertain is None and method.wer_normalized is None and method.protocol is None
    assert same_json(method.to_json(), OLD_METHOD)


def test_the_meta_is_written_as_the_dict_was_in_process_and_external() -> None:
    data = meta_json()
    meta = E2eMeta.from_json(data)
    assert same_json(meta.to_json(), data) and E2eMeta.from_json(meta.to_json()) == meta
    assert meta.machine == FAKE_MACHINE and meta.load_s == 2.5 and meta.models == {"stt": "a", "llm": "b", "tts": "c"}
    external = meta_json(load_s=..., models=None, config=..., ram_peak_mb=None)
    assert list(external) == ["machine", "speech_dir", "method", "server", "models", "ram_peak_mb"]
    meta = E2eMeta.from_json(external)
    assert meta.load_s is None and meta.config is None and same_json(meta.to_json(), external)


def test_unknown_keys_are_kept_and_written_after_the_others() -> None:
    data = meta_json(method={**OLD_METHOD, "new_part": "n"}, extra_key=[1, 2])
    meta = E2eMeta.from_json(data)
    assert meta.extra == {"extra_key": [1, 2]} and meta.method.extra == {"new_part": "n"}
    assert same_json(meta.to_json(), data) and ("new_part", "n") in meta.method.parts()
    moved = {"zz": 1, **OLD_CLIP}
    clip = ClipInfo.from_json(moved)
    assert clip.extra == {"zz": 1} and same_json(clip.to_json(), {**OLD_CLIP, "zz": 1})


def test_a_clip_is_written_as_the_dict_was_with_or_without_the_evidence() -> None:
    clip = ClipInfo.from_json(NEW_CLIP)
    assert clip.evidence is not None and clip.evidence.speech_end_annotated and clip.reference is None
    assert same_json(clip.to_json(), NEW_CLIP)
    old = ClipInfo.from_json(OLD_CLIP)
    assert old.evidence is None and same_json(old.to_json(), OLD_CLIP)


@pytest.mark.parametrize(
    ("make", "data"),
    [(E2eMeta.from_json, meta_json(server=...)), (E2eMethod.from_json, {**OLD_METHOD, "repeats": ...}),
     (ClipInfo.from_json, {**NEW_CLIP, "background_db": ...}), (ClipInfo.from_json, {**OLD_CLIP, "clip": ...})],
)  # fmt: skip
def test_a_missing_key_is_refused(make: Any, data: dict[str, Any]) -> None:
    with pytest.raises((TypeError, KeyError)):
        make({k: v for k, v in data.items() if v is not ...})


def test_with_machine_puts_the_record_in_the_meta() -> None:
    data = json.loads((RESULTS / "2026-12-04-e2e-ask-again.json").read_text(encoding="utf-8"))
    result = E2eResult.from_json(data)
    finished = ended(result.machine)
    written = result.with_machine(finished).to_json()
    assert result.machine.extra == {} and written["meta"]["machine"] == {**data["meta"]["machine"], "end": "x"}
    assert same_json({**written, "meta": {**written["meta"], "machine": data["meta"]["machine"]}}, data)
