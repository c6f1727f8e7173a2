"""Fetching a document from a URL without letting the URL reach inside the machine's network.

Each hop (the URL, then every redirect target) is resolved once; every address of the answer
must be public (or on the `ingest.url_allowed_private` list), and the connection goes to one of
those very addresses: a second DNS answer (rebinding) is never asked for. The request still
names the host (Host header, TLS SNI and certificate check). The whole fetch, redirects
included, has one deadline, enforced on every socket operation, and the body is cut at the size
cap while it streams. Nothing here touches the database: the caller stores the result after.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urljoin

import certifi
import httpcore
import httpx

from graphrag.db.enums import KnowledgeSource
from graphrag.errors import (
    EmptyFileError,
    FileTooLargeError,
    InvalidInputError,
    UrlFetchError,
    UrlFetchTimeoutError,
    UrlTargetRefusedError,
)
from graphrag.ingest.documents import NewDocument
from graphrag.settings import IngestSettings, NetworkPort, parse_network_port

__all__ = ["Resolver", "UrlTarget", "check_url_target", "fetch_url", "system_resolver"]

_ALLOWED_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_FALLBACK_NAME = "page.html"

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses the host stands for (an IP literal stands for itself).
Resolver = Callable[[str, int], list[str]]


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


def _is_blocked(address: IpAddress, port: int, allowed: Iterable[NetworkPort]) -> bool:
    # An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_global and not address.is_multicast:
        return False
    return not any(
        address in network and (only_port is None or only_port == port)
        for network, only_port in allowed
    )


def check_url_target(
    url: str, ingest: IngestSettings, resolver: Resolver = system_resolver
) -> UrlTarget:
    """Resolve `url`'s host once and check every address; refuse non-http(s) URLs, and hosts
    with any private, loopback, link-local or reserved address not on the allowed list."""
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
    try:
        answers = resolver(host, port)
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


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation ends by the fetch's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def _left(self, timeout: float | None) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the fetch's total deadline passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        # server_hostname is the URL's host: SNI and the certificate check are for the name.
        tls = self._inner.start_tls(ssl_context, server_hostname, self._left(timeout))
        return _DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _PinnedBackend(httpcore.NetworkBackend):
    """Opens connections to the checked addresses of one target, and to nothing else."""

    def __init__(self, target: UrlTarget, deadline: float) -> None:
        self._target = target
        self._deadline = deadline
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        if (host, port) != (self._target.host, self._target.port):
            raise httpcore.ConnectError(f"{host}:{port} is not the checked target")
        failure: Exception | None = None
        for address in self._target.addresses:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ConnectTimeout("the fetch's total deadline passed")
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    timeout=left if timeout is None else min(timeout, left),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        raise failure or httpcore.ConnectError("no address to connect to")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("URL import never uses Unix sockets")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool that can only reach one checked target."""

    def __init__(self, target: UrlTarget, deadline: float) -> None:
        super().__init__(trust_env=False)  # a proxy would resolve the host itself
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl.create_default_context(cafile=certifi.where()),
            max_connections=1,
            network_backend=_PinnedBackend(target, deadline),
        )


def _file_name(url: str) -> str:
    name = PurePosixPath(unquote(httpx.URL(url).path)).name
    return name or _FALLBACK_NAME


def fetch_url(
    url: str, ingest: IngestSettings, max_bytes: int, resolver: Resolver = system_resolver
) -> NewDocument:
    """Download `url` within `ingest.url_total_timeout_s` and `max_bytes`, following at most
    `ingest.url_max_redirects` redirects, each checked and pinned like the first URL."""
    deadline = time.monotonic() + ingest.url_total_timeout_s
    for _ in range(ingest.url_max_redirects + 1):
        target = check_url_target(url, ingest, resolver)
        with httpx.Client(
            transport=_PinnedTransport(target, deadline),
            timeout=ingest.url_timeout_s,
            follow_redirects=False,
            trust_env=False,
        ) as client:
            try:
                with client.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise UrlFetchError(
                            f"the URL answered HTTP {response.status_code}", url=url
                        )
                    data = _read_capped(response, max_bytes)
                    media_type = response.headers.get("content-type", "").split(";")[0].strip()
            except httpx.TimeoutException as exc:
                raise UrlFetchTimeoutError(
                    "the URL did not answer in time", url=url, limit_s=ingest.url_total_timeout_s
                ) from exc
            except httpx.HTTPError as exc:
                raise UrlFetchError(f"the URL could not be fetched: {exc}", url=url) from exc
        if not data:
            raise EmptyFileError("the URL returned no content", url=url)
        return NewDocument(
            data=data,
            file_name=_file_name(url),
            media_type=media_type or None,
            source=KnowledgeSource.URL,
            source_url=url,
        )
    raise UrlFetchError("too many redirects", limit=ingest.url_max_redirects)


def _too_large(cap: int) -> FileTooLargeError:
    return FileTooLargeError(f"the document exceeds the {cap // (1024 * 1024)} MB limit", limit=cap)


def _read_capped(response: httpx.Response, cap: int) -> bytes:
    """The body, refused as soon as it is known (declared or counted) to exceed `cap` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(cap)
    parts: list[bytes] = []
    size = 0
    for block in response.iter_bytes():
        size += len(block)
        if size > cap:
            raise _too_large(cap)
        parts.append(block)
    return b"".join(parts)
