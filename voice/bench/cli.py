"""Argument parsing for ``voice bench e2e | matrix | prefill | speculative | contention | remote | load | kv``
and the other ``voice bench`` commands.

Heavy modules (models, matplotlib) are imported only when a command runs, so ``voice --help`` stays fast.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voice.bench.cli_common import config_arg, outputs, runner, speech_args
from voice.bench.turns.cli import add_turns_parser


def add_bench_parser(sub: Any) -> None:
    b: argparse.ArgumentParser = sub.add_parser(
        "bench",
        help="measure latency: e2e, matrix, prefill, speculative, contention (see voice bench --help)",
        description="Measuring tools. Each prints a table and can write JSON, Markdown and a PNG. "
        "See docs/measuring.md for what every number means.",
    )
    bs = b.add_subparsers(dest="bench", required=True)

    e = bs.add_parser(
        "e2e",
        help="mouth-to-ear latency of recordings spoken into the server in real time",
        description="Speak every clip into the server (in-process by default) in real time, 20 ms frames, "
        "then silence until the reply; measure mouth-to-ear at the client and reconcile it with the "
        "server's stage log.",
    )
    speech_args(e)
    e.add_argument("--url", default=None, help="measure a running server instead (ws://host:port/)")
    e.add_argument("--token", default=None, help="token for --url, if the server needs one")
    e.add_argument(
        "--protocol",
        choices=("native", "realtime"),
        default="native",
        help="speak the native protocol at / (default) or the OpenAI Realtime-compatible one at /v1/realtime",
    )
    e.add_argument(
        "--ca-file",
        type=Path,
        default=None,
        metavar="PEM",
        help="trust this CA for a wss:// --url (e.g. a proxy's self-signed certificate)",
    )
    e.add_argument(
        "--compare-direct",
        default=None,
        metavar="URL",
        help="also speak every clip to the same server at URL (ws://host:port/, not through the proxy), "
        "alternating, and report what --url adds to mouth-to-ear",
    )
    e.add_argument("--repeats", type=int, default=2, help="times every clip is spoken (default 2)")
    e.add_argument(
        "--warmup",
        type=int,
        default=1,
        help="turns spoken first and left out of the statistics (default 1); the first turn after load is "
        "always reported on its own",
    )
    e.add_argument(
        "--save-audio", type=Path, default=None, metavar="DIR", help="save every reply as WAV in DIR"
    )
    e.add_argument(
        "--reply-timeout", type=float, default=60.0, help="seconds to wait for a reply (default 60)"
    )
    config_arg(e)
    e.add_argument("--stt", default=None, help="STT model (catalogue name), overriding the config")
    e.add_argument("--llm", default=None, help="LLM model (catalogue name), overriding the config")
    e.add_argument("--tts", default=None, help="TTS voice (catalogue name), overriding the config")
    outputs(e, "turn")
    e.set_defaults(func=runner("e2e.command"))

    x = bs.add_parser(
        "mix",
        help="write hard clips (chime, click, breath, noise, music, quiet) made from a folder of recordings",
        description="Mix every clip of --speech with an onset chime, a click or breath after the speech, "
        "noise at 10-15 dB SNR, a music bed, a quiet level; write them (and the clean clips) to --out and "
        "report how far the reference speech end lands from the clean clip's. Then: voice bench e2e "
        "--speech OUT.",
    )
    speech_args(x)
    x.add_argument("--out", type=Path, default=None, metavar="DIR", help="folder to write to (required)")
    x.add_argument("--mixes", default=None, help="comma-separated recipe names (default: all)")
    x.set_defaults(func=runner("mix.command"))

    a = bs.add_parser(
        "annotate",
        help="write each clip's speech end into transcripts.tsv and draw a PNG per clip to check it",
        description="Compute the reference speech end of every recording in DIR, write it into the third "
        "column of DIR/transcripts.tsv (printed, or in place with --write) and draw one PNG per clip "
        "(waveform, speech probability, energy, the ends) so a person can check and correct it. "
        "voice bench e2e then uses the annotated ends.",
    )
    a.add_argument("dir", type=Path, help="folder of recordings (with or without transcripts.tsv)")
    a.add_argument("--write", action="store_true", help="write DIR/transcripts.tsv in place (keeps a .bak)")
    a.add_argument("--overwrite", action="store_true", help="replace speech ends that are already annotated")
    a.add_argument(
        "--png-dir", type=Path, default=None, help="where the PNGs go (default: out/annotate/<folder name>/)"
    )
    a.set_defaults(func=runner("annotate"))

    m = bs.add_parser(
        "matrix",
        help="e2e for every combination of models: which meets turn-taking timing",
        description="Run `voice bench e2e` once per combination of models, each in its own process "
        "(so RAM peak is per combination), same clips and repeats, one after another.",
    )
    speech_args(m)
    m.add_argument(
        "--stt", default=None, help="comma-separated STT models (default: every one in the catalogue)"
    )
    m.add_argument("--llm", default=None, help="comma-separated LLMs (default: every one in the catalogue)")
    m.add_argument(
        "--tts", default=None, help="comma-separated TTS voices (default: every one in the catalogue)"
    )
    m.add_argument("--repeats", type=int, default=2)
    m.add_argument("--warmup", type=int, default=1)
    config_arg(m)
    m.add_argument(
        "--keep", type=Path, default=None, metavar="DIR", help="keep each combination's JSON and log in DIR"
    )
    m.add_argument(
        "--quality-bar",
        type=float,
        default=80.0,
        metavar="PCT",
        help="a combination meets turn-taking timing only with its LLM this %% right on the quality set (80)",
    )
    m.add_argument("--quality-items", default=None, help="item ids or categories of the quality set (default: all)")
    m.add_argument("--no-quality", action="store_true", help="speed only: skip the quality set")
    m.add_argument(
        "--spoken-quality", action="store_true",
        help="rate each STT + LLM on the quality set in spoken mode (the whole loop: STT errors count) instead "
        "of each LLM in text mode",
    )  # fmt: skip
    outputs(m, "combination")
    m.set_defaults(func=runner("matrix.measure"))

    w = bs.add_parser(
        "stt",
        help="Whisper on the real audio length (guarded) vs the 30 s window: time and WER per clip",
        description="Both STT paths on the same clips, alternated, in one run (see voice/bench/stt/window.py).",
    )
    config_arg(w)
    speech_args(w)
    w.add_argument("--repeats", type=int, default=3)
    w.add_argument("--espeak", action="store_true",
                   help="also transcribe 16 questions spoken by espeak-ng (made at run time, in a temporary folder)")
    w.add_argument("--variants", type=Path, default=None, help="instead: compare the [[variant]] [stt] settings "
                   "of this TOML on the server's path, in one run (voice/bench/stt/levers.py)")
    w.add_argument("--quality-set", action="store_true",
                   help="with --variants: also the quality set's questions as its espeak-ng voices speak them")
    outputs(w, "clip")
    w.set_defaults(func=runner("stt.window"))

    t = bs.add_parser(
        "techniques",
        help="mouth-to-ear as the latency techniques are switched on one after another, with quality",
        description="One e2e run per technique, cumulative, in one sitting (see voice/bench/techniques/measure.py).",
    )
    config_arg(t)
    speech_args(t)
    t.add_argument("--repeats", type=int, default=2)
    t.add_argument("--warmup", type=int, default=1)
    t.add_argument(
        "--steps", default=None, help="comma-separated steps to run (default: all; each on top of those before it)"
    )
    outputs(t, "step")
    t.set_defaults(func=runner("techniques.measure"))

    q = bs.add_parser(
        "pauses",
        help="false endpoints on spliced mid-sentence pauses, and end-of-turn delay, per endpointing strategy",
        description="Offline VAD + endpointer over the clips (see voice/bench/pauses/measure.py).",
    )
    config_arg(q)
    speech_args(q)
    q.add_argument("--pauses", default="150,250,300,450,600", help="pause lengths to splice in (ms)")
    q.add_argument("--silences", default="200,500", help="silence windows to compare besides the config's (ms)")
    q.add_argument("--no-smart-turn", action="store_true", help="leave the end-of-turn model out")
    q.add_argument(
        "--thresholds", default="",
        help="Smart Turn 'complete' thresholds to compare besides the config's, e.g. 0.7,0.9",
    )  # fmt: skip
    q.add_argument(
        "--variants", type=Path, default=None,
        help="a TOML file of [[variant]] tables (a name, [variant.turn] and [variant.vad] keys over the config's): "
        "compare these instead of --silences/--thresholds (e.g. benchmarks/turn_variants.toml)",
    )  # fmt: skip
    q.add_argument(
        "--text-delay-ms", type=float, default=200.0,
        help="with a variant using [turn] text_evidence: the pause's words reach the endpointer this much audio "
        "after the pause (the speculative STT's time; default 200)",
    )  # fmt: skip
    outputs(q, "strategy")
    q.set_defaults(func=runner("pauses.measure"))

    add_turns_parser(bs)

    p = bs.add_parser(
        "prefill",
        help="time to first token vs prompt length, prefix cached and not",
        description="For each prompt length, TTFT of a new user turn after an already evaluated prefix "
        "(cached) and from a fresh context (uncached).",
    )
    config_arg(p)
    p.add_argument("--llm", default=None, help="comma-separated LLMs (default: the configured one)")
    p.add_argument(
        "--lengths",
        default="128,512,1024,2000",
        help="prompt lengths in tokens (default 128,512,1024,2000; must fit n_ctx)",
    )
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--text", type=Path, default=None, help="long text the prompts are cut from")
    outputs(p, "measurement")
    p.set_defaults(func=runner("prefill.measure"))

    s = bs.add_parser(
        "speculative",
        help="tokens/s, ITL and TTFT with and without prompt-lookup speculative decoding",
        description="Greedy decoding of the same prompts with and without llama-cpp-python's "
        "prompt-lookup draft model; outputs are compared.",
    )
    config_arg(s)
    s.add_argument("--llm", default=None, help="comma-separated LLMs (default: the configured one)")
    s.add_argument(
        "--prompts",
        type=Path,
        default=None,
        help="prompts TOML (default: benchmarks/speculative_prompts.toml)",
    )
    s.add_argument("--draft-tokens", default="10", help="comma-separated num_pred_tokens values (default 10)")
    s.add_argument("--ngram", type=int, default=2, help="max n-gram size of the lookup (default 2)")
    s.add_argument("--repeats", type=int, default=3)
    outputs(s, "measurement")
    s.set_defaults(func=runner("speculative.measure"))

    c = bs.add_parser(
        "contention",
        help="STT and LLM alone, at the same time without the compute gate, and through it",
        description="Whisper transcribes a clip while llama.cpp generates: each alone, both at once with "
        "ComputeGate(enabled=False), and both at once through the gate; slowdowns vs alone.",
    )
    config_arg(c)
    speech_args(c)
    c.add_argument(
        "--clip", type=Path, default=None, help="clip to transcribe (default: jfk.wav of --speech)"
    )
    c.add_argument("--stt", default=None, help="STT model (default: the configured one)")
    c.add_argument("--llm", default=None, help="LLM (default: the configured one)")
    c.add_argument("--tokens", type=int, default=100, help="tokens the LLM generates (default 100)")
    c.add_argument("--repeats", type=int, default=5)
    c.add_argument(
        "--wait-policies",
        default=None,
        help="also run each of these thread wait policies in a subprocess: comma-separated from "
        "project (GOMP_SPINCOUNT=300000, the project's setting), PASSIVE, ACTIVE",
    )
    outputs(c, "measurement")
    c.set_defaults(func=runner("contention.measure"))

    q = bs.add_parser(
        "quality",
        help="is the reply right: a question set with checks, per LLM, beside TTFT and reply time",
        description="Text mode: every question straight to the LLM (greedy) with the configured system "
        "prompt; replies judged by the checks in the question set (see benchmarks/quality_questions.toml). "
        "Spoken mode (--spoken): every question spoken by synthetic voices (espeak-ng and flite, in turn) "
        "through the whole loop (VAD, end of turn, STT, skills, LLM, TTS), so STT errors count.",
    )
    config_arg(q)
    q.add_argument("--spoken", action="store_true", help="spoken mode: the whole loop, STT errors count")
    q.add_argument("--stt", default=None, help="with --spoken: the STT model (default: the configured one)")
    q.add_argument(
        "--speech", type=Path, default=None,
        help="with --spoken: also recordings in this folder whose transcripts.tsv text is a question of the set",
    )  # fmt: skip
    q.add_argument(
        "--voices", default=None,
        help="with --spoken: comma-separated voices that take turns, <engine>:<voice> with engine espeak-ng or "
        "flite (default: espeak-ng:en-us,flite:slt,espeak-ng:en-gb+f3,flite:rms,espeak-ng:en-us+m7,flite:awb)",
    )  # fmt: skip
    q.add_argument("--llm", default=None, help="comma-separated LLMs (default: the configured one)")
    q.add_argument("--questions", type=Path, default=None, help="question set TOML")
    q.add_argument("--items", default=None, help="comma-separated item ids or categories to run")
    q.add_argument(
        "--as-transcribed", action="store_true",
        help="text mode: write each question as Whisper often does (first letter lower case, '?' as '.'), to "
        "see how much the LLM cares about the STT's spelling",
    )  # fmt: skip
    q.add_argument(
        "--rejudge", type=Path, default=None, metavar="RESULT.json",
        help="run no model: judge the replies of a stored result again with the question set's checks as they are "
        "now (clock items and asked-again rows keep their verdict); write it with --out",
    )  # fmt: skip
    q.add_argument(
        "--fit-not-sure", type=Path, nargs="+", default=None, metavar="RESULT.json",
        help="run no model: for each [llm] not_sure_below_logprob, what replacing the stored replies the LLM was "
        "less sure of with [llm] not_sure_reply would have done (replaced, right lost, wrong caught, four outcomes), "
        "over all the results given; write it with --out",
    )  # fmt: skip
    q.add_argument(
        "--fit-ask-again", type=Path, nargs="+", default=None, metavar="RESULT.json",
        help="run no model: for each [stt] ask_again_llm_below_logprob, what asking again instead of letting the LLM "
        "answer words the STT was less sure of would have done to stored spoken results (after today's not_sure "
        "gate); write it with --out",
    )  # fmt: skip
    q.add_argument(
        "--fit-ask-again-words", type=Path, nargs="+", default=None, metavar="RESULT.json",
        help="run no model: the same for each [stt] ask_again_llm_below_word_prob (the least likely word's "
        "probability), after today's not_sure gate and mean log-probability bar; write it with --out",
    )  # fmt: skip
    outputs(q, "reply")
    q.set_defaults(func=runner("quality.command"))

    r = bs.add_parser(
        "remote",
        help="the LLM in-process vs through an OpenAI-compatible server: TTFT, mouth-to-ear, same replies?",
        description="Starts python -m llama_cpp.server on loopback with the configured model (or uses --url), "
        "then asks the quality question set both ways (greedy: are the replies the same text? TTFT, reply "
        "time) and speaks the recordings into a server with each LLM backend (mouth-to-ear).",
    )
    config_arg(r)
    speech_args(r)
    r.add_argument("--url", default=None, help="an already running server's API root (http://host:port/v1)")
    r.add_argument("--model", default=None, help="the model name that server serves (default: [llm] model)")
    r.add_argument("--questions", type=Path, default=None, help="question set TOML")
    r.add_argument("--items", default=None, help="comma-separated item ids or categories to ask")
    r.add_argument("--repeats", type=int, default=2, help="times every clip is spoken per backend (default 2)")
    r.add_argument("--warmup", type=int, default=1, help="warm-up turns per backend, not counted (default 1)")
    r.add_argument("--no-e2e", action="store_true", help="the text comparison only")
    outputs(r, "reply and turn")
    r.set_defaults(func=runner("remote.measure"))

    ld = bs.add_parser(
        "load",
        help="N simulated talkers at once: mouth-to-ear, queue waits, busy, tokens per turn vs N; capacity",
        description="For each N, N talkers speak the recordings into the server at once, in real time, in "
        "multi-turn conversations (listening to each reply, then a 200-600 ms pause). Capacity = the largest "
        "N with p95 mouth-to-ear <= 800 ms and no busy.",
    )
    speech_args(ld)
    ld.add_argument("--sessions", default="1,2,4,8", help="comma-separated talker counts (default 1,2,4,8)")
    ld.add_argument("--turns", type=int, default=4, help="turns per conversation (default 4)")
    ld.add_argument("--pause-min-ms", type=float, default=200.0, help="shortest pause after a reply (200)")
    ld.add_argument("--pause-max-ms", type=float, default=600.0, help="longest pause after a reply (600)")
    ld.add_argument("--seed", type=int, default=1, help="seed of the pauses and start offsets (default 1)")
    ld.add_argument(
        "--compare-kv",
        action="store_true",
        help="run the sweep twice in-process: [llm] kv_cache_mb = 0 (off), then as configured (before/after)",
    )
    ld.add_argument("--url", default=None, help="load a running server instead (ws://host:port/)")
    ld.add_argument("--token", default=None, help="token for --url, if the server needs one")
    ld.add_argument("--reply-timeout", type=float, default=60.0, help="seconds to wait for a reply (default 60)")
    ld.add_argument("--llm", default=None, help="LLM model (catalogue name), overriding the config")
    config_arg(ld)
    outputs(ld, "level and turn")
    ld.set_defaults(func=runner("load.command"))

    kv = bs.add_parser(
        "kv",
        help="TTFT of a long conversation and of many sessions at the KV memory bound ([llm] kv_cache_mb)",
        description="Text mode, greedy: S sessions taking turns at each KV bound (0 = off): TTFT, evaluated "
        "tokens, evictions, save/restore cost; and one long conversation through the context window.",
    )
    config_arg(kv)
    kv.add_argument("--llm", default=None, help="LLM (default: the configured one)")
    kv.add_argument("--sessions", type=int, default=8, help="conversations taking turns (default 8)")
    kv.add_argument("--turns", type=int, default=4, help="turns per conversation (default 4)")
    kv.add_argument("--bounds-mb", default="0,8,24,256", help="KV bounds in MB to compare (default 0,8,24,256)")
    kv.add_argument("--long-turns", type=int, default=40, help="turns of the long conversation (default 40)")
    kv.add_argument("--n-ctx", type=int, default=None, help="context window for both parts (default: config)")
    outputs(kv, "turn")
    kv.set_defaults(func=runner("kv.measure"))

    def usage(args: argparse.Namespace) -> int:
        b.print_help()
        return 2

    b.set_defaults(func=usage)
