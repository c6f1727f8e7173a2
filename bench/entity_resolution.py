"""Entity resolution on a generated corpus of known aliases, abbreviations, typos and homonyms.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/entity_resolution.py [--entities 300 --seed 7]

Seeded generation: `--entities` people, each with an employer and a city of its own; one
document per mention, naming the person in one form (full name, initials, a title, a typo, the
surname alone) with one or two of its neighbours (the employer written out in full in a share
of the documents: "Orla Laboratories" for "Orla Labs"). A share of the people are homonyms: two
people of one full name with different employers and cities. `--families` makes a share of the
people relatives of the one before: the same surname, another first name, the same employer and
city (a family firm), so a surname alone fits both. Each document's graph is written
with `Neo4jGraphStore.write_chunk_graph` under a fresh base and resolved with
`resolve_documents`, one document after the other (`--batch N`: N documents written, then
resolved together, as a run of the ingestion does; a document's time is the batch's over N),
without name vectors, with the rules alone unless `--llm` is given.

`--preload` lists base sizes: for each, the same corpus is resolved in a fresh base first filled
with that many resolved entities of other names (written in bulk, one node each, a tenth of them
sharing a surname of the corpus, so they come up as word candidates). Lines, per base size:
- `resolution_pairs_base_N: precision/1` and `recall/1`: pairwise, over the people's document
  nodes (two nodes of one person in one resolved entity: a true merge);
- `resolution_ms_per_document_base_N: last/first`: the median time of a document's run over the
  last tenth of the documents against the first tenth (the corpus's own growth);
- `resolution_llm_calls_per_document_base_N` (with `--llm`: the server of `llm.base_url` asked
  about the pairs the rules leave open; start it first with `deploy/local/services.py start
  --llama`), with the pairs asked;
and `resolution_ms_per_document: base_N/base_M`, the median time per document in the largest
base over the smallest (1.00x: no growth with the base).
The base's nodes are deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import string
import uuid
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from typing import Any

from neo4j import Driver, ManagedTransaction

from bench.harness import median, print_header, print_ratio, services_env, timed
from graphrag.graph.labels import ENTITY_KEY_LABEL, base_scope, entity_label
from graphrag.graph.models import GraphData, GraphNode, GraphRelation
from graphrag.graph.names import name_key
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.resolution.resolver import resolve_documents
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.llm.client import LlmClient
from graphrag.settings import ResolutionSettings, Settings

# Bulk filler: the shape the store writes (a document node linked to its key's base node) and
# one resolved entity per node.
PRELOAD = """
UNWIND $rows AS row
CREATE (n:GraphEntity {kg: $kg, name: row.name, key: row.key, attributes: [], chunks: []})
WITH n, row
CALL apoc.create.addLabels(n, $labels) YIELD node
MERGE (c:BaseEntity {kb: $kb, key: row.key}) ON CREATE SET c.scope = $scope
CREATE (n)-[:INSTANCE_OF]->(c)
CREATE (r:ResolvedEntity {id: row.id, kb: $kb, name: row.name})
CREATE (n)-[:RESOLVED_AS {rule: 'new', score: 1.0, reason: 'preloaded', documents: [$kg],
                          manual: false}]->(r)
