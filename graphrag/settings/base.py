"""What every settings section shares: the frozen base, the project root, address blocks."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from pydantic import BaseModel

__all__ = ["CONFIG_ENV", "NetworkPort", "Section", "parse_network_port", "project_root"]

# The variable naming another YAML file than config/settings.yaml.
CONFIG_ENV = "GRAPHRAG_CONFIG"


class Section(BaseModel):
    """A section of the settings: frozen, and an unknown key is an error."""

    model_config = {"extra": "forbid", "frozen": True}


def project_root() -> Path:
    """The checkout's root: relative paths in the settings resolve against it."""
    return Path(__file__).resolve().parents[2]


# An address block and, optionally, the one port allowed on it.
NetworkPort = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int | None]
_MAX_PORT = 65535


def parse_network_port(entry: str) -> NetworkPort:
    """`10.0.0.0/8`, `127.0.0.1:8080`, `[::1]:8080` or `fd00::/8` as (network, port or None)."""
    host, port = entry.strip(), ""
    if host.startswith("["):
        host, _, rest = host[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise ValueError(f"not an address[:port]: {entry!r}")
        port = rest[1:]
    elif host.count(":") == 1:
        host, port = host.split(":")
    network = ipaddress.ip_network(host, strict=False)
    if not port:
        return network, None
    number = int(port)
    if not 0 < number <= _MAX_PORT:
        raise ValueError(f"not a port: {port!r}")
    return network, number
