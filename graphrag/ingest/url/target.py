"""Where a URL import may connect: the host resolved once, within the fetch's deadline, and
every address of the answer judged public (or on `ingest.url_allowed_private`)."""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import httpx

from graphrag.errors import InvalidInputError, UrlFetchTimeoutError, UrlTargetRefusedError
from graphrag.settings import IngestSettings, NetworkPort, parse_network_port

__all__ = ["Resolver", "UrlTarget", "check_url_target", "system_resolver"]

_ALLOWED_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses the host stands for (an IP literal stands for itself).
Resolver = Callable[[str, int], list[str]]

# NAT64's well-known prefix (RFC 6052): a DNS64 network answers every IPv4-only host with one of
# these, so it is judged as the IPv4 address in its last 32 bits rather than refused.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_IPV4_BITS = 0xFFFFFFFF
# IPv6 blocks that carry an IPv4 address somewhere inside, and that the standard library may
# count as global. They are refused whole: each is deprecated or local, and where the IPv4 part
# sits (or how it is scrambled) is not something to second-guess.
_IPV4_CARRIERS = tuple(
    ipaddress.IPv6Network(block)
    for block in (
        "::/96",  # IPv4-compatible, ::a.b.c.d (RFC 4291, deprecated)
        "::ffff:0:0:0/96",  # IPv4-translated, ::ffff:0:a.b.c.d (SIIT, RFC 2765, obsolete)
        "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215): the IPv4 part's place is a local choice
        "2002::/16",  # 6to4 (RFC 7526, deprecated): a relay sends the packets to the IPv4 host
        "2001::/32",  # Teredo: the server's and client's IPv4 addresses, the latter obfuscated
    )
)

# Blocks that no public site lives in although some Python releases count them as global (the
# standard library's tables lag the IANA registries): refused like private ones.
_NOT_PUBLIC = tuple(
    ipaddress.ip_network(block)
    for block in (
        "fec0::/10",  # IPv6 site-local (RFC 3879, deprecated): routed inside a site only
        "192.0.0.0/24",  # IETF protocol assignments (RFC 6890): the IPv4 dummy address 192.0.0.8,
        # DS-Lite and NAT64 discovery; its two anycast addresses serve PCP and TURN, never a page
    )
)


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses from the system resolver (getaddrinfo), in its order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass(frozen=True)
class UrlTarget:
    """One hop's checked destination: the host as named in the URL and where to connect."""

    host: str  # ASCII (IDNA) form, without brackets: what Host, SNI and the certificate name
    port: int
    addresses: tuple[str, ...]  # every one checked; the connection uses these and no other


def _judged_as(address: IpAddress) -> IpAddress:
    """The address whose reach decides: an IPv4 address written as IPv6 (::ffff:10.0.0.1,
    64:ff9b::10.0.0.1) is judged as the IPv4 address it stands for."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & _IPV4_BITS)
    return address


def _is_public(address: IpAddress) -> bool:
    return (
        address.is_global
        and not address.is_multicast
        and not any(address in block for block in _IPV4_CARRIERS)
        and not any(address in block for block in _NOT_PUBLIC)
    )


def _is_blocked(address: IpAddress, port: int, allowed: Iterable[NetworkPort]) -> bool:
    judged = _judged_as(address)
    if _is_public(judged):
        return False
    return not any(
        judged in network and (only_port is None or only_port == port)
        for network, only_port in allowed
    )


@cache
def _lookup_pool(threads: int) -> ThreadPoolExecutor:
    """The threads every lookup of this process runs on. getaddrinfo has no timeout of its own:
    a fetch waits for its answer only until its deadline, and a lookup that hangs longer keeps
    one of these threads until the system resolver gives up, not the fetch's."""
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="url-dns")


def _resolve(
    resolver: Resolver, host: str, port: int, ingest: IngestSettings, deadline: float
) -> list[str]:
    lookup = _lookup_pool(ingest.url_dns_threads).submit(resolver, host, port)
    try:
        return lookup.result(timeout=max(0.0, deadline - time.monotonic()))
    except TimeoutError as exc:
        lookup.cancel()  # still queued behind hung lookups: it need not run at all
        raise UrlFetchTimeoutError(
            "the URL's host did not resolve in time", host=host, limit_s=ingest.url_total_timeout_s
        ) from exc


def check_url_target(
    url: str,
    ingest: IngestSettings,
    resolver: Resolver = system_resolver,
    deadline: float | None = None,
) -> UrlTarget:
    """Resolve `url`'s host once, by `deadline` (monotonic; default: the fetch's total timeout
    from now), and check every address; refuse non-http(s) URLs, and hosts with any private,
    loopback, link-local or reserved address not on the allowed list."""
    try:
        parts = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InvalidInputError("the URL is not valid", url=url) from exc
    if parts.scheme not in _ALLOWED_SCHEMES:
        raise InvalidInputError("only http and https URLs can be imported", scheme=parts.scheme)
    host = parts.raw_host.decode("ascii")
    if not host:
        raise InvalidInputError("the URL has no host")
    port = parts.port or _DEFAULT_PORTS[parts.scheme]
    if deadline is None:
        deadline = time.monotonic() + ingest.url_total_timeout_s
    try:
        answers = _resolve(resolver, host, port, ingest, deadline)
        addresses = [ipaddress.ip_address(answer) for answer in answers]
    except (OSError, UnicodeError, ValueError) as exc:
        raise InvalidInputError("the URL's host does not resolve", host=host) from exc
    if not addresses:
        raise InvalidInputError("the URL's host does not resolve", host=host)
    if not ingest.url_allow_private:
        allowed = [parse_network_port(entry) for entry in ingest.url_allowed_private]
        if any(_is_blocked(address, port, allowed) for address in addresses):
            raise UrlTargetRefusedError(
                "the URL points to a private, loopback or reserved address", host=host
            )
    return UrlTarget(host=host, port=port, addresses=tuple(str(a) for a in addresses))
