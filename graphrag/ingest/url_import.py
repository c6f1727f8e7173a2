"""Fetching a document from a URL without letting the URL reach inside the machine's network."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from graphrag.db.enums import KnowledgeSource
from graphrag.errors import EmptyFileError, FileTooLargeError, InvalidInputError
from graphrag.ingest.documents import NewDocument
from graphrag.settings import Settings

__all__ = ["check_url_target", "fetch_url"]

_ALLOWED_SCHEMES = frozenset({"http", "https"})
_FALLBACK_NAME = "page.html"


def check_url_target(url: str, allow_private: bool) -> None:
    """Refuse non-http(s) URLs and, unless allowed, hosts that resolve to non-public addresses."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in _ALLOWED_SCHEMES:
        raise InvalidInputError("only http and https URLs can be imported", scheme=parts.scheme)
    host = parts.hostname
    if not host:
        raise InvalidInputError("the URL has no host")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(host, parts.port or 0, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise InvalidInputError("the URL's host does not resolve", host=host) from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            raise InvalidInputError(
                "the URL points to a private, loopback or reserved address", host=host
            )


def _file_name(url: str) -> str:
    name = PurePosixPath(unquote(urlsplit(url).path)).name
    return name or _FALLBACK_NAME


def fetch_url(url: str, settings: Settings) -> NewDocument:
    """Download `url` (each redirect target checked again), within the upload size cap."""
    ingest = settings.ingest
    cap = settings.max_file_size_bytes
    with httpx.Client(timeout=ingest.url_timeout_s, follow_redirects=False) as client:
        for _ in range(ingest.url_max_redirects + 1):
            check_url_target(url, ingest.url_allow_private)
            try:
                with client.stream("GET", url) as response:
                    if response.is_redirect:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise InvalidInputError(
                            f"the URL answered HTTP {response.status_code}", url=url
                        )
                    data = _read_capped(response, cap)
                    media_type = response.headers.get("content-type", "").split(";")[0].strip()
            except httpx.HTTPError as exc:
                raise InvalidInputError(f"the URL could not be fetched: {exc}", url=url) from exc
            if not data:
                raise EmptyFileError("the URL returned no content", url=url)
            return NewDocument(
                data=data,
                file_name=_file_name(url),
                media_type=media_type or None,
                source=KnowledgeSource.URL,
                source_url=url,
            )
    raise InvalidInputError("too many redirects", limit=ingest.url_max_redirects)


def _read_capped(response: httpx.Response, cap: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    for block in response.iter_bytes():
        size += len(block)
        if size > cap:
            raise FileTooLargeError(f"the document exceeds the {cap // (1024 * 1024)} MB limit")
        parts.append(block)
    return b"".join(parts)
