"""Every committed ``voice bench e2e`` result, read back (its meta, clips and turns; the summary made again from the
turns), writes what the code wrote before the meta, the clips and the statistics were typed: its meta and clips
exactly as committed, and digests of the JSON, the Markdown and the console text that code wrote for it, and of
the matrix row it made from that JSON.

Only three results read back to their committed JSON (:data:`SAME_JSON`): the others were made before the summary
and the turns had keys they have now (``asked_again``; the oldest also the uncertain turns, the normalized WER, the
false endpoints and the burst check), and are the committed JSON once those keys are left out. Six read back to
another Markdown than the committed one (:data:`OTHER_MARKDOWN`). A result made since (not in :data:`WRITTEN`)
reads back to its committed JSON and Markdown exactly."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from tests.bench_results import RESULTS, same_json
from voice.bench.e2e.report import console_summary, markdown
from voice.bench.e2e.result import E2eResult
from voice.bench.matrix.result import ComboRun, MeasuredRow

NAMES = sorted(p.stem for p in RESULTS.glob("*.json") if '"tool": "voice bench e2e"' in p.read_text("utf-8"))

#: sha256 (the first 16 hex digits) of what the code before the typed meta, clips and statistics wrote for each
#: committed result read back: its JSON (``json.dumps``), its Markdown (with the PNG link it was committed with),
#: its console summary, and the matrix row made from the JSON it wrote.
WRITTEN = {
    "2026-12-02-e2e": ("d8dc8738ac4d7f83", "ca7a11d3b4bbe7ae", "2756098bad4300d5", "1a0ed203ff3de928"),
    "2026-12-03-e2e-mixed": ("43cba150684afa58", "a0686ae51fadc096", "bd8ae4d342519d1e", "5880dd0b5f6c4548"),
    "2026-12-03-e2e-native": ("96024a018746ae47", "d90766cd703638d0", "2d214b9a8b42cb35", "316f3f1cc909a41d"),
    "2026-12-03-e2e-proxy": ("5ad9e8b39c28b248", "85e5dad7dad61b4f", "9e38e611a7e81252", "dd690c41cd55a87d"),
    "2026-12-03-e2e-realtime": ("eb3a37ddad1a6312", "79d89cc0960eaeb2", "571bec53ff9f4e7d", "99fb9e277ad9937d"),
    "2026-12-03-e2e": ("bdd9c4526e20f11e", "706c3b0f336b559c", "ffb49b25e5edb3bd", "15f1a5026a289c9e"),
    "2026-12-04-e2e-arrival-after": ("1711fa72bf2b225b", "b132d1ddb0ba3457", "434d91c6fd2456f1", "26e6bf2a698aa571"),
    "2026-12-04-e2e-arrival-before": ("b31a37ffec9c1c45", "5a3e0232e44d357e", "5cac8a0ec35a4e2d", "c2b4a3d9bbcf44be"),
    "2026-12-04-e2e-ask-again": ("6a56822199fb0b43", "f2f7f4cd46636b04", "d87641f43e800ad2", "92b660039f451b35"),
    "2026-12-04-e2e-engine-marks-after": ("b4d8a4bd1e991676", "6947ecb2c1cad174", "836ab83893637ac9",
                                          "cba901f0ee008b91"),
    "2026-12-04-e2e-engine-marks-before": ("9628bb1bb7b362dd", "b00ad13b5a947ed0", "ae7e765648ebaa0f",
                                           "ba68231a2888630d"),
    "2026-12-04-e2e-mixed-arrival": ("fa40ebd65e38492c", "6f70cecf6033e90c", "ab2ee96760a7b993", "0dbf808b01e6fde0"),
    "2026-12-04-e2e-mixed-ask-again": ("4fb1556212adc5d3", "67a3e4ad29fa4509", "3527cb2400c30a00",
                                       "d0cab23f2046fcb7"),
    "2026-12-04-e2e-mixed-lead": ("551784601b8039e1", "e1d11a47551d7220", "c6f9d7ed73da5e0d", "ffe77c243322dcf3"),
    "2026-12-04-e2e-mixed": ("7f7dc42131f24050", "1805851f8ae72fc0", "e3386aefe022e1fb", "69809b27a87616f3"),
    "2026-12-04-e2e-native-arrival": ("02d3b12ea768ab6f", "cc285c40ed712552", "23e0d8b641088129",
                                      "339a45e32a5c7ffe"),
    "2026-12-04-e2e-native-engine-marks": ("11def53b6b27f202", "ad783e8776b21359", "54b8286afcf37cac",
                                           "290399046b8852f2"),
    "2026-12-04-e2e-native-restructured": ("f59deca5c6f24525", "b82541ce04369fa2", "5f1e6d2531f0759b",
                                           "477d3948a9b73ac8"),
    "2026-12-04-e2e-native": ("83c5b3c596ff8b17", "a1f259393d3b941a", "4da1e1377919cd3b", "10ef61ec5da17aa8"),
    "2026-12-04-e2e-other-recordings-ask-again": ("6968d1719e1b4244", "4b451714dc6e7584", "0d137a3c4c6ac015",
                                                  "170e5f4435f5b213"),
    "2026-12-04-e2e-other-recordings": ("7edf3898d81de0f7", "95ef584432468abe", "15304d443f327ed1",
                                        "5c06c10632754142"),
    "2026-12-04-e2e-speechend-loop": ("503e03b017f08eb7", "0171aecfd315e6cf", "8db499bd5115cce7",
                                      "e6c0f24d93e0336a"),
    "2026-12-04-e2e-speechend-thread": ("1d9a7f021b14ad1d", "2b87295581f43cc4", "21b0be7440bd28d7",
                                        "faf23dce36b1a548"),
}  # fmt: skip
#: The results that read back to their committed JSON (made since the summary counts the turns that asked again).
SAME_JSON = {"2026-12-04-e2e-ask-again", "2026-12-04-e2e-mixed-ask-again", "2026-12-04-e2e-other-recordings-ask-again"}
#: The results whose Markdown is not the committed one: older (no normalized WER, no false endpoints: the first
#: three) or with a note written into it by hand (the other three).
OTHER_MARKDOWN = {
    "2026-12-02-e2e", "2026-12-03-e2e", "2026-12-03-e2e-mixed",
    "2026-12-04-e2e-engine-marks-after", "2026-12-04-e2e-engine-marks-before", "2026-12-04-e2e-mixed-lead",
}  # fmt: skip
RUN = ComboRun("tiny.en", "smollm2-135m", "joe-medium", 0, 61.5, 812.5, None)
"""The matrix's process that would have written the result."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def only_keys_of(committed: Any, written: Any) -> Any:
    """``written`` with only the keys ``committed`` has (in dicts at any depth; lists item by item)."""
    if isinstance(committed, dict) and isinstance(written, dict):
        return {k: only_keys_of(committed[k], v) for k, v in written.items() if k in committed}
    if isinstance(committed, list) and isinstance(written, list) and len(committed) == len(written):
        return [only_keys_of(c, w) for c, w in zip(committed, written, strict=True)]
    return written


