"""Graph write throughput: our UNWIND store against plain Cypher MERGE and per-row writes.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/graph_write.py [--chunks 200] [--entities 20] ...

The same generated chunk graphs (entity names shared across chunks, so most merges hit existing
nodes) are written, one transaction per chunk, by:
- `store`: `Neo4jGraphStore.write_chunk_graph` (one statement: MERGE on the (kg, name) key, the
  namespace labels and the relation type as data, apoc.coll.union of the lists);
- `plain_unwind`: `UNWIND $rows ... MERGE` on one fixed label and one fixed relationship type
  (the type kept as a property), lists grown in plain Cypher;
- `naive_per_row`: the plain MERGEs sent one row per round trip, on the first chunks only.
Methods alternate chunk by chunk so load changes hit all of them. Each writes under fresh uuid
labels (name-indexed), deleted in batches at the end. Rates are rows (entities + relations) / s;
above 1 the store is faster than the baseline.
"""

from __future__ import annotations

import argparse
import os
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from neo4j import Driver, ManagedTransaction

from bench.harness import COUNT_UNDER_LABEL, print_header, print_ratio, services_env, timed
from graphrag.graph.labels import entity_label
from graphrag.graph.models import GraphData, GraphNode, GraphRelation
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.settings import Settings

# Plain-Cypher equivalents of the store's merges; the label comes from `entity_label` only.
PLAIN_MERGE_NODES = """
UNWIND $rows AS row
MERGE (n:{label} {{name: row.name, kg: row.kg}})
SET n.attributes = coalesce(n.attributes, [])
      + [a IN row.attributes WHERE NOT a IN coalesce(n.attributes, [])],
    n.chunks = coalesce(n.chunks, []) + [c IN row.chunks WHERE NOT c IN coalesce(n.chunks, [])]
RETURN count(n) AS nodes
"""
PLAIN_MERGE_RELATIONS = """
UNWIND $rows AS row
MERGE (a:{label} {{name: row.source, kg: row.kg}})
MERGE (b:{label} {{name: row.target, kg: row.kg}})
MERGE (a)-[r:RELATED {{type: row.type}}]->(b)
SET r.chunks = coalesce(r.chunks, []) + [c IN row.chunks WHERE NOT c IN coalesce(r.chunks, [])]
RETURN count(r) AS relations
"""
NAIVE_MERGE_NODE = """
MERGE (n:{label} {{name: $name, kg: $kg}})
SET n.attributes = coalesce(n.attributes, [])
      + [a IN $attributes WHERE NOT a IN coalesce(n.attributes, [])],
    n.chunks = coalesce(n.chunks, []) + [c IN $chunks WHERE NOT c IN coalesce(n.chunks, [])]
"""
NAIVE_MERGE_RELATION = """
MERGE (a:{label} {{name: $source, kg: $kg}})
MERGE (b:{label} {{name: $target, kg: $kg}})
MERGE (a)-[r:RELATED {{type: $type}}]->(b)
SET r.chunks = coalesce(r.chunks, []) + [c IN $chunks WHERE NOT c IN coalesce(r.chunks, [])]
"""
DROP_NAME_INDEX = "DROP INDEX name_{label} IF EXISTS"
AWAIT_INDEXES = "CALL db.awaitIndexes($timeout_s)"
INDEX_WAIT_S = 120

RELATION_TYPES = ["WORKS_WITH", "PART_OF", "LOCATED_IN", "SUPPLIES", "FOUNDED"]

ChunkWriter = Callable[[uuid.UUID, GraphData], None]


@dataclass
class Method:
    """One way of writing a chunk's graph, its namespace and the seconds each chunk took."""

    name: str
    namespace: uuid.UUID
    write: ChunkWriter
    seconds: list[float] = field(default_factory=list)


