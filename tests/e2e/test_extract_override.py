"""A document's own extraction settings over its base's, on real services: set at upload (file
form field, text import), read back with the effective config, used by its chunk tasks (the
scripted model records each extraction prompt), changed later with a rebuild of that document
alone; bad settings are refused with nothing stored; other tenants and read-only keys cannot
change them."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest
from neo4j import Driver
from sqlalchemy.orm import Session, sessionmaker

from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import all_chunks, create_kb, upload, wait_terminal
from tests.support.auth_helpers import bearer, make_key
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

BASE_TAGS = ["supplies_parts_to"]
OWN_TAGS = ["was_founded_by"]
NEW_TAGS = ["is_headquartered_in"]


def _text(marker: str) -> bytes:
    return f"{marker}. Alder Works supplies parts to Birch Motors.\n{uuid.uuid4()}".encode()


def _upload_own(
    http: httpx.Client, kb_id: str, name: str, data: bytes, override: str
) -> httpx.Response:
    files = {"file": (name, data, "text/markdown")}
    return http.post(
        f"/api/v1/knowledge-bases/{kb_id}/knowledge/file",
        files=files,
        data={"extract_override": override},
    )


def _prompts(llm: ScriptedLlmServer, marker: str) -> list[str]:
    """The extraction requests of the chunks holding `marker`, as one text each."""
    found = []
    for request in llm.requests("/v1/chat/completions"):
        body = request.body
        if isinstance(body, dict) and marker in json.dumps(body):
            found.append(json.dumps(body["messages"]))
    return found


def _graph_base(http: httpx.Client, llm: ScriptedLlmServer | None = None) -> dict[str, Any]:
    """A base with its graph on (and the scripted model answering every extraction with no
    graph, when given)."""
    if llm is not None:
        llm.set_rules([], default={"content": "[]"})
    kb = create_kb(
        http,
        indexing={"graph_enabled": True},
        extract_config={"enabled": True, "tags": BASE_TAGS},
    )
    assert kb["graph_on"] is True
    return kb


def test_a_documents_own_settings_drive_its_extraction(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    kb = _graph_base(http, fresh_scripted_llm)
    plain = upload(http, kb["id"], "plain.md", _text("PLAINDOC")).json()
    own = _upload_own(
        http, kb["id"], "own.md", _text("OWNDOC"), json.dumps({"tags": OWN_TAGS})
    ).json()
    off = _upload_own(
        http, kb["id"], "off.md", _text("OFFDOC"), json.dumps({"enabled": False})
    ).json()
    texted = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text",
        json={
            "title": "texted",
            "content": _text("TEXTDOC").decode(),
            "extract_override": {"custom_instructions": "Name every supplier."},
        },
    )
    assert texted.status_code == 202, texted.text
    for doc in (plain, own, off, texted.json()):
        assert wait_terminal(http, doc["id"])["parse_status"] == "completed"

    [plain_prompt] = _prompts(fresh_scripted_llm, "PLAINDOC")
    assert BASE_TAGS[0] in plain_prompt and OWN_TAGS[0] not in plain_prompt
    [own_prompt] = _prompts(fresh_scripted_llm, "OWNDOC")
    assert OWN_TAGS[0] in own_prompt and BASE_TAGS[0] not in own_prompt
    [text_prompt] = _prompts(fresh_scripted_llm, "TEXTDOC")
    assert "Name every supplier." in text_prompt and BASE_TAGS[0] in text_prompt
    assert _prompts(fresh_scripted_llm, "OFFDOC") == []  # no graph for this document
    assert {c["graph_status"] for c in all_chunks(http, off["id"])} == {"skipped"}

    shown = http.get(f"/api/v1/knowledge/{own['id']}").json()
    assert shown["extract_override"]["tags"] == OWN_TAGS
    assert shown["extract_override"]["enabled"] is None
    assert shown["effective_extract_config"]["tags"] == OWN_TAGS
    assert shown["effective_extract_config"]["enabled"] is True
    plain_shown = http.get(f"/api/v1/knowledge/{plain['id']}").json()
    assert plain_shown["extract_override"] is None
    assert plain_shown["effective_extract_config"]["tags"] == BASE_TAGS


def test_a_change_offers_and_runs_a_rebuild_of_that_document_alone(
    http: httpx.Client,
    worker: WorkerProcess,
    fresh_scripted_llm: ScriptedLlmServer,
    neo4j_driver: Driver,
) -> None:
    kb = _graph_base(http, fresh_scripted_llm)
    first = upload(http, kb["id"], "first.md", _text("FIRSTDOC")).json()
    second = upload(http, kb["id"], "second.md", _text("SECONDDOC")).json()
    for doc in (first, second):
        assert wait_terminal(http, doc["id"])["parse_status"] == "completed"

    changed = http.patch(
        f"/api/v1/knowledge/{first['id']}", json={"extract_override": {"tags": NEW_TAGS}}
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["graph_rebuild_offered"] is True and body["rebuild_queued"] is False
    assert body["knowledge"]["attempt"] == 1
    assert body["knowledge"]["effective_extract_config"]["tags"] == NEW_TAGS
    same = http.patch(
        f"/api/v1/knowledge/{first['id']}", json={"extract_override": {"tags": NEW_TAGS}}
    ).json()
    assert same["graph_rebuild_offered"] is False  # nothing new to extract with

    fresh_scripted_llm.clear_requests()
    rebuilt = http.patch(
        f"/api/v1/knowledge/{first['id']}",
        json={"extract_override": {"tags": NEW_TAGS}, "rebuild": True},
    )
    assert rebuilt.status_code == 200, rebuilt.text
    assert rebuilt.json()["rebuild_queued"] is True
    done = wait_terminal(http, first["id"])
    assert done["parse_status"] == "completed" and done["attempt"] == 2
    [prompt] = _prompts(fresh_scripted_llm, "FIRSTDOC")
    assert NEW_TAGS[0] in prompt and BASE_TAGS[0] not in prompt
    assert _prompts(fresh_scripted_llm, "SECONDDOC") == []  # the other document is untouched
    assert http.get(f"/api/v1/knowledge/{second['id']}").json()["attempt"] == 1

    cleared = http.patch(f"/api/v1/knowledge/{first['id']}", json={"extract_override": None})
    assert cleared.json()["knowledge"]["extract_override"] is None
    assert cleared.json()["graph_rebuild_offered"] is True


def test_bad_settings_are_refused_and_nothing_is_stored(
    http: httpx.Client, worker: WorkerProcess, settings: Settings
) -> None:
    off_base = create_kb(http, indexing={"graph_enabled": True}, extract_config={"enabled": False})
    refused = _upload_own(
        http, off_base["id"], "on.md", _text("ONDOC"), json.dumps({"enabled": True})
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "extract_override_invalid"
    kb = _graph_base(http)
    malformed = _upload_own(http, kb["id"], "bad.md", _text("BADDOC"), "{tags: [")
    assert malformed.status_code == 422
    assert malformed.json()["error"]["code"] == "extract_override_invalid"
    unknown = _upload_own(http, kb["id"], "bad.md", _text("BADDOC"), '{"tagz": []}')
    assert unknown.status_code == 422
    assert "tagz" in unknown.json()["error"]["message"]
    too_many = [f"t{n}" for n in range(settings.extraction.max_tags + 1)]
    over = _upload_own(http, kb["id"], "bad.md", _text("BADDOC"), json.dumps({"tags": too_many}))
    assert over.status_code == 422
    for base in (off_base, kb):
        listed = http.get(f"/api/v1/knowledge-bases/{base['id']}/knowledge").json()
        assert listed["items"] == []  # nothing stored

    doc = upload(http, kb["id"], "ok.md", _text("OKDOC")).json()
    patched = http.patch(
        f"/api/v1/knowledge/{doc['id']}", json={"extract_override": {"tags": too_many}}
    )
    assert patched.status_code == 422
    assert http.get(f"/api/v1/knowledge/{doc['id']}").json()["extract_override"] is None


def test_other_tenants_and_read_only_keys_cannot_change_them(
    http: httpx.Client,
    api_url: str,
    worker: WorkerProcess,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> None:
    kb = _graph_base(http)
    doc = upload(http, kb["id"], "mine.md", _text("MINEDOC")).json()
    body = {"extract_override": {"enabled": False}}
    suffix = uuid.uuid4().hex[:8]
    stranger = make_key(session_factory, settings, f"stranger-{suffix}", list(Capability))
    with httpx.Client(base_url=api_url, headers=bearer(stranger.key), timeout=30.0) as other:
        missing = other.patch(f"/api/v1/knowledge/{doc['id']}", json=body)
        assert missing.status_code == 404
    owner = settings.api.default_tenant  # the tenant of the suite's own key
    reader = make_key(session_factory, settings, owner, [Capability.READ])
    with httpx.Client(base_url=api_url, headers=bearer(reader.key), timeout=30.0) as read_only:
        refused = read_only.patch(f"/api/v1/knowledge/{doc['id']}", json=body)
        assert refused.status_code == 403
    assert http.get(f"/api/v1/knowledge/{doc['id']}").json()["extract_override"] is None