def test_every_pinned_result_is_still_committed() -> None:
    """The 23 results made before the typing are pinned; a result made since must read back exactly (below)."""
    assert len(WRITTEN) == 23 and set(WRITTEN) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_committed_result_reads_back_to_what_the_code_before_wrote(name: str) -> None:
    path = RESULTS / f"{name}.json"
    committed = json.loads(path.read_text(encoding="utf-8"))
    result = E2eResult.from_json(committed)
    written = result.to_json()
    committed_md = path.with_suffix(".md").read_text(encoding="utf-8")
    png = re.search(r"!\[stages per turn\]\(([^)]*)\)", committed_md)
    assert png is not None
    md = markdown(result, RESULTS / png.group(1), path.with_suffix(".md")) + "\n"
    if name not in WRITTEN:  # made by the typed code: read back, it is what was written
        assert same_json(written, committed) and md == committed_md
        return
    assert same_json(written["meta"], committed["meta"]) and same_json(written["clips"], committed["clips"])
    assert same_json(written, committed) == (name in SAME_JSON)
    assert same_json(only_keys_of(committed, written), committed)  # the keys added since, the only difference
    assert (md == committed_md) == (name not in OTHER_MARKDOWN)
    row = MeasuredRow.from_e2e(RUN, "e2e.json", json.loads(json.dumps(written)))
    made = (json.dumps(written), md, console_summary(result), json.dumps(row.to_json()))
    assert tuple(digest(x) for x in made) == WRITTEN[name]
