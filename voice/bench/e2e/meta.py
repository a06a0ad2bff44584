"""How a ``voice bench e2e`` run was made, typed: its method (:class:`E2eMethod`), the whole meta
(:class:`E2eMeta`: the machine, the speech, the server, the models) and what it found in each clip
(:class:`ClipInfo`); with the JSON each is written as (``to_json``: the keys and their order as they were when
these were dicts) and read back from (``from_json``).

Results made before a key was added lack it: such a field is None and its key left out of the JSON. Keys a
class does not know are kept in its ``extra`` and written after the others (as
:class:`~voice.bench.machine_record.Machine` does)."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from voice.bench.machine_record import Machine
from voice.bench.markdown import fields_json


def _known(cls: type) -> frozenset[str]:
    """The JSON keys of ``cls``'s fields (not ``extra``)."""
    return frozenset(f.name for f in dataclasses.fields(cls)) - {"extra"}


def _split(cls: type, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``data``'s keys that are fields of ``cls``, and the others (its ``extra``), each in their order."""
    known = _known(cls)
    return {k: v for k, v in data.items() if k in known}, {k: v for k, v in data.items() if k not in known}


def _written(out: dict[str, Any], optional: Collection[str], extra: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON: ``out`` (its fields in order, ``extra`` among them) without the ``optional`` keys that
    are None, then the ``extra`` keys."""
    return {k: v for k, v in out.items() if k != "extra" and (v is not None or k not in optional)} | extra


@dataclass(frozen=True, kw_only=True)
class E2eMethod:
    """How the run measured (:func:`voice.bench.e2e.measure.method_meta`): a sentence for each part, and the plan."""

    speech_end: str
    """How the clip's reference speech end is found."""
    uncertain: str | None = None
    """When a turn's mouth-to-ear is not trusted (None: a result made before turns were judged so)."""
    first_audio: str
    """When the reply is first heard."""
    reconciliation: str
    """Mouth-to-ear against the server's stages, and what explains the difference."""
    sessions: str
    pacing: str
    """How the clips are spoken (real time, frame length)."""
    wer: str
    """How the word error rate is normalized."""
    wer_normalized: str | None = None
    """How the normalized word error rate is normalized (None: a result made before it)."""
    clock: str
    protocol: str | None = None
    """The server's protocol the clips are spoken in (None: a result made before the choice)."""
    burst: str | None = None
    """How a reply whose audio arrived in a burst is told (None: a result made before the check)."""
    repeats: int
    """Measured turns of each clip."""
    warmup: int
    """Warm-up turns before them (not in the statistics)."""
    compare_direct: str | None = None
    """With ``--compare-direct``: how the proxied and the direct turns are compared (None: not compared)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of a read method this class does not know, with their values, in their order."""

    def parts(self) -> list[tuple[str, object]]:
        """The sentences (not the plan's counts), named by their keys, in the JSON's order: the Markdown's
        method section."""
        return [(k, v) for k, v in self.to_json().items() if k not in ("repeats", "warmup")]

    def to_json(self) -> dict[str, Any]:
        return _written(fields_json(self), _METHOD_OPTIONAL, self.extra)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eMethod:
        own, extra = _split(cls, data)
        return cls(**own, extra=extra)


_METHOD_OPTIONAL = frozenset(f.name for f in dataclasses.fields(E2eMethod) if f.default is None)
"""The method's keys left out while None."""


@dataclass(frozen=True)
class E2eMeta:
    """How a run was made: where, with what, speaking what."""

    machine: Machine
    """The machine record (:mod:`voice.bench.machine`), completed at the end of the run."""
    speech_dir: str
    """The folder of the clips spoken."""
    method: E2eMethod
    load_s: float | None
    """Seconds to load the models (in-process; None, and left out of the JSON: an external server)."""
    server: str
    """Which server the clips were spoken to, and how."""
    models: dict[str, str] | None
    """The catalogue names of the models: ``stt``, ``llm`` and ``tts`` (in-process; None: an external server)."""
    config: dict[str, Any] | None
    """The configuration the in-process server ran with, as JSON: its dataclasses as dicts, the server's token
    left out (None, and left out of the JSON: an external server). Kept as written, not read into a
    :class:`~voice.config.config.Config`: its fields have changed since the first results."""
    ram_peak_mb: float | None
    """Peak resident memory of the bench process, models and server included (MiB; None: an external
    server)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of a read meta this class does not know, with their values, in their order."""

    def to_json(self) -> dict[str, Any]:
        out = fields_json(self) | {"machine": self.machine.to_json(), "method": self.method.to_json()}
        return _written(out, ("load_s", "config"), self.extra)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> E2eMeta:
        own, extra = _split(cls, data)
        machine, method = Machine.from_json(own.pop("machine")), E2eMethod.from_json(own.pop("method"))
        return cls(
            **{"load_s": None, "config": None, **own}, machine=machine, method=method, extra=extra
        )


@dataclass(frozen=True)
class SpeechEndEvidence:
    """How a clip's reference speech end was found (:class:`voice.turn.speech_end.SpeechEnd`); seconds from the
    clip's start."""

    speech_end_vad_s: float | None
    """End of the last speech stretch by the offline speech detector (None: no speech found)."""
    speech_end_energy_s: float
    """End of the last voiced stretch by the energy analysis."""
    speech_end_annotated: bool
    """The end comes from ``transcripts.tsv``, not from the audio."""
    speech_end_ambiguous: str | None
    """Why the reference cannot be trusted to ~20 ms (None: it can)."""
    background_db: float
    """Mean power of the clip's non-speech windows (dBFS)."""


_EVIDENCE = tuple(f.name for f in dataclasses.fields(SpeechEndEvidence))


@dataclass(frozen=True)
class ClipInfo:
    """A clip spoken in a run, as :meth:`voice.bench.clips.Clip.describe` found it; times in seconds from its
    start."""

    clip: str
    """Its file name in the speech folder."""
    duration_s: float
    speech_start_s: float
    """The first voiced sample."""
    speech_end_s: float
    """The reference speech end mouth-to-ear is measured from."""
    evidence: SpeechEndEvidence | None
    """How that end was found, written as its fields (None, and left out: a result made before the reference
    speech end)."""
    file_rate_hz: int
    """The file's sample rate (the clip is resampled to the client's)."""
    file_channels: int
    noise_floor_db: float
    """The energy analysis's noise floor (dBFS)."""
    threshold_db: float
    """The energy analysis's voicing threshold (dBFS)."""
    ignored_bursts: int
    """Voiced stretches too short to be speech (clicks, taps, breaths)."""
    reference: str | None
    """Its transcript from ``transcripts.tsv`` (None: none)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of a read clip this class does not know, with their values, in their order."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in fields_json(self).items():
            if k == "evidence":
                out.update(fields_json(v) if v is not None else {})
            else:
                out[k] = v
        return _written(out, (), self.extra)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClipInfo:
        own, extra = _split(cls, {k: v for k, v in data.items() if k not in _EVIDENCE})
        found = [k for k in _EVIDENCE if k in data]
        evidence = SpeechEndEvidence(**{k: data[k] for k in _EVIDENCE}) if found else None
        return cls(**own, evidence=evidence, extra=extra)
