"""Chat retrieval latency: every stage of a turn but the answer, with the graph and without it.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/chat.py [--chunks 50000] [--entities 20000] ...

Data (fresh PostgreSQL database, fresh Neo4j labels): one knowledge base of `--docs` documents,
`--chunks` chunks of generated text and `--entities` entities with one relation per chunk (see
`bench/chat_corpus.py` and `bench/chat_load.py`). Chunk vectors are mixes of real embeddings:
`--pool` filler sentences are embedded by the configured embedder and each chunk's vector is a
weighted mix of its three filler sentences' vectors plus a little noise. Uniform random unit
vectors have none of the clustering of real embeddings that HNSW's speed depends on;
embedding all 50k texts would take over an hour on two busy cores. The mix ignores the entity
sentences, so a question's own chunk is found by its words or the graph, not by its vector.

Measured: each question runs as `start_turn` + `prepare_turn` (scope checks, history, query
understanding, vector + keyword search with the real query embedding, the graph retrieval,
merge, prompt), twice: `with_graph` (use_graph true: the entity names come from a scripted LLM
reply, then the graph retrieval's Neo4j reads, its walk and the graph chunks' rows) and
`without_graph` (use_graph false: no entity step, no graph search). The order alternates
question by question, after unmeasured warm-up questions. No agent memory, no reranker, empty
history.

Lines: `retrieval_p50` and `retrieval_p95`, with_graph/without_graph: what the graph costs
(above 1 is slower). Then each stage's median time and median share of the turn;
chunk_search holds the graph ranking, which runs beside the vector and keyword searches.
"""

from __future__ import annotations

import argparse
import os
import statistics
import uuid
from dataclasses import dataclass

import numpy as np
from sqlalchemy import Engine

from bench.chat_corpus import Corpus, CorpusShape, Question, chunk_vectors, make_corpus
from bench.chat_load import BenchKb, copy_chunks, create_rows, drop_graph, write_graph
from bench.chat_turns import (
    EMBED_QUERY,
    START_TURN,
    FakeEntityLlm,
    TimedEmbedder,
    TurnSample,
    run_turn,
)
from bench.harness import median, print_header, print_ratio, services_env, timed
from graphrag.chat.pipeline import PREPARE_ORDER, ChatStage
from graphrag.chat.turn import ChatServices
from graphrag.db.engine import make_engine, make_session_factory
from graphrag.db.migrate import upgrade_to_head
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.search.embeddings import build_embedder
from graphrag.settings import Settings
from tests.support.services import create_database, drop_database

WITH_GRAPH, WITHOUT_GRAPH = "with_graph", "without_graph"
MODES = ((WITH_GRAPH, True), (WITHOUT_GRAPH, False))
_PERCENT = 100.0
_P95 = 94  # index of the 95th percentile among statistics.quantiles(n=100)


@dataclass(frozen=True)
class Bench:
    settings: Settings
    engine: Engine
    store: Neo4jGraphStore
    ids: BenchKb


def load_data(bench: Bench, shape: CorpusShape) -> tuple[Corpus, ChatServices]:
    """Generate, embed and load the base; the chat services over it."""
    corpus, gen_s = timed(lambda: make_corpus(shape))
    embedder = build_embedder(bench.settings.embedding)
    pool, embed_s = timed(lambda: np.asarray(embedder.embed(corpus.pool), dtype=np.float32))
    vectors, mix_s = timed(lambda: chunk_vectors(corpus, pool, shape.seed))
    sessions = make_session_factory(bench.engine)
    create_rows(sessions, corpus, bench.ids)
    _, pg_s = timed(lambda: copy_chunks(bench.engine, bench.ids.kb_id, corpus, vectors))
    (nodes, relations), graph_s = timed(lambda: write_graph(bench.store, bench.ids.kb_id, corpus))
    print(
        f"# data: {len(corpus.chunks)} chunks in {len(corpus.doc_ids)} documents, {nodes} "
        f"entities, {relations} relations; seconds: generate {gen_s:.1f}, embed "
        f"{len(corpus.pool)} pool sentences {embed_s:.1f}, mix vectors {mix_s:.1f}, "
        f"postgres copy + index build {pg_s:.1f}, neo4j write {graph_s:.1f}",
        flush=True,
    )
    services = ChatServices(
        settings=bench.settings,
        sessions=sessions,
        embedder=TimedEmbedder(embedder),
        llm=FakeEntityLlm(bench.settings.llm),
        graph=bench.store,
    )
    return corpus, services


