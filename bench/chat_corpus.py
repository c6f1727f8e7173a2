"""A generated knowledge base for the chat benchmark: documents of chunks that name entities.

Text: every chunk is six sentences from a small vocabulary, about 400 characters (the default
chunk size is 512). Three are "filler" sentences drawn from a pool; three name the chunk's
entities: one sentence each about two of them, and one relation sentence between two of them.
The same entity name may appear in several documents (it is then one node per document, as
the store keys nodes on name and document).

Graph: the entities of a chunk list it in their `chunks`, the relation of the relation
sentence lists it in its own. Entity i of a document leads its chunks i, i + n, ... (round
robin), so with at least as many chunks as entities every entity has a relation and a chunk.

Questions: search-style phrasings of one chunk's sentences ("<entity> repaired the old dam",
"<entity> supplies parts to <entity>"), whose words all occur in the corpus, each with the entity
names an extraction model would return for it.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = [
    "Corpus",
    "CorpusShape",
    "GenChunk",
    "GenEntity",
    "GenRelation",
    "Question",
    "chunk_vectors",
    "make_corpus",
]

FloatMatrix = npt.NDArray[np.float32]

_SUBJECTS = [
    "The survey team", "The harbour board", "Each inspector", "The committee", "The night shift",
    "A contractor", "The city council", "The audit office", "Our engineers", "The safety board",
]  # fmt: skip
_VERBS = [
    "inspected", "repaired", "replaced", "documented", "reviewed", "measured", "approved",
    "upgraded", "closed", "tested", "cleaned", "painted",
]  # fmt: skip
_ADJECTIVES = [
    "northern", "old", "main", "spare", "coastal", "eastern", "new", "upper", "central", "small",
]  # fmt: skip
_THINGS = [
    "bridge", "cooling loop", "grain silo", "pump station", "archive", "turbine", "harbour crane",
    "water tower", "rail depot", "sensor array", "boiler", "warehouse", "substation", "ferry",
    "canal lock", "dam", "pipeline", "reactor hall", "server room", "loading dock",
]  # fmt: skip
_TAILS = [
    "after the storm", "in early spring", "for the third time", "without delay",
    "during the night", "before the audit", "in 1998", "last winter", "ahead of schedule",
    "under budget",
]  # fmt: skip
_RELATIONS = {
    "SUPPLIES": "supplies parts to",
    "PARTNERS_WITH": "partners with",
    "OWNS_STAKE_IN": "owns a stake in",
    "MAINTAINS": "maintains equipment for",
    "COMPETES_WITH": "competes with",
}
_SYLLABLES = [
    "ka", "lo", "ven", "dor", "ri", "mar", "tes", "al", "no", "vik", "sun", "bel", "tor", "ean",
    "qui", "ro", "sel", "ma", "dun", "fi", "gar", "has", "lin", "op",
]  # fmt: skip
_KINDS = [
    "Systems", "Logistics", "Foundry", "Labs", "Holdings", "Works", "Group", "Energy", "Mills",
    "Transport", "Robotics", "Textiles",
]  # fmt: skip
# Distinct names over entities: below 1, some names recur across documents, as in real bases.
_NAME_POOL_SHARE = 0.7
_WINDOW = 8  # a chunk's other two entities are among the next _WINDOW - 1 of the document
_FILLERS_PER_CHUNK = 3
# Norm of the Gaussian noise added to a chunk's mixed vector before normalisation.
_NOISE_NORM = 0.1
_MIX_WEIGHTS = (0.5, 1.5)  # uniform range of each filler's weight in a chunk's vector
_VECTOR_BLOCK = 10_000  # chunk vectors computed per numpy step (bounds the memory used)


@dataclass(frozen=True)
class CorpusShape:
    chunks: int
    entities: int
    docs: int
    pool_sentences: int
    questions: int
    seed: int


@dataclass(frozen=True)
class Question:
    text: str
    entities: list[str]


@dataclass(frozen=True)
class GenChunk:
    """A chunk's text, its filler sentences (pool indexes) and the questions it can answer."""

    id: uuid.UUID
    doc: int
    seq: int
    content: str
    fillers: tuple[int, ...]
    asks: tuple[Question, Question]


@dataclass
class GenEntity:
    name: str
    doc: int
    kind: str
    chunks: list[str] = field(default_factory=list)


@dataclass
class GenRelation:
    source: str
    target: str
    type: str
    doc: int
    chunks: list[str] = field(default_factory=list)


@dataclass
class Corpus:
    doc_ids: list[uuid.UUID]
    pool: list[str]
    chunks: list[GenChunk]
    entities: list[GenEntity]
    relations: list[GenRelation]
    questions: list[Question]


def _filler(rng: random.Random) -> str:
    return (
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} the {rng.choice(_ADJECTIVES)} "
        f"{rng.choice(_THINGS)} {rng.choice(_TAILS)}."
    )


