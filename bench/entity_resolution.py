"""Entity resolution on a generated corpus of known aliases, abbreviations, typos and homonyms.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/entity_resolution.py [--entities 300 --seed 7]

Seeded generation: `--entities` people, each with an employer and a city of its own; one
document per mention, naming the person in one form (full name, initials, a title, a typo, the
surname alone) with one or two of its neighbours. A share of the people are homonyms: two
people of one full name with different employers and cities. Each document's graph is written
with `Neo4jGraphStore.write_chunk_graph` under a fresh base and resolved with
`resolve_document`, the rules alone (no model, no name vectors), one document after the other.

Lines:
- `resolution_pairs: precision/1` and `recall/1`: pairwise, over the people's document nodes
  (two nodes of one person in one resolved entity: a true merge);
- `resolution_ms_per_document: last/first`: the median time of a document's run over the last
  tenth of the documents against the first tenth (the base grows in between; 1.00x: no growth).
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

from bench.harness import median, print_header, print_ratio, services_env, timed
from graphrag.graph.models import GraphData, GraphNode, GraphRelation
from graphrag.graph.neo4j_client import connect_driver
from graphrag.graph.neo4j_store import Neo4jGraphStore
from graphrag.graph.resolution.resolver import resolve_document
from graphrag.graph.resolution.store import Neo4jResolutionStore
from graphrag.settings import Settings

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


def _people(rng: random.Random, count: int, homonym_share: float) -> list[Person]:
    people: list[Person] = []
    for pid in range(count):
        if people and rng.random() < homonym_share:
            twin = people[-1]
            first, last = twin.first, twin.last  # same name, another person
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


def _document(person: Person, form: str, rng: random.Random) -> GraphData:
    name = _name(person, form, rng)
    around = [("works_at", person.employer), ("lives_in", person.city)]
    chosen = around if rng.random() < 0.5 else [rng.choice(around)]
    nodes = [GraphNode(name=name)] + [GraphNode(name=other) for _, other in chosen]
    relations = [GraphRelation(node1=name, node2=other, type=kind) for kind, other in chosen]
    return GraphData(nodes=nodes, relations=relations)


def _pairs(groups: dict[str, list[int]]) -> set[tuple[int, int]]:
    return {
        (a, b)
        for members in groups.values()
        for i, a in enumerate(members)
        for b in members[i + 1 :]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entities", type=int, default=300)
    parser.add_argument("--mentions", type=int, default=3, help="documents per person")
    parser.add_argument("--homonyms", type=float, default=0.1, help="share of homonym people")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.environ.update(services_env())
    settings = Settings()
    s = settings.resolution.model_copy(update={"llm_enabled": False, "vector_candidates": 0})
    print_header("entity_resolution", vars(args))
    rng = random.Random(args.seed)
    people = _people(rng, args.entities, args.homonyms)
    mentions = [
        (p, rng.choice(FORMS) if i else "full") for p in people for i in range(args.mentions)
    ]
    rng.shuffle(mentions)
    driver = connect_driver(settings.neo4j)
    graph = Neo4jGraphStore(driver, settings.neo4j)
    graph.ensure_schema()
    store = Neo4jResolutionStore(driver, settings.neo4j)
    store.ensure_schema()
    kb = uuid.uuid4()
    graph.ensure_kb_indexes(kb)
    truth: dict[str, int] = {}
    seconds: list[float] = []
    try:
        for person, form in mentions:
            doc = uuid.uuid4()
            data = _document(person, form, rng)
            graph.write_chunk_graph(kb, doc, uuid.uuid4(), data)
            truth[f"{doc}|{data.nodes[0].name}"] = person.pid
            _, took = timed(partial(resolve_document, store, None, s, kb, doc))
            seconds.append(took)
        with driver.session(database=settings.neo4j.database) as session:
            rows = session.run(
                "MATCH (n:GraphEntity)-[:RESOLVED_AS]->(r:ResolvedEntity {kb: $kb}) "
                "RETURN n.kg + '|' + n.name AS node, r.id AS resolved",
                kb=str(kb),
            ).data()
    finally:
        store.delete_knowledge_base(kb)
        graph.delete_knowledge_base(kb)
        driver.close()
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
    print_ratio("resolution_pairs", "precision", "1", precision, detail)
    print_ratio("resolution_pairs", "recall", "1", recall, detail)
    tenth = max(len(seconds) // 10, 1)
    first, last = median(seconds[:tenth]), median(seconds[-tenth:])
    grown = f"first {first * 1000:.1f} ms, last {last * 1000:.1f} ms, {len(seconds)} documents"
    print_ratio("resolution_ms_per_document", "last", "first", last / first, grown)


if __name__ == "__main__":
    main()
