"""The console's graph view in headless Chromium against the real API, PostgreSQL and Neo4j: an
entity named in two documents is one node, its details list both documents, and a document filter
shows that document's nodes only. The graphs are written through the real store (no worker)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import neo4j
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.support.auth_helpers import bearer, make_key
from tests.support.browser import Browser, chromium, sign_in
from tests.support.graph_data import GraphKb, graph_kb, one_entity_in_two_documents

pytestmark = pytest.mark.browser

NODES = "svg.graph g.node"


@pytest.fixture
def key(settings: Settings, session_factory: sessionmaker[Session]) -> str:
    """A key of a tenant of its own: the graph page lists only this test's base."""
    tenant = f"graph-view-{uuid.uuid4().hex[:8]}"
    return make_key(session_factory, settings, tenant, list(Capability), "graph view").key


@pytest.fixture
def kb(
    api_url: str,
    key: str,
    neo4j_driver: neo4j.Driver,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> Iterator[GraphKb]:
    with (
        httpx.Client(base_url=api_url, headers=bearer(key), timeout=30.0) as http,
        graph_kb(http, neo4j_driver, settings, session_factory) as made,
    ):
        yield made


@pytest.fixture
def browser(api_url: str, tmp_path: Path) -> Iterator[Browser]:
    with chromium(api_url, tmp_path / "screenshots") as b:
        yield b


def _search(b: Browser, entity: str) -> None:
    field = b.find("#graph-entity")
    field.clear()
    field.send_keys(entity)
    b.click("#graph-search button[type=submit]")


def _names(b: Browser) -> list[str]:
    return sorted(
        n.get_attribute("data-name") or "" for n in b.driver.find_elements(By.CSS_SELECTOR, NODES)
    )


def _documents_listed(b: Browser) -> list[str]:
    items = b.driver.find_elements(By.CSS_SELECTOR, "#entity-documents > li .doc-name")
    return sorted(item.text for item in items)


def test_one_node_per_entity_and_the_document_filter(
    browser: Browser, key: str, kb: GraphKb
) -> None:
    plant, _ = one_entity_in_two_documents(kb)
    b = browser
    sign_in(b, key)
    b.go("#/graph")
    b.find(f"#graph-kb option[value='{kb.id}']")
    b.find(f"#graph-doc option[value='{plant}']")  # the documents are listed for the filter

    _search(b, "Elin")
    elin = b.find(f"{NODES}[data-name='Elin Brask']")
    assert _names(b) == ["Bergen", "Elin Brask", "Zorvath Industries"]
    assert elin.get_attribute("data-documents") == "2"
    tooltip = elin.find_element(By.TAG_NAME, "title").get_attribute("textContent") or ""
    assert "plant.md" in tooltip and "people.txt" in tooltip, tooltip
    b.text_in("#graph-summary", "3 entities · 2 relations · merged from 5 document nodes")
    runs = b.driver.find_elements(By.CSS_SELECTOR, "svg.graph g.edge[data-count='2']")
    assert [edge.find_element(By.TAG_NAME, "text").text for edge in runs] == ["runs \u00d72"]

    elin.send_keys(Keys.ENTER)
    b.text_in("#entity-title", "Elin Brask")
    b.text_in("#entity-panel h3", "Named in 2 document(s)")
    assert _documents_listed(b) == ["people.txt", "plant.md"]
    for document in b.driver.find_elements(By.CSS_SELECTOR, "#entity-documents > li"):
        assert len(document.find_elements(By.CSS_SELECTOR, ".sources li .open-source")) == 1
    b.screenshot("graph-merged")

    Select(b.find("#graph-doc")).select_by_value(str(plant))
    _search(b, "Elin")
    b.find(f"{NODES}[data-name='Elin Brask'][data-documents='1']")
    assert _names(b) == ["Elin Brask", "Zorvath Industries"]
    b.text_in("#graph-summary", "2 entities · 1 relations")
    b.click(f"{NODES}[data-name='Elin Brask'] circle")
    b.text_in("#entity-panel h3", "Named in 1 document(s)")
    assert _documents_listed(b) == ["plant.md"]
    assert b.script_errors() == []
