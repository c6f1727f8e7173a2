"""URL import limits through the real API over real HTTP: content codings (a gzip page is
stored decoded, a bomb stops at the size cap, stacked codings are refused) and the caps on
fetches at once, per API key and per process, which answer 429 at once while the API, its
web server cut to as few threads as one key may fetch at once, keeps answering."""

from __future__ import annotations

import gzip
import hashlib
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import ASGIApp, Receive, Scope, Send

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.api_helpers import create_kb
from tests.support.auth_helpers import bearer, make_key
from tests.support.fake_site import FakeSite, HeldPage, gzip_bomb, page
from tests.support.http_server import ThreadedServer

pytestmark = pytest.mark.integration

PER_KEY = 2
TOTAL = 3
SERVER_THREADS = PER_KEY  # were a waiting import to hold one, the others would find none free
CAP_MB = 1
TOTAL_DEADLINE_S = 30.0
WAIT_S = 20.0  # a held page's wait, and the clients' timeout: a hung API fails the test
BOMB_SIZE = 64 * 1024 * 1024


class FewServerThreads:
    """The app, with the web server's thread pool (sync routes and dependencies) cut to
    `tokens` threads in the server's event loop."""

    def __init__(self, app: ASGIApp, tokens: int) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            anyio.to_thread.current_default_thread_limiter().total_tokens = self.tokens
        await self.app(scope, receive, send)


@dataclass
class Api:
    client: httpx.Client  # the admin key
    other: httpx.Client  # a second key of the same tenant
    kb: dict[str, Any]

    def import_url(self, url: str, client: httpx.Client | None = None) -> httpx.Response:
        path = f"/api/v1/knowledge-bases/{self.kb['id']}/knowledge/url"
        return (client or self.client).post(path, json={"url": url})


@pytest.fixture(scope="module")
def site() -> Iterator[FakeSite]:
    with FakeSite({}) as served:
        yield served


@pytest.fixture(scope="module")
def api(
    settings: Settings,
    site: FakeSite,
    auth_headers: dict[str, str],
    session_factory: sessionmaker[Session],
) -> Iterator[Api]:
    from api.app import create_app

    ingest = settings.ingest.model_copy(
        update={
            "url_allowed_private": [f"127.0.0.1:{site.port}"],
            "url_total_timeout_s": TOTAL_DEADLINE_S,
            "url_max_concurrent_per_key": PER_KEY,
            "url_max_concurrent": TOTAL,
        }
    )
    outbox = settings.outbox.model_copy(update={"relay_interval_s": 3600.0})
    app = create_app(
        settings.model_copy(update={"ingest": ingest, "outbox": outbox, "max_file_size_mb": CAP_MB})
    )
    second = make_key(
        session_factory, settings, settings.api.default_tenant, [Capability.READ, Capability.WRITE]
    )
    with (
        ThreadedServer(FewServerThreads(app, SERVER_THREADS)) as url,
        httpx.Client(base_url=url, timeout=WAIT_S, headers=auth_headers) as client,
        httpx.Client(base_url=url, timeout=WAIT_S, headers=bearer(second.key)) as other,
    ):
        yield Api(client, other, create_kb(client))


def _error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


def _still_answers(api: Api) -> None:
    """Another request, after a refusal or while imports wait: the API answers it."""
    listed = api.client.get(f"/api/v1/knowledge-bases/{api.kb['id']}/knowledge")
    assert listed.status_code == 200, listed.text


def test_a_gzip_page_is_stored_decoded(api: Api, site: FakeSite) -> None:
    text = f"The Moreau archive holds {uuid.uuid4()} letters.".encode() * 50
    site.routes["/zipped.txt"] = page(gzip.compress(text), content_encoding="gzip")
    response = api.import_url(f"{site.url}/zipped.txt")
    assert response.status_code == 202, response.text
    assert response.json()["file_size"] == len(text)
    assert response.json()["sha256"] == hashlib.sha256(text).hexdigest()


def test_a_gzip_bomb_stops_at_the_size_cap(api: Api, site: FakeSite) -> None:
    site.routes["/bomb.txt"] = page(gzip_bomb(BOMB_SIZE), content_encoding="gzip")
    response = api.import_url(f"{site.url}/bomb.txt")
    assert _error_code(response, 413) == "file_too_large"
    assert response.json()["error"]["details"] == {"limit": CAP_MB * 1024 * 1024}
    _still_answers(api)


def test_a_stacked_gzip_bomb_is_refused(api: Api, site: FakeSite) -> None:
    site.routes["/stacked.txt"] = page(
        gzip.compress(gzip_bomb(BOMB_SIZE)), content_encoding="gzip, gzip"
    )
    response = api.import_url(f"{site.url}/stacked.txt")
    assert _error_code(response, 422) == "url_encoding_refused"
    assert response.json()["error"]["details"] == {"content_encoding": "gzip, gzip"}
    _still_answers(api)


def _busy(response: httpx.Response) -> str:
    assert _error_code(response, 429) == "url_import_busy"
    assert 1 <= int(response.headers["Retry-After"]) <= TOTAL_DEADLINE_S
    scope: str = response.json()["error"]["details"]["scope"]
    return scope


def test_imports_over_the_caps_are_refused_while_the_api_answers(api: Api, site: FakeSite) -> None:
    """One key fills its cap with slow imports: its next import is refused at once, another
    key still imports; once the process cap is full too, that key is refused as well. All the
    while the API answers other requests, on a web server with no more threads than one key's
    slow imports."""
    held = HeldPage(f"slow page {uuid.uuid4()}".encode(), WAIT_S)
    site.routes["/slow.txt"] = held
    site.routes["/quick.txt"] = page(f"quick page {uuid.uuid4()}".encode())
    slow_urls = [f"{site.url}/slow.txt?n={n}" for n in range(TOTAL)]
    with ThreadPoolExecutor(TOTAL) as clients:
        slow: list[Future[httpx.Response]] = []
        try:
            slow += [clients.submit(api.import_url, url) for url in slow_urls[:PER_KEY]]
            held.wait_arrivals(PER_KEY)

            assert _busy(api.import_url(f"{site.url}/quick.txt")) == "api_key"
            quick = api.import_url(f"{site.url}/quick.txt", api.other)
            assert quick.status_code == 202, quick.text

            slow.append(clients.submit(api.import_url, slow_urls[PER_KEY], api.other))
            held.wait_arrivals(1)
            assert _busy(api.import_url(f"{site.url}/quick.txt", api.other)) == "process"

            _still_answers(api)
            assert api.client.get("/health").status_code == 200
        finally:
            held.release.set()
        assert [f.result().status_code for f in slow] == [202] * TOTAL, [
            f.result().text for f in slow
        ]
    site.routes["/after.txt"] = page(f"after page {uuid.uuid4()}".encode())
    assert api.import_url(f"{site.url}/after.txt").status_code == 202  # the slots were freed
