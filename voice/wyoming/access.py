"""Who may use the Wyoming server. Wyoming has no authentication, no TLS and no Origin: the listen address
and the client's IP address are the only controls there are.

On loopback (the default) every local process may connect (or only ``allowed_clients``, when listed).
Beyond loopback the server refuses to start without an explicit ``allowed_clients`` list, and every
connection from an address not in it is answered with an ``error`` and closed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from voice.config.config import ConfigError, WyomingConfig
from voice.serve.security import is_loopback

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(entries: Sequence[str]) -> tuple[Network, ...]:
    """The allowlist as networks ("192.168.1.20" is a /32); entries were checked by the config."""
    return tuple(ipaddress.ip_network(e, strict=False) for e in entries)


def check_bind(config: WyomingConfig) -> None:
    """Refuse to listen beyond loopback without an allowlist of client addresses."""
    if is_loopback(config.host) or config.allowed_clients:
        return
    what = "all interfaces" if config.host in ("", "0.0.0.0", "::") else config.host
    raise ConfigError(
        f"refusing to listen on {what} ({config.host!r}) for Wyoming without an allowlist: Wyoming has no "
        "authentication, so anyone who can reach this port could use the assistant. Either listen on "
        "127.0.0.1 (the default; fine when Home Assistant runs on this machine), or name the machines "
        'allowed to connect: [wyoming] allowed_clients = ["<Home Assistant\'s IP address>"] in your config, '
        "or --allow ADDRESS (see docs/home-assistant.md)"
    )


def client_allowed(address: str, allowed: Sequence[Network]) -> bool:
    """Whether a client at ``address`` may connect; an empty allowlist allows everyone (loopback only:
    :func:`check_bind` refuses an empty list anywhere else). An IPv4 client seen on an IPv6 socket
    (``::ffff:192.168.1.20``) is matched as IPv4."""
    if not allowed:
        return True
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip.version == net.version and ip in net for net in allowed)
