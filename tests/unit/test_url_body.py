"""A URL's body over real loopback HTTP, whatever content coding the site sends: one gzip or
deflate layer is undone within the size cap, a bomb stops at the cap, stacked and unknown
codings are refused, and the raw bytes count against the cap too."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from graphrag.errors import FileTooLargeError, UrlEncodingRefusedError, UrlFetchError
from graphrag.ingest.url.fetch import fetch_url
from graphrag.settings import IngestSettings, get_settings
from tests.support.fake_site import FakeSite, gzip_bomb, page

pytestmark = pytest.mark.unit

CAP = 256 * 1024
PAGE = b"The Moreau archive holds four hundred letters. " * 200
BOMB_SIZE = 64 * 1024 * 1024  # 256 times the cap once inflated


@pytest.fixture()
def site() -> Iterator[FakeSite]:
    with FakeSite({}) as served:
        yield served


def _fetch(site: FakeSite, path: str) -> bytes:
    ingest: IngestSettings = get_settings().ingest.model_copy(
        update={"url_allowed_private": [f"127.0.0.1:{site.port}"]}
    )
    return fetch_url(f"{site.url}{path}", ingest, CAP).data


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("identity", bytes),
        ("GZIP, identity", gzip.compress),  # names are case-blind; identity is no coding
    ],
)
def test_one_coding_layer_is_undone(
    site: FakeSite, coding: str, encode: Callable[[bytes], bytes]
) -> None:
    site.routes["/page"] = page(encode(PAGE), content_encoding=coding)
    assert _fetch(site, "/page") == PAGE


def test_the_request_asks_for_no_coding(site: FakeSite) -> None:
    asked: list[str | None] = []

    def record(request: BaseHTTPRequestHandler) -> None:
        asked.append(request.headers.get("Accept-Encoding"))
        page(PAGE)(request)

    site.routes["/page"] = record
    assert _fetch(site, "/page") == PAGE
    assert asked == ["identity"]


def test_gzip_members_are_all_read(site: FakeSite) -> None:
    site.routes["/page"] = page(
        gzip.compress(b"first ") + gzip.compress(b"second"), "text/plain", "gzip"
    )
    assert _fetch(site, "/page") == b"first second"


def test_a_gzip_bomb_stops_at_the_cap(site: FakeSite) -> None:
    bomb = gzip_bomb(BOMB_SIZE)
    assert len(bomb) < CAP // 2
    site.routes["/bomb"] = page(bomb, content_encoding="gzip")
    with pytest.raises(FileTooLargeError) as refused:
        _fetch(site, "/bomb")
    assert refused.value.details == {"limit": CAP}


@pytest.mark.parametrize("coding", ["gzip, gzip", "gzip,deflate", "deflate, gzip"])
def test_stacked_codings_are_refused(site: FakeSite, coding: str) -> None:
    site.routes["/stacked"] = page(gzip.compress(gzip_bomb(8 * CAP)), content_encoding=coding)
    with pytest.raises(UrlEncodingRefusedError, match="more than once"):
        _fetch(site, "/stacked")


@pytest.mark.parametrize("coding", ["br", "compress", "zstd", "x-unknown"])
def test_unknown_codings_are_refused(site: FakeSite, coding: str) -> None:
    site.routes["/coded"] = page(PAGE, content_encoding=coding)
    with pytest.raises(UrlEncodingRefusedError, match=coding):
        _fetch(site, "/coded")


def test_the_raw_bytes_count_against_the_cap(site: FakeSite) -> None:
    """A short deflate stream trailed by more bytes than the cap: what follows the stream is
    not content, yet every byte received is counted."""
    site.routes["/trailed"] = page(zlib.compress(PAGE) + bytes(2 * CAP), content_encoding="deflate")
    with pytest.raises(FileTooLargeError):
        _fetch(site, "/trailed")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (gzip.compress(PAGE)[:-64], "cut short"),
        (b"not gzip at all", "corrupt"),
        (gzip.compress(PAGE) + b"junk after the member", "corrupt"),
    ],
    ids=["truncated", "garbage", "trailing-junk"],
)
def test_broken_gzip_is_a_fetch_error(site: FakeSite, body: bytes, reason: str) -> None:
    site.routes["/broken"] = page(body, content_encoding="gzip")
    with pytest.raises(UrlFetchError, match=reason):
        _fetch(site, "/broken")
