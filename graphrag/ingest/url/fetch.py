"""Fetching a document from a URL without letting the URL reach inside the machine's network.

Each hop (the URL, then every redirect target) is resolved once; every address of the answer
must be public (or on the `ingest.url_allowed_private` list), and the connection goes to one of
those very addresses: a second DNS answer (rebinding) is never asked for. The request still
names the host (Host header, TLS SNI and certificate check). The whole fetch, redirects and
DNS lookups included, has one deadline, enforced on every socket operation, and the body is cut
at the size cap while it streams, counted both as received and as decoded (`url_body`).
Nothing here touches the database: the caller stores the result after.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urljoin

import certifi
import httpcore
import httpx

from graphrag.db.enums import KnowledgeSource
from graphrag.errors import EmptyFileError, UrlFetchError, UrlFetchTimeoutError
from graphrag.ingest.documents import NewDocument
from graphrag.ingest.url.body import read_body
from graphrag.ingest.url.target import Resolver, UrlTarget, check_url_target, system_resolver
from graphrag.settings import IngestSettings

__all__ = ["Resolver", "UrlTarget", "check_url_target", "fetch_url", "system_resolver"]

_FALLBACK_NAME = "page.html"
# Ask for the body as it is: a coding the site applies anyway is undone by `read_body`, within
# the cap, one layer at most.
_REQUEST_HEADERS = {"Accept-Encoding": "identity"}


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
        target = check_url_target(url, ingest, resolver, deadline)
        with httpx.Client(
            transport=_PinnedTransport(target, deadline),
            headers=_REQUEST_HEADERS,
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
                    data = read_body(response, max_bytes)
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
