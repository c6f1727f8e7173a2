"""Where a URL import may connect: IPv6 forms that carry an IPv4 address are judged as that
address or refused whole, and the DNS lookup is awaited only until the fetch's deadline."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from graphrag.errors import UrlFetchTimeoutError, UrlTargetRefusedError
from graphrag.ingest.url.fetch import fetch_url
from graphrag.ingest.url.target import check_url_target
from graphrag.settings import IngestSettings, get_settings

pytestmark = pytest.mark.unit

CAP = 64 * 1024
DEADLINE_S = 0.5
# The explicit bound: a lookup that never answers ends the fetch about at its deadline, far
# below the blocked lookup's own wait.
BOUND_S = 5.0
BLOCKED_LOOKUP_S = 60.0


def _ingest(**changes: Any) -> IngestSettings:
    return get_settings().ingest.model_copy(update=changes)


def _answer(*addresses: str) -> Any:
    return lambda host, port: list(addresses)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
        "64:ff9b::a00:5",  # NAT64 of 10.0.0.5
        "64:ff9b:1::a00:5",  # local-use NAT64 prefix: refused whole
        "64:ff9b:1:5db8:d822::",  # ... even with a public IPv4 inside
        "::7f00:1",  # IPv4-compatible 127.0.0.1
        "::5db8:d822",  # IPv4-compatible 93.184.216.34: the deprecated block is refused whole
        "::ffff:0:7f00:1",  # IPv4-translated (SIIT) 127.0.0.1
        "::ffff:0:5db8:d822",  # IPv4-translated public address: refused whole
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:5db8:d822::1",  # 6to4 of a public address: refused whole
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "::ffff:a9fe:a9fe",  # IPv4-mapped 169.254.169.254
    ],
)
def test_ipv6_forms_carrying_ipv4_are_refused(address: str) -> None:
    with pytest.raises(UrlTargetRefusedError):
        check_url_target("http://site.test/doc", _ingest(), _answer(address))


@pytest.mark.parametrize(
    "address",
    [
        "fec0::1",  # IPv6 site-local
        "feff:ffff::1",  # the last of the site-local block
        "192.0.0.8",  # the IPv4 dummy address
        "192.0.0.9",  # PCP anycast: a protocol address, not a site
        "64:ff9b::c000:8",  # NAT64 of 192.0.0.8
        "::ffff:192.0.0.8",  # IPv4-mapped 192.0.0.8
    ],
)
def test_blocks_some_pythons_count_as_global_are_refused(address: str) -> None:
    with pytest.raises(UrlTargetRefusedError):
        check_url_target("http://site.test/doc", _ingest(), _answer(address))


def test_the_neighbours_of_the_refused_blocks_stay_public() -> None:
    for address in ("192.0.1.8", "2a00:1450::1"):
        target = check_url_target("http://site.test/doc", _ingest(), _answer(address))
        assert target.addresses == (address,)


def test_nat64_of_a_public_address_passes_and_is_the_address_pinned() -> None:
    target = check_url_target("http://site.test/doc", _ingest(), _answer("64:ff9b::5db8:d822"))
    assert target.addresses == ("64:ff9b::5db8:d822",)


def test_nat64_of_an_allowed_ipv4_block_is_allowed_like_the_ipv4_address() -> None:
    ingest = _ingest(url_allowed_private=["127.0.0.1:8080"])
    resolver = _answer("64:ff9b::7f00:1")
    assert check_url_target("http://in.test:8080/", ingest, resolver).port == 8080
    with pytest.raises(UrlTargetRefusedError):
        check_url_target("http://in.test:8081/", ingest, resolver)


def test_refused_carrier_blocks_open_through_the_allowed_list() -> None:
    ingest = _ingest(url_allowed_private=["2002::/16"])
    target = check_url_target("http://site.test/", ingest, _answer("2002:5db8:d822::1"))
    assert target.addresses == ("2002:5db8:d822::1",)


class BlockedLookup:
    """A resolver that answers only when released (or after a minute), counting its calls."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        self.release.wait(BLOCKED_LOOKUP_S)
        return ["93.184.216.34"]


@pytest.fixture()
def blocked() -> Iterator[BlockedLookup]:
    lookup = BlockedLookup()
    try:
        yield lookup
    finally:
        lookup.release.set()  # the lookup threads are shared: free them for the next test


def test_a_lookup_longer_than_the_deadline_ends_the_fetch_in_time(blocked: BlockedLookup) -> None:
    ingest = _ingest(url_total_timeout_s=DEADLINE_S)
    started = time.monotonic()
    with pytest.raises(UrlFetchTimeoutError, match="did not resolve in time"):
        fetch_url("http://slow-dns.test/doc", ingest, CAP, blocked)
    assert time.monotonic() - started < BOUND_S
    assert blocked.calls == 1


def test_a_lookup_queued_behind_hung_ones_times_out_and_never_runs(
    blocked: BlockedLookup,
) -> None:
    """With every lookup thread held by a hung lookup, the next fetch still ends at its
    deadline, and its own lookup is dropped rather than left to run later."""
    ingest = _ingest(url_total_timeout_s=DEADLINE_S, url_dns_threads=1)
    with pytest.raises(UrlFetchTimeoutError):
        check_url_target("http://slow-dns.test/a", ingest, blocked)
    started = time.monotonic()
    with pytest.raises(UrlFetchTimeoutError):
        check_url_target("http://slow-dns.test/b", ingest, blocked)
    assert time.monotonic() - started < BOUND_S
    blocked.release.set()
    assert check_url_target("http://slow-dns.test/c", ingest, blocked).addresses == (
        "93.184.216.34",
    )
    assert blocked.calls == 2  # the first and the last; the queued one was cancelled