def _pool(rng: random.Random, size: int) -> list[str]:
    found: dict[str, None] = {}
    while len(found) < size:
        found.setdefault(_filler(rng), None)
    return list(found)


def _names(rng: random.Random, count: int) -> list[tuple[str, str]]:
    """`count` distinct (name, kind) pairs such as ("Kalovik Foundry", "Foundry")."""
    found: dict[str, str] = {}
    while len(found) < count:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize()
        kind = rng.choice(_KINDS)
        found.setdefault(f"{word} {kind}", kind)
    return list(found.items())


def _action(rng: random.Random) -> str:
    return f"{rng.choice(_VERBS)} the {rng.choice(_ADJECTIVES)} {rng.choice(_THINGS)}"


class _Document:
    """One document's entities and relations, filled in chunk by chunk."""

    def __init__(self, index: int, entities: list[GenEntity]) -> None:
        self.index = index
        self.entities = entities
        self.relations: dict[tuple[str, str, str], GenRelation] = {}

    def chunk(self, rng: random.Random, pool: Sequence[str], seq: int) -> GenChunk:
        """Chunk `seq`: led by entity `seq`, with two of the next few entities (neighbouring
        chunks share entities, as in real documents)."""
        n = len(self.entities)
        lead = self.entities[seq % n]
        second, third = (self.entities[(seq + k) % n] for k in rng.sample(range(1, _WINDOW), 2))
        rel_type = rng.choice(list(_RELATIONS))
        fillers = tuple(rng.sample(range(len(pool)), _FILLERS_PER_CHUNK))
        lead_action = f"{lead.name} {_action(rng)}"
        relation_text = f"{lead.name} {_RELATIONS[rel_type]} {second.name}"
        sentences = [
            pool[fillers[0]],
            f"{lead_action} {rng.choice(_TAILS)}.",
            pool[fillers[1]],
            f"{relation_text}.",
            pool[fillers[2]],
            f"{third.name} {_action(rng)} {rng.choice(_TAILS)}.",
        ]
        chunk_id = uuid.uuid4()
        for entity in (lead, second, third):
            entity.chunks.append(str(chunk_id))
        relation = self.relations.setdefault(
            (lead.name, second.name, rel_type),
            GenRelation(lead.name, second.name, rel_type, self.index),
        )
        relation.chunks.append(str(chunk_id))
        asks = (
            Question(lead_action, [lead.name]),
            Question(relation_text, [lead.name, second.name]),
        )
        return GenChunk(chunk_id, self.index, seq, " ".join(sentences), fillers, asks)


def make_corpus(shape: CorpusShape) -> Corpus:
    """Documents of equal size, their entities, relations and chunk texts, and the questions."""
    rng = random.Random(shape.seed)
    pool = _pool(rng, shape.pool_sentences)
    names = _names(rng, max(_WINDOW, int(shape.entities * _NAME_POOL_SHARE)))
    per_doc_entities = min(len(names), max(_WINDOW, shape.entities // shape.docs))
    per_doc_chunks = max(1, shape.chunks // shape.docs)
    chunks: list[GenChunk] = []
    documents: list[_Document] = []
    for index in range(shape.docs):
        picked = rng.sample(names, per_doc_entities)
        document = _Document(index, [GenEntity(name, index, kind) for name, kind in picked])
        chunks.extend(document.chunk(rng, pool, seq) for seq in range(per_doc_chunks))
        documents.append(document)
    # Alternate the two kinds of question: one entity, then a relation between two.
    asked = rng.sample(chunks, min(shape.questions, len(chunks)))
    return Corpus(
        doc_ids=[uuid.uuid4() for _ in range(shape.docs)],
        pool=pool,
        chunks=chunks,
        entities=[e for d in documents for e in d.entities if e.chunks],
        relations=[r for d in documents for r in d.relations.values()],
        questions=[c.asks[i % 2] for i, c in enumerate(asked)],
    )


def chunk_vectors(corpus: Corpus, pool_vectors: FloatMatrix, seed: int) -> FloatMatrix:
    """Unit vectors: each chunk's filler vectors mixed with random weights, plus a little noise.

    The pool vectors come from the real embedder, so chunk vectors keep the model's anisotropic,
    clustered geometry (what HNSW's speed depends on), unlike uniform random unit vectors.
    """
    rng = np.random.default_rng(seed)
    picks = np.array([c.fillers for c in corpus.chunks], dtype=np.int64)
    dim = pool_vectors.shape[1]
    out = np.empty((len(picks), dim), dtype=np.float32)
    for start in range(0, len(picks), _VECTOR_BLOCK):
        block = picks[start : start + _VECTOR_BLOCK]
        weights = rng.uniform(*_MIX_WEIGHTS, size=block.shape).astype(np.float32)
        mixed = np.einsum("nk,nkd->nd", weights, pool_vectors[block])
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        noisy = mixed + rng.normal(0.0, _NOISE_NORM / np.sqrt(dim), size=mixed.shape)
        out[start : start + len(block)] = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
    return out