"""
PRELOAD_BATCH = 5000

RESOLVED_OF_BASE = """
MATCH (n:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity {kb: $kb})
RETURN n.kg + '|' + n.name AS node, r.id AS resolved
"""

FIRST = ["Ada", "Paul", "Marie", "Louis", "Claire", "Hugo", "Nina", "Omar", "Lena", "Victor"]
FORMS = ("full", "initials", "title", "typo", "surname")


@dataclass(frozen=True)
class Person:
    pid: int
    first: str
    last: str
    employer: str
    city: str


def _word(rng: random.Random, size: int) -> str:
    return rng.choice(string.ascii_uppercase) + "".join(
        rng.choice(string.ascii_lowercase) for _ in range(size - 1)
    )


def _people(
    rng: random.Random, count: int, homonym_share: float, family_share: float
) -> list[Person]:
    people: list[Person] = []
    for pid in range(count):
        # Draws in the same order as before the option, so its default keeps the corpus.
        if people and rng.random() < homonym_share:
            twin = people[-1]
            first, last = twin.first, twin.last  # same name, another person
        elif family_share and people and rng.random() < family_share:
            kin = people[-1]  # another person of the family, in the family firm
            first = rng.choice([name for name in FIRST if name != kin.first])
            people.append(Person(pid, first, kin.last, kin.employer, kin.city))
            continue
        else:
            first, last = rng.choice(FIRST), _word(rng, 8)
        people.append(Person(pid, first, last, f"{_word(rng, 7)} Labs", _word(rng, 6)))
    return people


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _name(person: Person, form: str, rng: random.Random) -> str:
    return {
        "full": f"{person.first} {person.last}",
        "initials": f"{person.first[0]}. {person.last}",
        "title": f"Dr {person.first} {person.last}",
        "typo": f"{person.first} {_typo(person.last, rng)}",
        "surname": person.last,
    }[form]


def _document(person: Person, form: str, rng: random.Random, variants: float) -> GraphData:
    name = _name(person, form, rng)
    # The employer is sometimes written out ("Orla Laboratories"): another key, which only the
    # model can see is the same organisation.
    employer = person.employer
    if rng.random() < variants:
        employer = employer.replace(" Labs", " Laboratories")
    around = [("works_at", employer), ("lives_in", person.city)]
    chosen = around if rng.random() < 0.5 else [rng.choice(around)]
    nodes = [GraphNode(name=name)] + [GraphNode(name=other) for _, other in chosen]
    relations = [GraphRelation(node1=name, node2=other, type=kind) for kind, other in chosen]
    return GraphData(nodes=nodes, relations=relations)


def _preload(
    driver: Driver, settings: Settings, kb: uuid.UUID, count: int, surnames: list[str], seed: int
) -> None:
    """`count` filler entities in the base, in batches (names unique, none a corpus name)."""
    rng = random.Random(seed + 1)
    kg = uuid.uuid4()
    names: dict[str, None] = {}
    while len(names) < count:
        last = rng.choice(surnames) if rng.random() < 0.1 else _word(rng, 9)
        names.setdefault(f"{_word(rng, 5)} {last}", None)
    rows = [{"name": n, "key": name_key(n), "id": str(uuid.uuid4())} for n in names]
    labels = [ENTITY_KEY_LABEL, entity_label(kb), entity_label(kg)]
    params: dict[str, Any] = {
        "kb": str(kb),
        "kg": str(kg),
        "labels": labels,
        "scope": base_scope(kb),
    }

    def write(tx: ManagedTransaction, batch: list[dict[str, str]]) -> None:
        tx.run(PRELOAD, rows=batch, **params).consume()

    with driver.session(database=settings.neo4j.database) as session:
        for start in range(0, len(rows), PRELOAD_BATCH):
            session.execute_write(write, rows[start : start + PRELOAD_BATCH])


def _pairs(groups: dict[str, list[int]]) -> set[tuple[int, int]]:
    """Every unordered pair of members of one group, as (smaller, larger)."""
    pairs: set[tuple[int, int]] = set()
    for members in groups.values():
        ordered = sorted(members)
        pairs.update((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :])
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=300)
    parser.add_argument("--mentions", type=int, default=3, help="documents per person")
    parser.add_argument("--homonyms", type=float, default=0.1, help="share of homonym people")
    parser.add_argument(
        "--families", type=float, default=0.0, help="share of people related to the one before"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--preload",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[0, 50000],
        help="comma-separated filler entity counts, one fresh base and run each",
    )
    parser.add_argument("--llm", action="store_true", help="ask the model about open pairs")
    parser.add_argument(
        "--variants", type=float, default=0.0, help="share of employers written out in full"
    )
    parser.add_argument(
        "--batch", type=int, default=1, help="documents written, then resolved together"
    )
    args = parser.parse_args()
    os.environ.update(services_env())
    settings = Settings()
    s = settings.resolution.model_copy(update={"llm_enabled": args.llm, "vector_candidates": 0})
    llm = LlmClient(settings.llm) if args.llm else None
    print_header("entity_resolution", vars(args))
    rng = random.Random(args.seed)
    people = _people(rng, args.entities, args.homonyms, args.families)
    mentions = [
        (p, rng.choice(FORMS) if i else "full") for p in people for i in range(args.mentions)
    ]
    rng.shuffle(mentions)
    driver = connect_driver(settings.neo4j)
    graph = Neo4jGraphStore(driver, settings.neo4j)
    graph.ensure_schema()
    store = Neo4jResolutionStore(driver, settings.neo4j)
    store.ensure_schema()
    run = _Run(driver, settings, graph, store, llm, s, args.variants, args.batch)
    medians: dict[int, float] = {}
    try:
        for preload in args.preload:
            medians[preload] = run.measure(people, mentions, preload, args.seed)
    finally:
        driver.close()
    smallest = min(medians)
    for preload, ms in medians.items():
        if preload != smallest:
            detail = f"{ms:.1f} ms against {medians[smallest]:.1f} ms per document"
            ratio = ms / medians[smallest]
            print_ratio(
                "resolution_ms_per_document", f"base_{preload}", f"base_{smallest}", ratio, detail
            )


@dataclass
class _Run:
    driver: Driver
    settings: Settings
    graph: Neo4jGraphStore
    store: Neo4jResolutionStore
    llm: LlmClient | None
    s: ResolutionSettings
    variants: float
    batch: int

    def measure(
        self, people: list[Person], mentions: list[tuple[Person, str]], preload: int, seed: int
    ) -> float:
        """Resolve the corpus in a fresh base of `preload` filler entities; print its lines and
        return the median ms per document."""
        kb = uuid.uuid4()
        self.graph.ensure_kb_indexes(kb)
        rng = random.Random(seed + 2)
        truth: dict[str, int] = {}
        seconds: list[float] = []
        calls = asked = 0
        try:
            if preload:
                surnames = [p.last for p in people]
                fill = partial(_preload, self.driver, self.settings, kb, preload, surnames, seed)
                _, took = timed(fill)
                print(f"# base_{preload}: preloaded {preload} entities in {took:.1f}s")
            for start in range(0, len(mentions), self.batch):
                docs = []
                for person, form in mentions[start : start + self.batch]:
                    doc = uuid.uuid4()
                    data = _document(person, form, rng, self.variants)
                    self.graph.write_chunk_graph(kb, doc, uuid.uuid4(), data)
                    truth[f"{doc}|{data.nodes[0].name}"] = person.pid
                    docs.append(doc)
                resolve = partial(resolve_documents, self.store, self.llm, self.s, kb, docs)
                (report, _), took = timed(resolve)
                seconds += [took / len(docs)] * len(docs)
                calls, asked = calls + report.llm_calls, asked + report.asked
            with self.driver.session(database=self.settings.neo4j.database) as session:
                rows = session.run(RESOLVED_OF_BASE, kb=str(kb)).data()
        finally:
            self.store.delete_knowledge_base(kb)
            self.graph.delete_knowledge_base(kb)
        _score(f"base_{preload}", truth, rows)
        tenth = max(len(seconds) // 10, 1)
        first, last = median(seconds[:tenth]), median(seconds[-tenth:])
        grown = f"first {first * 1000:.1f} ms, last {last * 1000:.1f} ms, {len(seconds)} documents"
        print_ratio(
            f"resolution_ms_per_document_base_{preload}", "last", "first", last / first, grown
        )
        if self.llm is not None:
            detail = f"{calls} calls for {len(seconds)} documents, {asked} pairs asked"
            per_doc = calls / len(seconds)
            print_ratio(
                f"resolution_llm_calls_per_document_base_{preload}", "calls", "1", per_doc, detail
            )
        return median(seconds) * 1000


def _score(name: str, truth: dict[str, int], rows: list[dict[str, Any]]) -> None:
    """Pairwise precision and recall of the merges over the corpus's person nodes."""
    index = {node: i for i, node in enumerate(truth)}
    predicted: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        if row["node"] in index:
            predicted[row["resolved"]].append(index[row["node"]])
    actual: dict[str, list[int]] = defaultdict(list)
    for node, pid in truth.items():
        actual[str(pid)].append(index[node])
    got, want = _pairs(predicted), _pairs(actual)
    right = len(got & want)
    precision = right / len(got) if got else 1.0
    recall = right / len(want) if want else 1.0
    detail = f"{right} right of {len(got)} merged pairs, {len(want)} true pairs"
    print_ratio(f"resolution_pairs_{name}", "precision", "1", precision, detail)
    print_ratio(f"resolution_pairs_{name}", "recall", "1", recall, detail)


if __name__ == "__main__":
    main()
