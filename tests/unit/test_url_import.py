"""URL import over real loopback HTTP servers, with an injected resolver: every address of a
host is checked, the connection goes to a checked address and to no second DNS answer
(rebinding), redirects are checked the same way, and the total deadline and the byte cap hold."""

from __future__ import annotations

import datetime
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from graphrag.errors import (
    FileTooLargeError,
    InvalidInputError,
    UrlFetchError,
    UrlFetchTimeoutError,
    UrlTargetRefusedError,
)
from graphrag.ingest.url.fetch import check_url_target, fetch_url
from graphrag.settings import IngestSettings, get_settings, parse_network_port
from tests.support.fake_site import FakeSite, endless, page, redirect, trickle

CAP = 256 * 1024
PAGE = b"The Moreau archive holds four hundred letters."


def _ingest(**changes: Any) -> IngestSettings:
    return get_settings().ingest.model_copy(update=changes)


class ScriptedResolver:
    """Answers each lookup of a host with the next of its answers (the last one repeats)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        given = self.answers[host]
        return given[min(self.calls.count(host), len(given)) - 1]


@pytest.fixture()
def site() -> Iterator[FakeSite]:
    with FakeSite({"/doc.txt": page(PAGE)}) as served:
        yield served


@pytest.mark.parametrize(
    "answer",
    [
        ["93.184.216.34", "127.0.0.1"],  # one private address among public ones is enough
        ["10.0.0.5"],
        ["169.254.169.254"],
        ["::1"],
        ["::ffff:127.0.0.1"],  # IPv4 loopback written as IPv6
        ["fd00::1"],
        ["0.0.0.0"],
        ["224.0.0.1"],
    ],
)
def test_any_non_public_address_of_the_host_is_refused(answer: list[str]) -> None:
    resolver = ScriptedResolver({"site.test": [answer]})
    with pytest.raises(UrlTargetRefusedError):
        check_url_target("http://site.test/doc", _ingest(), resolver)


def test_public_addresses_pass_and_are_the_ones_pinned() -> None:
    resolver = ScriptedResolver({"site.test": [["93.184.216.34", "2606:2800:220:1::1"]]})
    target = check_url_target("https://site.test/doc", _ingest(), resolver)
    assert (target.host, target.port) == ("site.test", 443)
    assert target.addresses == ("93.184.216.34", "2606:2800:220:1::1")


def test_the_allowed_list_opens_one_port_of_one_address() -> None:
    ingest = _ingest(url_allowed_private=["127.0.0.1:8080", "10.1.0.0/16"])
    loopback = ScriptedResolver({"in.test": [["127.0.0.1"]], "net.test": [["10.1.2.3"]]})
    assert check_url_target("http://in.test:8080/", ingest, loopback).addresses == ("127.0.0.1",)
    assert check_url_target("http://net.test:9/", ingest, loopback).addresses == ("10.1.2.3",)
    with pytest.raises(UrlTargetRefusedError):
        check_url_target("http://in.test:8081/", ingest, loopback)


def test_allowed_list_entries_are_parsed_and_checked() -> None:
    assert parse_network_port("[::1]:443")[1] == 443
    assert parse_network_port("fd00::/8")[1] is None
    for bad in ("not-an-ip", "10.0.0.1:0", "[::1]x"):
        with pytest.raises(ValueError):
            parse_network_port(bad)


def test_schemes_and_unresolvable_hosts_are_bad_input() -> None:
    def failing(host: str, port: int) -> list[str]:
        raise OSError("no such host")

    with pytest.raises(InvalidInputError):
        check_url_target("ftp://site.test/a", _ingest(), failing)
    with pytest.raises(InvalidInputError):
        check_url_target("http://site.test/a", _ingest(), failing)


def test_rebinding_host_is_fetched_from_the_address_that_was_checked(site: FakeSite) -> None:
    # The first answer is the allowed site; every later one would be another loopback server.
    with FakeSite(
        {"/doc.txt": page(b"internal secret")}, host="127.0.0.2", port=site.port
    ) as other:
        resolver = ScriptedResolver({"rebind.test": [["127.0.0.1"], ["127.0.0.2"]]})
        ingest = _ingest(url_allowed_private=[f"127.0.0.1:{site.port}"])

        doc = fetch_url(f"http://rebind.test:{site.port}/doc.txt", ingest, CAP, resolver)

        assert doc.data == PAGE
        assert resolver.calls == ["rebind.test"]  # resolved once, never again to connect
        assert site.hits == [("/doc.txt", f"rebind.test:{site.port}")]  # the Host is the name
        assert other.hits == []


def test_a_redirect_to_a_blocked_address_is_refused_unfollowed(site: FakeSite) -> None:
    with FakeSite({"/": page(b"internal secret")}) as internal:
        site.routes["/moved"] = redirect(f"http://127.0.0.1:{internal.port}/")
        site.routes["/metadata"] = redirect("http://169.254.169.254/latest/meta-data/")
        ingest = _ingest(url_allowed_private=[f"127.0.0.1:{site.port}"])
        for path in ("/moved", "/metadata"):
            with pytest.raises(UrlTargetRefusedError):
                fetch_url(f"{site.url}{path}", ingest, CAP)
        assert internal.hits == []


def test_redirects_are_followed_up_to_the_cap(site: FakeSite) -> None:
    site.routes["/hop"] = redirect("/doc.txt")
    site.routes["/loop"] = redirect("/loop")
    ingest = _ingest(url_allowed_private=[f"127.0.0.1:{site.port}"], url_max_redirects=3)
    assert fetch_url(f"{site.url}/hop", ingest, CAP).source_url == f"{site.url}/doc.txt"
    site.hits.clear()
    with pytest.raises(UrlFetchError, match="too many redirects"):
        fetch_url(f"{site.url}/loop", ingest, CAP)
    assert len(site.hits) == 4  # the URL and its three allowed redirects


def test_a_trickling_site_meets_the_total_deadline(site: FakeSite) -> None:
    site.routes["/slow"] = trickle(interval_s=0.05, duration_s=60)
    ingest = _ingest(
        url_allowed_private=[f"127.0.0.1:{site.port}"], url_timeout_s=30, url_total_timeout_s=1.0
    )
    started = time.monotonic()
    with pytest.raises(UrlFetchTimeoutError):
        fetch_url(f"{site.url}/slow", ingest, CAP)
    assert time.monotonic() - started < 5  # not the 60 s of the body, nor a 30 s read timeout


@pytest.mark.parametrize("declared", [None, 10 * CAP], ids=["streamed", "declared"])
def test_an_oversized_body_is_cut_at_the_cap(site: FakeSite, declared: int | None) -> None:
    site.routes["/big"] = endless(declared)
    ingest = _ingest(url_allowed_private=[f"127.0.0.1:{site.port}"])
    with pytest.raises(FileTooLargeError):
        fetch_url(f"{site.url}/big", ingest, CAP)


def _self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_tls_to_a_pinned_address_names_the_host_and_verifies_it(tmp_path: Path) -> None:
    """The connection goes to the checked IP, yet the TLS handshake sends the host name (SNI)
    and the certificate is verified for it: a self-signed one is refused."""
    cert, key = _self_signed(tmp_path, "rebind.test")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def serve() -> None:
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True):
                    pass
            except OSError:
                conn.close()  # the client refused the certificate

        server = threading.Thread(target=serve, daemon=True)
        server.start()
        resolver = ScriptedResolver({"rebind.test": [["127.0.0.1"]]})
        ingest = _ingest(url_allowed_private=[f"127.0.0.1:{port}"], url_total_timeout_s=10)
        with pytest.raises(UrlFetchError, match="CERTIFICATE_VERIFY_FAILED"):
            fetch_url(f"https://rebind.test:{port}/doc", ingest, CAP, resolver)
        server.join(timeout=10)
    assert names == ["rebind.test"]
