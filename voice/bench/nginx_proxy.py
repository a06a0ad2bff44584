"""Debian's nginx on loopback, with a throw-away self-signed certificate, in front of a running server.

For measuring (``voice bench e2e --url wss://… --ca-file …``) and for the proxy test: it renders the shipped
site file ``docs/deploy/voice.nginx.conf.template`` (so what is measured and tested is what users deploy),
wraps it in a minimal main config of its own (its own prefix, logs and temp dirs, no daemon) and runs
``nginx`` in the foreground until stopped. The certificate comes from the ``openssl`` command line tool,
for ``localhost`` and ``127.0.0.1``; the certificate file is its own CA file.

Not a deployment tool (docs/deploy/README.md is): ``python -m voice.bench.nginx_proxy --help``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TEMPLATE = Path(__file__).resolve().parents[2] / "docs" / "deploy" / "voice.nginx.conf.template"
PLACEHOLDERS = ("VOICE_LISTEN", "VOICE_SERVER_NAME", "VOICE_CERT", "VOICE_KEY", "VOICE_UPSTREAM")
_NAME = re.compile(r"\$\{(VOICE_[A-Z_]+)\}")
START_TIMEOUT_S = 10.0


class ProxyError(RuntimeError):
    """nginx or openssl is missing, or nginx did not start (its error log is in the message)."""


def render(template: str, values: Mapping[str, str]) -> str:
    """The template with every ``${VOICE_…}`` replaced (like ``envsubst`` restricted to those names).

    Raises ValueError naming a placeholder without a value, or a value for a name the template lacks."""
    used = set(_NAME.findall(template))
    missing = sorted(used - set(values))
    if missing:
        raise ValueError(f"no value for {', '.join(missing)} (the template uses {', '.join(sorted(used))})")
    unknown = sorted(set(values) - used)
    if unknown:
        raise ValueError(f"the template has no {', '.join(unknown)}")
    return _NAME.sub(lambda m: values[m.group(1)], template)


def main_config(site: Path, prefix: Path, *, user: str | None = None) -> str:
    """A minimal ``nginx.conf`` that includes ``site``, keeping every file nginx writes under ``prefix``.

    ``user``: the worker processes' user (needed when running as root: the default, nobody, could not
    reach a private temp directory)."""
    tmp = prefix / "tmp"
    lines = [
        *([f"user {user};"] if user else []),
        "daemon off;",
        "worker_processes 1;",
        f"pid {prefix / 'nginx.pid'};",
        f"error_log {prefix / 'error.log'} info;",
        "events { worker_connections 256; }",
        "http {",
        f"    access_log {prefix / 'access.log'};",
        *(f"    {kind}_temp_path {tmp / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")),
        f"    include {site};",
        "}",
    ]
    return "\n".join(lines) + "\n"


def find_nginx() -> str | None:
    """The nginx binary (Debian installs it in /usr/sbin, which is not on every user's PATH)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin:/usr/local/nginx/sbin")


def self_signed(directory: Path, names: Sequence[str] = ("localhost", "127.0.0.1")) -> tuple[Path, Path]:
    """A self-signed certificate and key for ``names`` (host names and IP addresses), valid 2 days.

    The certificate is its own CA file (``ssl.create_default_context(cafile=cert)`` trusts it)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ProxyError("the openssl command line tool is not installed (Debian: apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "cert.pem", directory / "key.pem"
    san = ",".join(("IP:" if _is_ip(n) else "DNS:") + n for n in names)
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-days", "2", "-subj", f"/CN={names[0]}", "-addext", f"subjectAltName={san}",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _is_ip(name: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in name else socket.AF_INET, name)
    except OSError:
        return False
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Proxy:
    """A running nginx: where it listens and what a client needs to trust it."""

    port: int
    ca_file: Path
    prefix: Path

    @property
    def https_url(self) -> str:
        return f"https://localhost:{self.port}/"

    @property
    def wss_url(self) -> str:
        return f"wss://localhost:{self.port}/"

    @property
    def origin(self) -> str:
        """The Origin a browser sends for a page loaded from this proxy."""
        return f"https://localhost:{self.port}"


def write_config(
    prefix: Path, upstream: str, port: int, cert: Path, key: Path, template: Path = TEMPLATE
) -> Path:
    """Render the site file for ``127.0.0.1:port`` → ``upstream`` and the main config; returns the latter."""
    (prefix / "tmp").mkdir(parents=True, exist_ok=True)
    site = prefix / "voice.conf"
    site.write_text(
        render(
            template.read_text(encoding="utf-8"),
            {
                "VOICE_LISTEN": f"127.0.0.1:{port}",
                "VOICE_SERVER_NAME": "localhost",
                "VOICE_CERT": str(cert),
                "VOICE_KEY": str(key),
                "VOICE_UPSTREAM": upstream,
            },
        ),
        encoding="utf-8",
    )
    user = pwd.getpwuid(os.geteuid()).pw_name if os.geteuid() == 0 else None
    conf = prefix / "nginx.conf"
    conf.write_text(main_config(site, prefix, user=user), encoding="utf-8")
    return conf


def check_config(conf: Path, prefix: Path, nginx: str | None = None) -> str:
    """``nginx -t`` on the config; returns its output, raises ProxyError if nginx refuses it."""
    binary = nginx or find_nginx()
    if binary is None:
        raise ProxyError("nginx is not installed (Debian: apt-get install nginx)")
    done = subprocess.run(
        [binary, "-t", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise ProxyError(f"nginx refuses the config:\n{done.stderr}")
    return done.stderr


@contextlib.asynccontextmanager
async def running_nginx(
    upstream: str,
    directory: Path,
    *,
    port: int | None = None,
    template: Path = TEMPLATE,
    nginx: str | None = None,
) -> AsyncIterator[Proxy]:
    """Run nginx on 127.0.0.1 (``port``, or a free one) in front of ``upstream`` (``host:port``) until the
    block ends, then stop it (SIGQUIT: open connections are closed, nginx waits for nothing else).

    Files (config, certificate, logs) go to ``directory``. Cancelling stops nginx too."""
    binary = nginx or find_nginx()
    if binary is None:
        raise ProxyError("nginx is not installed (Debian: apt-get install nginx)")
    cert, key = await asyncio.to_thread(self_signed, directory)
    log = directory / "error.log"
    attempts = 1 if port is not None else 3  # a free port may be taken before nginx binds it: try another
    for attempt in range(attempts):
        chosen = port if port is not None else free_port()
        conf = await asyncio.to_thread(write_config, directory, upstream, chosen, cert, key, template)
        await asyncio.to_thread(log.unlink, missing_ok=True)
        proc = await asyncio.create_subprocess_exec(
            binary, "-p", str(directory), "-c", str(conf), "-e", str(log),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            if await _listening(proc, chosen):
                break
            stderr = (await proc.stderr.read()).decode(errors="replace") if proc.stderr else ""
            text = stderr + await asyncio.to_thread(_read, log)
            if "Address already in use" in text and attempt + 1 < attempts:
                continue
            raise ProxyError(f"nginx did not start (exit {proc.returncode}):\n{text.strip()}")
        except BaseException:
            await _stop(proc)
            raise
    try:
        yield Proxy(chosen, cert, directory)
    finally:
        await _stop(proc)


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


async def _listening(proc: asyncio.subprocess.Process, port: int) -> bool:
    """Wait until nginx accepts connections on ``port`` (True) or exits (False)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT_S
    while proc.returncode is None and loop.time() < deadline:
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 0.05)
    if proc.returncode is None:
        raise ProxyError(f"nginx did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S:g} s")
    return False


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGQUIT)
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()


