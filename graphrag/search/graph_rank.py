"""Chunks ranked by what the knowledge graph says about a question.

The subgraph read around the question's name keys and the entities of the best passages of the
other searches becomes an undirected graph of entity nodes (one per name key, so same-name nodes
of several documents are one node: the cross-document link) and chunk nodes. Entity-chunk edges
come from where an entity was read, entity-entity edges from relations. Two rankers score the
chunk nodes:

- `ppr`: personalized PageRank seeded by the question's entities, each weighted by how specific
  it is (1 / the number of documents naming it), and by the best passages of the other searches
  (passage seeds). From a chunk the walk follows its entities in proportion to their
  specificity, so it steps from a passage to the other documents naming its rare entities, not
  to every document naming "United States". Bounded power iterations on a capped subgraph.
- `entity_overlap`: a chunk scores the weights of the seeds read in it, a decayed share of the
  seeds whose related entities were read in it, and the specificity of the entities it shares
  with a passage seed (one step of spreading activation).

Every ranked chunk carries its evidence: the entities that led to it, the path (entity,
relation, entity) when it was reached through a relation, the passage it was reached from when
it shares an entity with one, and its graph score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from graphrag.graph.neighbourhood import KeyInstance, MatchKind

__all__ = [
    "ChunkEvidence",
    "EntityChunkGraph",
    "GraphRanker",
    "PprParams",
    "build_graph",
    "personalized_pagerank",
    "rank_chunks",
]


class GraphRanker(StrEnum):
    """How chunks reached through the graph are ordered before fusion."""

    PPR = "ppr"
    ENTITY_OVERLAP = "entity_overlap"


@dataclass(frozen=True)
class PprParams:
    damping: float  # probability of following an edge rather than jumping back to a seed
    max_iterations: int
    tolerance: float  # L1 change between iterations under which the walk has settled
    neighbour_decay: float  # entity_overlap: share of a seed passed through one relation


@dataclass(frozen=True)
class ChunkEvidence:
    """Why the graph ranks a chunk: its score, the seeds behind it, the path that led there and
    the passage seed it shares that entity with (None: reached from the question's entities)."""

    chunk_id: str
    score: float
    seeds: tuple[str, ...]
    path: tuple[str, ...]
    via_chunk: str | None = None


_ENTITY, _CHUNK = "e:", "c:"


@dataclass
class EntityChunkGraph:
    """Nodes by id (`e:<key>` or `c:<chunk id>`), undirected edges, names, parents, the
    specificity of each entity and the passage each passage-found entity came from."""

    max_nodes: int
    index: dict[str, int] = field(default_factory=dict)
    edges: set[tuple[int, int]] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)  # entity key -> a display name
    # key -> (the key it was reached from, the relation, whether the relation points to it)
    parents: dict[str, tuple[str, str, bool]] = field(default_factory=dict)
    specificity: dict[str, float] = field(default_factory=dict)  # key -> 1 / documents naming it
    bridges: dict[str, str] = field(default_factory=dict)  # key -> passage chunk naming it
    truncated: bool = False

    def _node(self, node_id: str) -> int | None:
        found = self.index.get(node_id)
        if found is not None:
            return found
        if len(self.index) >= self.max_nodes:
            self.truncated = True
            return None
        self.index[node_id] = len(self.index)
        return self.index[node_id]

    def entity(self, key: str, name: str) -> int | None:
        self.names.setdefault(key, name)
        return self._node(_ENTITY + key)

    def link(self, a: int | None, b: int | None) -> None:
        if a is not None and b is not None and a != b:
            self.edges.add((min(a, b), max(a, b)))

    def link_chunks(self, entity: int | None, chunks: Iterable[str]) -> None:
        if entity is None:
            return
        for chunk in chunks:
            self.link(entity, self._node(_CHUNK + chunk))

    def arrays(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """Edges in both directions: sources, targets and weights. A step from a chunk to an
        entity weighs the entity's specificity; every other step weighs 1."""
        if not self.edges:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.float64)
        pairs = np.array(sorted(self.edges), dtype=np.int64)
        sources = np.concatenate([pairs[:, 0], pairs[:, 1]])
        targets = np.concatenate([pairs[:, 1], pairs[:, 0]])
        weight_of = np.ones(len(self.index), dtype=np.float64)
        is_chunk = np.zeros(len(self.index), dtype=bool)
        for node_id, i in self.index.items():
            if node_id.startswith(_CHUNK):
                is_chunk[i] = True
            else:
                weight_of[i] = self.specificity.get(node_id[len(_ENTITY) :], 1.0)
        weights = np.where(is_chunk[sources], weight_of[targets], 1.0)
        return sources, targets, weights


