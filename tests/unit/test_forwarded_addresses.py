"""Which client address failed keys are counted by, and which proxies are believed: the
settings `graphrag serve` and the shipped compose file pass to uvicorn, and the bucket of an
address (IPv6 by its network)."""

from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from api.serving import server_options
from graphrag.auth.rate_limit import address_bucket
from graphrag.settings import Settings, project_root

pytestmark = pytest.mark.unit

COMPOSE_VAR = "API_FORWARDED_ALLOW_IPS"


@pytest.mark.parametrize(
    ("address", "bucket"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2::10", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::10", "2001:db8:1:3::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),  # an IPv4 client seen through a dual stack
        ("/run/graphrag.sock", "/run/graphrag.sock"),  # not an IP address: as it is
    ],
)
def test_an_address_is_counted_by_its_bucket(address: str, bucket: str) -> None:
    assert address_bucket(address, 64) == bucket


def test_the_ipv6_prefix_is_a_setting() -> None:
    assert address_bucket("2001:db8:1:2:3::1", 48) == "2001:db8:1::/48"
    assert address_bucket("2001:db8:1:2:3::1", 128) == "2001:db8:1:2:3::1/128"
    assert Settings().auth.failed_ipv6_prefix == 64


def test_serve_believes_forwarded_headers_only_from_listed_proxies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(COMPOSE_VAR, '["10.0.0.0/8", "fd00::1"]')
    assert server_options(Settings()) == {
        "proxy_headers": True,
        "forwarded_allow_ips": ["10.0.0.0/8", "fd00::1"],
    }
    monkeypatch.setenv(COMPOSE_VAR, "[]")
    assert server_options(Settings()) == {"proxy_headers": False}


def test_a_mistyped_proxy_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(COMPOSE_VAR, '["10.0.0.300"]')
    with pytest.raises(ValidationError, match="forwarded_allow_ips"):
        Settings()


def test_the_compose_api_believes_no_proxy_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    compose = yaml.safe_load((project_root() / "deploy" / "docker-compose.yml").read_text())
    value = compose["services"]["api"]["environment"][COMPOSE_VAR]
    name, _, default = value.removeprefix("${").removesuffix("}").partition(":-")
    assert name == COMPOSE_VAR
    monkeypatch.setenv(COMPOSE_VAR, default)
    assert server_options(Settings()) == {"proxy_headers": False}
    serve = compose["services"]["api"]["command"][-1]
    assert "graphrag serve" in serve  # which reads the setting (cli.main.serve)
