"""Evaluation on real services: a slice of the multi-hop dev set ingested through the API and
the worker, its questions uploaded as a set, a graph-off and a graph-on run scored by the
worker on the `eval` queue, compared; the runs' recall and MRR equal what
`bench/retrieval_quality.py` computes on the same base; bad sets are refused with the line or
the cap named, and nothing is stored."""

from __future__ import annotations

import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session, sessionmaker

from bench.retrieval_quality import Method, _score
from graphrag.auth.models import Capability
from graphrag.settings import Settings
from tests.fakes.scripted_llm import ScriptedLlmServer
from tests.support.api_helpers import create_kb
from tests.support.auth_helpers import bearer, make_key
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.e2e

DATASET = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "hotpotqa-dev"
QUESTIONS = 4
RUN_WAIT_S = 120.0
POLL_S = 0.5
UPLOADS = 4


def _slice() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first questions of the dev set and the paragraphs of their pools."""
    questions = [
        json.loads(line)
        for line in (DATASET / "questions.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()[:QUESTIONS]
    ]
    wanted = {pid for q in questions for pid in q["pool"]}
    corpus = [
        p
        for line in (DATASET / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if (p := json.loads(line))["id"] in wanted
    ]
    return questions, corpus


def _ingest(http: httpx.Client, corpus: list[dict[str, Any]]) -> str:
    kb = create_kb(http, indexing={"graph_enabled": True}, extract_config={"enabled": True})
    url = f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text"

    def send(paragraph: dict[str, Any]) -> None:
        body = {"title": paragraph["id"], "content": f"{paragraph['title']}\n\n{paragraph['text']}"}
        assert http.post(url, json=body).status_code == 202

    with ThreadPoolExecutor(max_workers=UPLOADS) as pool:
        list(pool.map(send, corpus))
    deadline = time.monotonic() + RUN_WAIT_S
    while True:
        listed = http.get(url.replace("/text", "?page_size=100")).json()["items"]
        if len(listed) == len(corpus) and all(d["parse_status"] == "completed" for d in listed):
            return str(kb["id"])
        assert time.monotonic() < deadline, "the slice was not ingested in time"
        time.sleep(POLL_S)


def _upload(http: httpx.Client, kb_id: str, data: bytes) -> httpx.Response:
    files = {"file": ("set.jsonl", data, "application/jsonl")}
    return http.post(f"/api/v1/knowledge-bases/{kb_id}/eval-sets", files=files)


def _finished_run(http: httpx.Client, kb_id: str, set_id: str, graph: bool) -> dict[str, Any]:
    started = http.post(
        f"/api/v1/knowledge-bases/{kb_id}/eval-runs",
        json={"eval_set_id": set_id, "config": {"graph": graph}},
    )
    assert started.status_code == 202, started.text
    run_url = f"/api/v1/knowledge-bases/{kb_id}/eval-runs/{started.json()['id']}"
    deadline = time.monotonic() + RUN_WAIT_S
    while (run := http.get(run_url).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, run
        time.sleep(POLL_S)
    assert run["status"] == "succeeded", run
    return dict(run)


def test_runs_score_a_set_as_the_bench_does_and_compare(
    http: httpx.Client,
    worker: WorkerProcess,
    settings: Settings,
    fresh_scripted_llm: ScriptedLlmServer,
) -> None:
    fresh_scripted_llm.set_rules([], default={"content": "[]"})
    questions, corpus = _slice()
    kb_id = _ingest(http, corpus)
    lines = "\n".join(json.dumps(q) for q in questions).encode()  # the dev set's own lines
    uploaded = _upload(http, kb_id, lines)
    assert uploaded.status_code == 201, uploaded.text
    eval_set = uploaded.json()
    assert eval_set["question_count"] == QUESTIONS and eval_set["hops"] == {"2": QUESTIONS}

    off = _finished_run(http, kb_id, eval_set["id"], graph=False)
    on = _finished_run(http, kb_id, eval_set["id"], graph=True)
    assert off["progress"] == {"done": QUESTIONS, "total": QUESTIONS}
    assert off["config"]["graph"] is False and on["config"]["graph"] is True

    methods = (
        Method("hybrid", True, True, None),
        Method("graph", True, True, on["config"]["graph_ranker"]),
    )
    bench = _score(settings, kb_id, questions, methods)
    for run, method in ((off, "hybrid"), (on, "graph")):
        overall = run["metrics"]["overall"]
        for k in settings.evaluation.ks:
            assert overall[f"r_at_{k}"] == pytest.approx(statistics.fmean(bench[method].recall[k]))
        assert overall["mrr"] == pytest.approx(statistics.fmean(bench[method].rr))
        assert run["metrics"]["by_hops"]["2"]["r_at_5"] == overall["r_at_5"]

    results = http.get(f"/api/v1/knowledge-bases/{kb_id}/eval-runs/{off['id']}/questions").json()
    assert len(results["items"]) == QUESTIONS
    assert all(
        len(r["ranked_documents"]) <= settings.evaluation.ranked_kept for r in results["items"]
    )
    compared = http.get(
        f"/api/v1/knowledge-bases/{kb_id}/eval-runs/{off['id']}/compare/{on['id']}"
    ).json()
    by_name = {m["name"]: m for m in compared["metrics"]}
    assert by_name["r_at_5"]["delta"] == pytest.approx(
        on["metrics"]["overall"]["r_at_5"] - off["metrics"]["overall"]["r_at_5"]
    )
    for change in compared["changed"]:
        assert (change["a_rank"] is None) != (change["b_rank"] is None)


def test_bad_sets_are_refused_and_nothing_is_stored(
    http: httpx.Client,
    api_url: str,
    worker: WorkerProcess,
    settings: Settings,
    session_factory: sessionmaker[Session],
) -> None:
    kb = create_kb(http)
    known = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text",
        json={"title": "lyon", "content": "Lyon is a city in France."},
    )
    assert known.status_code == 202
    good = json.dumps({"question": "Where is Lyon?", "gold": ["lyon"]})
    unknown = json.dumps({"question": "Where is Atlantis?", "gold": ["atlantis"]})
    most = settings.evaluation.max_questions
    cases = {
        "line 2": f"{good}\n{{not json",
        "'atlantis' is no document": f"{good}\n{unknown}",
        "question": json.dumps({"question": ""}),
        f"at most {most} questions": f"{good}\n" * (most + 1),
    }
    for named, text in cases.items():
        refused = _upload(http, kb["id"], text.encode())
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["code"] == "eval_set_invalid"
        assert named in refused.json()["error"]["message"], refused.text
    huge = _upload(http, kb["id"], b" " * (settings.evaluation.max_set_bytes + 1))
    assert huge.status_code == 413
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}/eval-sets").json() == {"items": []}
    stored = _upload(http, kb["id"], good.encode())
    assert stored.status_code == 201, stored.text
    set_id = stored.json()["id"]
    detail = http.get(f"/api/v1/knowledge-bases/{kb['id']}/eval-sets/{set_id}").json()
    assert detail["questions"][0]["gold"] == [known.json()["id"]]
    wrong = http.post(
        f"/api/v1/knowledge-bases/{kb['id']}/eval-runs",
        json={"eval_set_id": set_id, "config": {"graph_ranker": "magic"}},
    )
    assert wrong.status_code == 422
    reader = make_key(session_factory, settings, settings.api.default_tenant, [Capability.READ])
    with httpx.Client(base_url=api_url, headers=bearer(reader.key), timeout=30.0) as read_only:
        sets_url = f"/api/v1/knowledge-bases/{kb['id']}/eval-sets"
        assert read_only.get(sets_url).status_code == 200  # `read` sees
        files = {"file": ("set.jsonl", good.encode(), "application/jsonl")}
        assert read_only.post(sets_url, files=files).status_code == 403  # `write` uploads
        run = {"eval_set_id": set_id}
        runs_url = f"/api/v1/knowledge-bases/{kb['id']}/eval-runs"
        assert read_only.post(runs_url, json=run).status_code == 403  # and runs
    deleted = http.delete(f"/api/v1/knowledge-bases/{kb['id']}/eval-sets/{set_id}")
    assert deleted.status_code == 204
    assert http.get(f"/api/v1/knowledge-bases/{kb['id']}/eval-sets").json() == {"items": []}