def build_graph(rows: Iterable[KeyInstance], max_nodes: int) -> EntityChunkGraph:
    """The entity/chunk graph of neighbourhood rows, at most `max_nodes` nodes."""
    graph = EntityChunkGraph(max_nodes=max_nodes)
    for row in rows:
        entity = graph.entity(row.key, row.name)
        graph.specificity[row.key] = 1.0 / max(row.instances, 1)
        for match in row.matches:
            if match.kind is MatchKind.PASSAGE:
                graph.bridges.setdefault(row.key, match.name)
        graph.link_chunks(entity, row.chunks)
        for link in row.neighbours:
            if not link.key or link.key == row.key:
                continue
            neighbour = graph.entity(link.key, link.name)
            graph.link(entity, neighbour)
            graph.parents.setdefault(link.key, (row.key, link.type, link.outgoing))
            graph.link_chunks(neighbour, link.chunks)
    return graph


def personalized_pagerank(
    size: int,
    sources: NDArray[np.int64],
    targets: NDArray[np.int64],
    reset: NDArray[np.float64],
    params: PprParams,
    weights: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Stationary visit probabilities of a walk that restarts at `reset` (sums to 1).

    A node passes its mass along its edges in proportion to their `weights` (all 1 when None).
    The mass of a node without edges goes back to the seeds, so the result still sums to 1.
    """
    edge_weights = np.ones(len(sources), dtype=np.float64) if weights is None else weights
    degree = np.bincount(sources, weights=edge_weights, minlength=size).astype(np.float64)
    share = np.zeros(len(sources), dtype=np.float64)
    if len(sources):
        share = edge_weights / degree[sources]
    dangling = degree == 0
    scores = reset.copy()
    for _ in range(params.max_iterations):
        spread = np.bincount(targets, weights=scores[sources] * share, minlength=size)
        lost = float(scores[dangling].sum())
        updated = (1.0 - params.damping) * reset + params.damping * (spread + lost * reset)
        change = float(np.abs(updated - scores).sum())
        scores = updated
        if change < params.tolerance:
            break
    return scores


def _adjacent_entities(graph: EntityChunkGraph) -> dict[int, list[int]]:
    """For each chunk node, its entity neighbours."""
    chunk_nodes = {i for node_id, i in graph.index.items() if node_id.startswith(_CHUNK)}
    adjacent: dict[int, list[int]] = {}
    for a, b in graph.edges:
        if b in chunk_nodes and a not in chunk_nodes:
            adjacent.setdefault(b, []).append(a)
        elif a in chunk_nodes and b not in chunk_nodes:
            adjacent.setdefault(a, []).append(b)
    return adjacent


def _evidence(
    graph: EntityChunkGraph, chunk: str, entity_key: str, seeds: Mapping[str, float], score: float
) -> ChunkEvidence:
    name = graph.names.get(entity_key, entity_key)
    if entity_key in seeds or entity_key not in graph.parents:
        via = None if entity_key in seeds else graph.bridges.get(entity_key)
        return ChunkEvidence(chunk, score, (name,), (name,), via if via != chunk else None)
    parent, relation, outgoing = graph.parents[entity_key]
    parent_name = graph.names.get(parent, parent)
    # The path is the relation as stored: (source, type, target).
    path = (parent_name, relation, name) if outgoing else (name, relation, parent_name)
    return ChunkEvidence(chunk, score, (parent_name,), path)


def _overlap_scores(
    graph: EntityChunkGraph,
    seeds: Mapping[str, float],
    passage_seeds: Mapping[str, float],
    decay: float,
) -> NDArray[np.float64]:
    """Seed weights on the entities, a decayed share on their related entities, the specificity
    of the entities of passage seeds (times the passage's weight), summed per chunk."""
    entity_weight = np.zeros(len(graph.index), dtype=np.float64)
    for key, (parent, _, _) in graph.parents.items():
        if parent in seeds and key not in seeds:
            entity_weight[graph.index[_ENTITY + key]] += decay * seeds[parent]
    for key, passage in graph.bridges.items():
        if key not in seeds:
            share = passage_seeds.get(passage, 0.0) * graph.specificity.get(key, 0.0)
            entity_weight[graph.index[_ENTITY + key]] += share
    for key, weight in seeds.items():
        entity_weight[graph.index[_ENTITY + key]] = weight
    scores = np.zeros(len(graph.index), dtype=np.float64)
    for chunk, entities in _adjacent_entities(graph).items():
        scores[chunk] = float(entity_weight[entities].sum())
    return scores


def rank_chunks(
    graph: EntityChunkGraph,
    seeds: Mapping[str, float],
    passage_seeds: Mapping[str, float],
    ranker: GraphRanker,
    params: PprParams,
) -> list[ChunkEvidence]:
    """Chunk nodes with a positive score, best first, with their evidence.

    `seeds` maps entity keys present in the graph to weights; `passage_seeds` maps chunk ids to
    weights (`ppr` restarts there too; `entity_overlap` weighs the entities they name). Seeds
    absent from the graph are ignored; weights need not sum to 1.
    """
    seeds = {k: w for k, w in seeds.items() if _ENTITY + k in graph.index and w > 0}
    passage_seeds = {c: w for c, w in passage_seeds.items() if _CHUNK + c in graph.index and w > 0}
    if not (seeds or passage_seeds):
        return []
    if ranker is GraphRanker.PPR:
        reset = np.zeros(len(graph.index), dtype=np.float64)
        for key, weight in seeds.items():
            reset[graph.index[_ENTITY + key]] += weight
        for chunk, weight in passage_seeds.items():
            reset[graph.index[_CHUNK + chunk]] += weight
        reset /= reset.sum()
        sources, targets, weights = graph.arrays()
        scores = personalized_pagerank(len(graph.index), sources, targets, reset, params, weights)
    else:
        scores = _overlap_scores(graph, seeds, passage_seeds, params.neighbour_decay)
    return _ranked(graph, scores, seeds)


def _ranked(
    graph: EntityChunkGraph, scores: NDArray[np.float64], seeds: Mapping[str, float]
) -> list[ChunkEvidence]:
    keys = {i: node_id[len(_ENTITY) :] for node_id, i in graph.index.items()}
    ranked: list[ChunkEvidence] = []
    for chunk_node, entities in _adjacent_entities(graph).items():
        score = float(scores[chunk_node])
        if score <= 0.0:
            continue
        best = max(entities, key=lambda e: (keys[e] in seeds, float(scores[e]), -e))
        chunk = keys[chunk_node]  # the slice of "c:<id>" is the same length as "e:"
        ranked.append(_evidence(graph, chunk, keys[best], seeds, score))
    ranked.sort(key=lambda ev: (-ev.score, ev.chunk_id))
    return ranked


def seed_weights(rows: Sequence[KeyInstance], keys: Iterable[str]) -> dict[str, float]:
    """Each matched key weighted by its specificity: 1 / the documents naming it in the base."""
    instances = {row.key: row.instances for row in rows}
    return {key: 1.0 / max(instances[key], 1) for key in keys if key in instances}