def measure(
    services: ChatServices, ids: BenchKb, questions: list[Question], warmup: list[Question]
) -> dict[str, list[TurnSample]]:
    """Each question with and without the graph, alternating which goes first."""
    for question in warmup:
        for _, use_graph in MODES:
            run_turn(services, ids.tenant_id, ids.session_id, question, use_graph)
    samples: dict[str, list[TurnSample]] = {name: [] for name, _ in MODES}
    for index, question in enumerate(questions):
        for name, use_graph in MODES if index % 2 == 0 else MODES[::-1]:
            turn = run_turn(services, ids.tenant_id, ids.session_id, question, use_graph)
            samples[name].append(turn)
    return samples


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[_P95]


def _stage_line(name: str, turns: list[TurnSample]) -> str:
    stages = [START_TURN] + [s.name.value for s in PREPARE_ORDER]
    stages.insert(stages.index(ChatStage.CHUNK_SEARCH.value) + 1, EMBED_QUERY)
    parts = []
    for stage in stages:
        ms = median([t.stages_ms.get(stage, 0.0) for t in turns])
        share = median([_PERCENT * t.stages_ms.get(stage, 0.0) / t.total_ms for t in turns])
        label = f"({stage} of chunk_search)" if stage == EMBED_QUERY else stage
        parts.append(f"{label} {ms:.1f} ms {share:.0f}%")
    return f"# stages {name}, median ms and median share of the turn: " + " | ".join(parts)


def report(samples: dict[str, list[TurnSample]]) -> None:
    graph, plain = samples[WITH_GRAPH], samples[WITHOUT_GRAPH]
    g_ms, p_ms = [t.total_ms for t in graph], [t.total_ms for t in plain]
    detail = (
        f"n={len(graph)} questions; with_graph p50 {median(g_ms):.1f} ms p95 {p95(g_ms):.1f} ms; "
        f"without_graph p50 {median(p_ms):.1f} ms p95 {p95(p_ms):.1f} ms"
    )
    print_ratio("retrieval_p50", WITH_GRAPH, WITHOUT_GRAPH, median(g_ms) / median(p_ms), detail)
    print_ratio("retrieval_p95", WITH_GRAPH, WITHOUT_GRAPH, p95(g_ms) / p95(p_ms), detail)
    for name, turns in samples.items():
        print(_stage_line(name, turns))
    added = [t.graph_added for t in graph]
    print(
        f"# with_graph: entity names per question {min(t.entities for t in graph)}-"
        f"{max(t.entities for t in graph)}; graph chunks added per turn median "
        f"{median([float(a) for a in added]):.0f} (turns with any: {sum(1 for a in added if a)}"
        f"/{len(added)}); turns where keyword search placed a hit in the fused top-k: "
        f"{sum(1 for t in plain if t.keyword_hits)}/{len(plain)}; hits per turn median "
        f"{median([float(t.hits) for t in graph]):.0f} with graph, "
        f"{median([float(t.hits) for t in plain]):.0f} without",
        flush=True,
    )
    if not any(added):
        raise SystemExit("the graph added no chunk to any turn: the with_graph side is not real")


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=50_000)
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--docs", type=int, default=10, help="documents sharing the chunks")
    parser.add_argument("--pool", type=int, default=256, help="filler sentences embedded")
    parser.add_argument("--questions", type=int, default=50, help="measured questions")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured first questions")
    parser.add_argument("--seed", type=int, default=11)
    return parser.parse_args()


def run(settings: Settings, args: argparse.Namespace) -> None:
    """Migrate the fresh database, load the base, measure, report; the graph is always removed."""
    ids = BenchKb(uuid.uuid4(), uuid.uuid4(), uuid.uuid4())
    engine = make_engine(settings)
    store = Neo4jGraphStore(connect_driver(settings.neo4j), settings.neo4j)
    try:
        upgrade_to_head(settings)
        shape = CorpusShape(
            args.chunks, args.entities, args.docs, args.pool, args.questions + args.warmup,
            args.seed,
        )  # fmt: skip
        corpus, services = load_data(Bench(settings, engine, store, ids), shape)
        warmup, questions = corpus.questions[: args.warmup], corpus.questions[args.warmup :]
        report(measure(services, ids, questions, warmup))
    finally:
        removed, left = drop_graph(store, ids.kb_id)
        store.close()
        engine.dispose()
        print(f"# cleanup: {removed} graph nodes and the base's name index removed, {left} left")


def main() -> None:
    args = _parse()
    print_header("chat", vars(args))
    env = services_env()
    database_url = create_database(env["DATABASE_URL"], "graphrag_bench")
    try:
        os.environ.update({**env, "DATABASE_URL": database_url, "NEO4J_ENABLE": "true"})
        run(Settings(), args)  # Settings read the YAML and the environment set just above
    finally:
        drop_database(database_url)
        print("# cleanup: database dropped (no file was stored)")


if __name__ == "__main__":
    main()
