"""URL import through the real API: only the allowed fetch target is reachable (a loopback
site allowed by `ingest.url_allowed_private`, for this test only), redirects to anything else
are refused unfollowed, a trickling site meets the total deadline, an endless body the cap,
and no database connection is held while sites are fetched."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from graphrag.settings import Settings
from tests.support.api_helpers import create_kb
from tests.support.fake_site import FakeSite, endless, page, redirect, trickle
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

TOTAL_DEADLINE_S = 2.0
POOL_SIZE = 2
CONCURRENT_IMPORTS = POOL_SIZE + 1  # more fetches at once than the pool has connections
BARRIER_WAIT_S = 20.0


@dataclass
class Sites:
    public: FakeSite  # the allowed fetch target
    internal: FakeSite  # another loopback service, never to be reached


@dataclass
class Api:
    client: httpx.Client
    app: FastAPI


@pytest.fixture(scope="module")
def sites() -> Iterator[Sites]:
    with FakeSite({}) as public, FakeSite({"/": page(b"internal secret")}) as internal:
        yield Sites(public, internal)


@pytest.fixture(scope="module")
def api(settings: Settings, sites: Sites, auth_headers: dict[str, str]) -> Iterator[Api]:
    """An API whose URL imports may reach the public site's port and nothing else local,
    with a small pool and a relay that only runs when a commit kicks it."""
    from api.app import create_app

    ingest = settings.ingest.model_copy(
        update={
            "url_allowed_private": [f"127.0.0.1:{sites.public.port}"],
            "url_total_timeout_s": TOTAL_DEADLINE_S,
            "url_max_concurrent_per_key": CONCURRENT_IMPORTS,
        }
    )
    database = settings.database.model_copy(update={"pool_size": POOL_SIZE, "pool_max_overflow": 0})
    outbox = settings.outbox.model_copy(update={"relay_interval_s": 3600.0})
    app = create_app(
        settings.model_copy(
            update={"ingest": ingest, "database": database, "outbox": outbox, "max_file_size_mb": 1}
        )
    )
    with (
        ThreadedServer(app) as url,
        httpx.Client(base_url=url, timeout=60.0, headers=auth_headers) as client,
    ):
        yield Api(client, app)


@pytest.fixture(scope="module")
def kb(api: Api) -> dict[str, Any]:
    return create_kb(api.client)


def _import(api: Api, kb: dict[str, Any], url: str) -> httpx.Response:
    return api.client.post(f"/api/v1/knowledge-bases/{kb['id']}/knowledge/url", json={"url": url})


def _error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


def test_the_allowed_site_is_imported(api: Api, kb: dict[str, Any], sites: Sites) -> None:
    text = f"The Moreau archive holds {uuid.uuid4()} letters.".encode()
    sites.public.routes["/doc.txt"] = page(text)
    sites.public.routes["/moved"] = redirect("/doc.txt")
    response = _import(api, kb, f"{sites.public.url}/moved")
    assert response.status_code == 202, response.text
    assert response.json()["source_url"] == f"{sites.public.url}/doc.txt"


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{internal}/",
        "http://localhost:{internal}/",
        "http://[::1]:{internal}/",
        "http://127.0.0.2:{public}/",  # the allowed port, on another loopback address
        "http://10.0.0.5/",
        "http://169.254.169.254/latest/meta-data/",
        # IPv6 forms that carry an IPv4 address inside
        "http://[64:ff9b::7f00:1]:{internal}/",  # NAT64 of 127.0.0.1
        "http://[2002:7f00:1::1]:{internal}/",  # 6to4 of 127.0.0.1
        "http://[::127.0.0.1]:{internal}/",  # IPv4-compatible
        "http://[::ffff:0:127.0.0.1]:{internal}/",  # IPv4-translated
        "http://[::ffff:127.0.0.1]:{internal}/",  # IPv4-mapped
    ],
)
def test_a_redirect_to_a_blocked_address_is_refused(
    api: Api, kb: dict[str, Any], sites: Sites, target: str
) -> None:
    location = target.format(internal=sites.internal.port, public=sites.public.port)
    sites.public.routes["/bounce"] = redirect(location)
    response = _import(api, kb, f"{sites.public.url}/bounce")
    assert _error_code(response, 422) == "url_target_refused"
    assert sites.internal.hits == []
    # Given directly, it is refused too; and the API goes on answering.
    direct = _import(api, kb, location)
    assert _error_code(direct, 422) == "url_target_refused"
    assert sites.internal.hits == []
    assert api.client.get(f"/api/v1/knowledge-bases/{kb['id']}").status_code == 200


def test_a_blocked_address_given_directly_is_refused(
    api: Api, kb: dict[str, Any], sites: Sites
) -> None:
    response = _import(api, kb, f"http://127.0.0.1:{sites.internal.port}/")
    assert _error_code(response, 422) == "url_target_refused"
    assert sites.internal.hits == []


def test_a_trickling_site_meets_the_total_deadline(
    api: Api, kb: dict[str, Any], sites: Sites
) -> None:
    sites.public.routes["/slow"] = trickle(interval_s=0.05, duration_s=120)
    response = _import(api, kb, f"{sites.public.url}/slow")
    assert _error_code(response, 422) == "url_fetch_timeout"
    assert response.elapsed.total_seconds() < TOTAL_DEADLINE_S + 10


def test_an_endless_body_is_cut_at_the_size_cap(api: Api, kb: dict[str, Any], sites: Sites) -> None:
    sites.public.routes["/endless"] = endless()
    response = _import(api, kb, f"{sites.public.url}/endless")
    assert _error_code(response, 413) == "file_too_large"


def test_no_database_connection_is_held_while_fetching(
    api: Api, kb: dict[str, Any], sites: Sites
) -> None:
    """More imports wait on their sites at once than the pool has connections: all of them
    reach the site together, and at that moment the pool lends no connection."""
    pool = api.app.state.graphrag.services.engine.pool
    checked_out: list[int] = []
    barrier = threading.Barrier(
        CONCURRENT_IMPORTS,
        action=lambda: checked_out.append(pool.checkedout()),
        timeout=BARRIER_WAIT_S,
    )

    def gate(request: BaseHTTPRequestHandler) -> None:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            request.send_error(503)  # not every import got to fetch at the same time
            return
        page(f"page fetched at once {uuid.uuid4()}".encode())(request)

    sites.public.routes["/gate"] = gate
    with ThreadPoolExecutor(CONCURRENT_IMPORTS) as pool_of_clients:
        responses = list(
            pool_of_clients.map(
                lambda _: _import(api, kb, f"{sites.public.url}/gate"), range(CONCURRENT_IMPORTS)
            )
        )

    assert [r.status_code for r in responses] == [202] * CONCURRENT_IMPORTS, [
        r.text for r in responses
    ]
    assert checked_out == [0]