def make_chunks(
    chunks: int, entities: int, relations: int, overlap: int, seed: int
) -> list[GraphData]:
    """Chunk graphs whose names come from a pool so each name is in about `overlap` chunks."""
    rng = random.Random(seed)
    pool = [f"Entity {i:05d}" for i in range(max(entities, chunks * entities // overlap))]
    graphs = []
    for c in range(chunks):
        names = rng.sample(pool, entities)
        nodes = [GraphNode(name=n, attributes=[f"mentioned in part {c % 7}"]) for n in names]
        rels = [
            GraphRelation(node1=a, node2=b, type=rng.choice(RELATION_TYPES))
            for a, b in (rng.sample(names, 2) for _ in range(relations))
        ]
        graphs.append(GraphData(nodes=nodes, relations=rels))
    return graphs


def _node_rows(graph: GraphData, kg: str, chunk: str) -> list[dict[str, object]]:
    return [
        {"name": n.name, "kg": kg, "attributes": n.attributes, "chunks": [chunk]}
        for n in graph.nodes
    ]


def _relation_rows(graph: GraphData, kg: str, chunk: str) -> list[dict[str, object]]:
    return [
        {"source": r.node1, "target": r.node2, "type": r.type, "kg": kg, "chunks": [chunk]}
        for r in graph.relations
    ]


def plain_writer(driver: Driver, database: str, namespace: uuid.UUID) -> ChunkWriter:
    """UNWIND batches of plain MERGEs, one transaction per chunk."""
    label, kg = entity_label(namespace), str(namespace)
    nodes_q, rels_q = (
        PLAIN_MERGE_NODES.format(label=label),
        PLAIN_MERGE_RELATIONS.format(label=label),
    )

    def write(chunk_id: uuid.UUID, graph: GraphData) -> None:
        def work(tx: ManagedTransaction) -> None:
            tx.run(nodes_q, rows=_node_rows(graph, kg, str(chunk_id))).consume()
            tx.run(rels_q, rows=_relation_rows(graph, kg, str(chunk_id))).consume()

        with driver.session(database=database) as session:
            session.execute_write(work)

    return write


def naive_writer(driver: Driver, database: str, namespace: uuid.UUID) -> ChunkWriter:
    """The plain MERGEs one row per round trip, one transaction per chunk."""
    label, kg = entity_label(namespace), str(namespace)
    node_q, rel_q = NAIVE_MERGE_NODE.format(label=label), NAIVE_MERGE_RELATION.format(label=label)

    def write(chunk_id: uuid.UUID, graph: GraphData) -> None:
        def work(tx: ManagedTransaction) -> None:
            for row in _node_rows(graph, kg, str(chunk_id)):
                tx.run(node_q, row).consume()
            for row in _relation_rows(graph, kg, str(chunk_id)):
                tx.run(rel_q, row).consume()

        with driver.session(database=database) as session:
            session.execute_write(work)

    return write


def store_writer(store: Neo4jGraphStore, namespace: uuid.UUID) -> ChunkWriter:
    """The product's store: the namespace is the knowledge base, one document for all chunks."""
    document = uuid.uuid4()

    def write(chunk_id: uuid.UUID, graph: GraphData) -> None:
        store.write_chunk_graph(namespace, document, chunk_id, graph)

    return write


class GraphBench:
    """The driver, the store, and every namespace written so far (for the cleanup)."""

    def __init__(self, settings: Settings) -> None:
        self.database = settings.neo4j.database
        self.driver = connect_driver(settings.neo4j)
        self.store = Neo4jGraphStore(self.driver, settings.neo4j)
        self.namespaces: list[uuid.UUID] = []

    def methods(self, naive: bool) -> list[Method]:
        """Fresh, name-indexed namespaces for the store, the plain and (if asked) the naive way."""
        spaces = [uuid.uuid4() for _ in range(3 if naive else 2)]
        self.namespaces.extend(spaces)
        for space in spaces:
            self.store.ensure_kb_indexes(space)
        self.driver.execute_query(AWAIT_INDEXES, timeout_s=INDEX_WAIT_S, database_=self.database)
        found = [
            Method("store", spaces[0], store_writer(self.store, spaces[0])),
            Method("plain_unwind", spaces[1], plain_writer(self.driver, self.database, spaces[1])),
        ]
        if naive:
            writer = naive_writer(self.driver, self.database, spaces[2])
            found.append(Method("naive_per_row", spaces[2], writer))
        return found

    def counts(self, namespace: uuid.UUID) -> tuple[int, int]:
        query = COUNT_UNDER_LABEL.format(label=entity_label(namespace))
        records, _, _ = self.driver.execute_query(query, database_=self.database)
        return int(records[0]["nodes"]), int(records[0]["relations"])

    def cleanup(self) -> None:
        """Delete every node written (batched, by namespace label) and drop the indexes."""
        for space in self.namespaces:
            self.store.delete_knowledge_base(space)
            label = entity_label(space)
            self.driver.execute_query(DROP_NAME_INDEX.format(label=label), database_=self.database)
        self.driver.close()


def run_interleaved(methods: list[Method], graphs: list[GraphData], naive_chunks: int) -> None:
    """Chunk by chunk, every method writes it, starting with a different method each time."""
    for index, graph in enumerate(graphs):
        active = [m for m in methods if m.name != "naive_per_row" or index < naive_chunks]
        shift = index % len(active)
        for method in active[shift:] + active[:shift]:
            chunk_id = uuid.uuid4()
            method.seconds.append(timed(partial(method.write, chunk_id, graph))[1])


def report(bench: GraphBench, methods: list[Method], rows_per_chunk: int) -> None:
    by_name = {m.name: m for m in methods}
    store, plain = by_name["store"], by_name["plain_unwind"]
    n = len(store.seconds)
    rate = {m.name: rows_per_chunk * len(m.seconds) / sum(m.seconds) for m in methods}
    shape = {m.name: bench.counts(m.namespace) for m in methods}
    print_ratio(
        "graph_write_rows_per_s",
        "store",
        "plain_unwind",
        rate["store"] / rate["plain_unwind"],
        f"n={n} chunks x {rows_per_chunk} rows: store {rate['store']:.0f} rows/s, "
        f"plain_unwind {rate['plain_unwind']:.0f} rows/s; nodes/relations written "
        f"{shape['store']} vs {shape['plain_unwind']}",
    )
    naive = by_name.get("naive_per_row")
    if naive is None:
        return
    k = len(naive.seconds)
    naive_rate = rows_per_chunk * k / sum(naive.seconds)
    for name, candidate in (("store", store), ("plain_unwind", plain)):
        same_rate = rows_per_chunk * k / sum(candidate.seconds[:k])
        print_ratio(
            "graph_write_rows_per_s",
            name,
            "naive_per_row",
            same_rate / naive_rate,
            f"n={k} first chunks x {rows_per_chunk} rows: {name} {same_rate:.0f} rows/s, "
            f"naive_per_row {naive_rate:.0f} rows/s",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--entities", type=int, default=20, help="entities per chunk")
    parser.add_argument("--relations", type=int, default=20, help="relations per chunk")
    parser.add_argument("--overlap", type=int, default=4, help="chunks an entity name is in (avg)")
    parser.add_argument("--naive-chunks", type=int, default=30, help="chunks for naive_per_row")
    parser.add_argument("--warmup-chunks", type=int, default=5, help="unmeasured first writes")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print_header("graph_write", vars(args))
    os.environ.update(services_env())
    bench = GraphBench(Settings())
    try:
        graphs = make_chunks(args.chunks, args.entities, args.relations, args.overlap, args.seed)
        run_interleaved(bench.methods(naive=True), graphs[: args.warmup_chunks], args.warmup_chunks)
        methods = bench.methods(naive=args.naive_chunks > 0)
        run_interleaved(methods, graphs, args.naive_chunks)
        report(bench, methods, args.entities + args.relations)
    finally:
        bench.cleanup()


if __name__ == "__main__":
    main()