# ---------------------------------------------------------------------------------------------- command
async def _health(proxy: Proxy, timeout_s: float, say: Callable[[str], None]) -> bool:
    """Wait until ``GET /health`` through the proxy answers 200 (the server's models are ready)."""
    import ssl
    import urllib.request

    context = ssl.create_default_context(cafile=str(proxy.ca_file))
    url = proxy.https_url + "health"

    def status() -> int | None:
        try:
            with urllib.request.urlopen(url, context=context, timeout=5) as answer:
                return int(answer.status)
        except OSError as e:
            code = getattr(e, "code", None)
            return int(code) if isinstance(code, int) else None

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    said = False
    while loop.time() < deadline:
        if await asyncio.to_thread(status) == 200:
            return True
        if not said:
            say(f"waiting for {url} to answer 200 (the server's models loading?)")
            said = True
        await asyncio.sleep(1.0)
    return False


async def _serve(args: argparse.Namespace) -> int:
    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    directory = args.dir or Path(tempfile.mkdtemp(prefix="voice-nginx-"))
    async with running_nginx(args.upstream, directory, port=args.port) as proxy:
        say(f"nginx (config {directory / 'voice.conf'}) listens on {proxy.wss_url} → {args.upstream}")
        say(f"CA file: {proxy.ca_file}")
        if args.wait_health and not await _health(proxy, args.wait_health, say):
            say(f"error: {proxy.https_url}health did not answer 200 within {args.wait_health:g} s")
            return 1
        if args.command:
            command = args.command[1:] if args.command[0] == "--" else args.command
            env = {**os.environ, "VOICE_PROXY_URL": proxy.wss_url, "VOICE_PROXY_CA": str(proxy.ca_file)}
            child = await asyncio.create_subprocess_exec(*command, env=env)
            return await child.wait()
        say("Ctrl-C stops it")
        await asyncio.Event().wait()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m voice.bench.nginx_proxy",
        description="Run Debian's nginx with the shipped site file (docs/deploy) and a throw-away self-signed "
        "certificate on 127.0.0.1, in front of a running `voice serve`, for `voice bench e2e --url wss://…`. "
        "With a command after --, run it once nginx is up (it gets $VOICE_PROXY_URL and $VOICE_PROXY_CA) and "
        "stop nginx when it ends.",
    )
    p.add_argument("--upstream", default="127.0.0.1:8765", help="where voice serve listens (default %(default)s)")
    p.add_argument("--port", type=int, default=8443, help="port nginx listens on, 127.0.0.1 (default %(default)s)")
    p.add_argument(
        "--dir", type=Path, default=None, help="where the config, cert.pem and logs go (default: a temp dir)"
    )
    p.add_argument(
        "--wait-health",
        type=float,
        default=300.0,
        metavar="S",
        help="wait up to S seconds for /health through the proxy to answer 200 (default %(default)s; 0: don't)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ARGS: run this, then stop nginx")
    args = p.parse_args(argv)
    try:
        return asyncio.run(_serve(args))
    except ProxyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
