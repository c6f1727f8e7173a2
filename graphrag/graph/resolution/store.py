"""Entity resolution in Neo4j: documents' profiles and candidates read and their plans written
(a run's documents in one round trip each), a document's contribution withdrawn, and an
administrator's audit, merge and split."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from neo4j import Driver, ManagedTransaction

from graphrag.errors import GraphStoreError
from graphrag.graph.labels import base_scope
from graphrag.graph.names import name_tokens
from graphrag.graph.neo4j_tx import Rows, run_statements, run_transaction
from graphrag.graph.resolution import cypher
from graphrag.graph.resolution.models import Candidate, EntityProfile
from graphrag.graph.resolution.name_match import longest_word, strip_titles
from graphrag.graph.resolution.planner import ResolutionPlan
from graphrag.settings import Neo4jSettings, ResolutionSettings

__all__ = ["KeyNode", "Neo4jResolutionStore", "Withdrawal", "word_query"]

_WRITE = "resolution write"
_READ = "resolution read"


class Withdrawal:
    """What removing a document's resolution left to do: the documents to resolve again and the
    resolved entities to remove if no member is left once its nodes are gone."""

    def __init__(self, documents: Sequence[str], resolved: Sequence[str]) -> None:
        self.documents = [uuid.UUID(d) for d in documents]
        self.resolved = list(resolved)


class KeyNode:
    """A document node of one key: its document, name and resolved entity (if any)."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.kg = str(row["kg"])
        self.name = str(row["name"])
        self.key = str(row["key"])
        self.resolved = None if row.get("resolved") is None else str(row["resolved"])


class Neo4jResolutionStore:
    """Reads and writes of entity resolution, on the process's driver."""

    def __init__(self, driver: Driver, settings: Neo4jSettings) -> None:
        self.driver = driver
        self.settings = settings

    def ensure_schema(self) -> None:
        """Uniqueness of resolved entity ids and of pins; the base index of resolved entities."""
        for ddl in (
            cypher.RESOLVED_ID_CONSTRAINT,
            cypher.RESOLVED_KB_INDEX,
            cypher.PIN_KEY_CONSTRAINT,
        ):
            self._run(ddl, {}, write=True)

    def _run(self, query: str, params: dict[str, Any], *, write: bool) -> Rows:
        action = _WRITE if write else _READ
        return run_statements(
            self.driver, self.settings, [(query, params)], write=write, action=action
        )[0]

    def document_profiles(
        self, kb_id: uuid.UUID, knowledge_ids: Sequence[uuid.UUID], s: ResolutionSettings
    ) -> dict[str, list[EntityProfile]]:
        """Per document (in the order given, those with any), its unresolved nodes, at most
        `max_entities_per_document` of each."""
        rows = self._run(
            cypher.DOCUMENT_PROFILES,
            {
                "kb": str(kb_id),
                "batch": {"kgs": [str(k) for k in knowledge_ids]},
                "max_entities": s.max_entities_per_document,
                "max_neighbours": s.max_neighbours,
                "max_attributes": s.prompt_attributes,
            },
            write=False,
        )
        profiles: dict[str, list[EntityProfile]] = {}
        for r in rows:
            profiles.setdefault(str(r["kg"]), []).append(
                EntityProfile(
                    name=str(r["name"]),
                    key=str(r["key"]),
                    attributes=tuple(str(a) for a in r["attributes"]),
                    neighbours=frozenset(str(k) for k in r["neighbours"]),
                    single=single_targets(r["typed"]),
                    related=_typed(r["typed"], s.max_neighbours),
                    pinned_to=None if r["pinned_to"] is None else str(r["pinned_to"]),
                    kept_from=frozenset(str(x) for x in r["kept_from"]),
                )
            )
        return profiles

    def candidates(
        self,
        kb_id: uuid.UUID,
        profiles: Mapping[str, Sequence[EntityProfile]],
        s: ResolutionSettings,
    ) -> dict[str, dict[str, list[Candidate]]]:
        """Per document and profile name, the base's resolved entities worth comparing, best
        found first, in one read for all the documents (a candidate's details read once)."""
        scope = base_scope(kb_id)
        rows = [
            {"kg": kg, "name": p.name, "key": p.key, "lucene": word_query(p.key, scope, s)}
            for kg, own in profiles.items()
            for p in own
            if not p.pinned_to
        ]
        if not rows:
            return {}
        kgs = list(profiles)
        params: dict[str, Any] = {
            "batch": {"rows": rows, "kgs": kgs},
            "kb": str(kb_id),
            "max_candidates": s.max_candidates,
            "word_limit": s.word_candidates,
            "probe": s.vector_probe,
            "vector_min": s.vector_min_score,
            "vector_limit": s.vector_candidates,
            "neighbour_limit": s.neighbour_candidates,
            "max_instances": s.max_instances_read,
            "max_members": s.max_members,
            "max_neighbours": s.max_neighbours,
            "max_attributes": s.prompt_attributes,
        }
        query = cypher.candidate_query(
            words=s.word_candidates > 0, vectors=False, neighbours=s.neighbour_candidates > 0
        )
        (first,) = self._run(query, params, write=False)
        scores, details = _scores(first["rows"]), _details(first["details"], s)
        # Name vectors are the costliest read (the vector index all bases share): asked only for
        # the entities the other branches left without a candidate.
        unmatched = [row for row in rows if not scores.get((row["kg"], row["name"]))]
        if unmatched and s.vector_candidates > 0:
            query = cypher.candidate_query(words=False, vectors=True, neighbours=False)
            batch = {"rows": unmatched, "kgs": kgs}
            (near,) = self._run(query, {**params, "batch": batch}, write=False)
            scores.update(_scores(near["rows"]))
            details.update(_details(near["details"], s))
        result: dict[str, dict[str, list[Candidate]]] = {}
        for (kg, name), by_id in scores.items():
            result.setdefault(kg, {})[name] = [
                Candidate(
                    resolved_id=rid,
                    name=details[rid]["name"],
                    members=details[rid]["members"],
                    attributes=details[rid]["attributes"],
                    neighbours=details[rid]["neighbours"],
                    vector_score=score,
                    single=details[rid]["single"],
                    related=details[rid]["related"],
                )
                for rid, score in by_id.items()
                if rid in details
            ]
        return result

    def write_plans(self, kb_id: uuid.UUID, plans: Mapping[str, ResolutionPlan]) -> None:
        """The links, then the homonym records, of the documents' plans, in one transaction."""
        links = [
            {
                "kg": kg,
                "name": link.name,
                "target": link.target,
                "canonical": link.canonical,
                "rule": link.rule,
                "score": link.score,
                "reason": link.reason,
                "documents": list(link.documents),
                "manual": link.manual,
            }
            for kg, plan in plans.items()
            for link in plan.links
        ]
        apart = [
            {
                "kg": kg,
                "name": a.name,
                "target": a.target,
                "rule": a.rule,
                "reason": a.reason,
                "manual": False,
            }
            for kg, plan in plans.items()
            for a in plan.apart
        ]
        if not links and not apart:
            return
        kb = str(kb_id)

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.WRITE_LINKS, batch={"links": links}, kb=kb).consume()
            if apart:
                tx.run(cypher.WRITE_APART, batch={"apart": apart}, kb=kb).consume()

        run_transaction(self.driver, self.settings, work, write=True, action=_WRITE)

    def withdraw_document(self, knowledge_id: uuid.UUID) -> Withdrawal:
        """Remove the automatic links that only this document justified (before its nodes go)."""
        row = self._run(cypher.WITHDRAW_DOCUMENT, {"kg": str(knowledge_id)}, write=True)
        if not row:
            return Withdrawal([], [])
        return Withdrawal(row[0]["documents"], row[0]["resolved"])

    def remove_orphans(self, resolved: Sequence[str]) -> None:
        """Resolved entities left without a member (and not pinned) go."""
        if resolved:
            self._run(cypher.DELETE_ORPHAN_RESOLVED, {"ids": list(resolved)}, write=True)

    def forget_document(self, kb_id: uuid.UUID, knowledge_id: uuid.UUID) -> None:
        """An administrator's pins of a document that is gone for good."""
        self._run(cypher.DELETE_PINS, {"kb": str(kb_id), "kg": str(knowledge_id)}, write=True)

    def delete_knowledge_base(self, kb_id: uuid.UUID) -> None:
        """Every resolved entity and pin of the base, in batches."""
        row = self._run(
            cypher.DELETE_BASE_RESOLUTION,
            {"kb": str(kb_id), "batch_size": self.settings.delete_batch_size},
            write=True,
        )[0]
        if row["errorMessages"]:
            raise GraphStoreError("resolution delete failed", errors=row["errorMessages"])

    def key_nodes(
        self, kb_id: uuid.UUID, key: str, knowledge_ids: Sequence[uuid.UUID] | None, limit: int
    ) -> list[KeyNode]:
        """The document nodes of one key (of some documents only, when given)."""
        kgs = None if knowledge_ids is None else [str(k) for k in knowledge_ids]
        rows = self._run(
            cypher.KEY_NODES,
            {"kb": str(kb_id), "key": key, "kgs": kgs, "limit": limit},
            write=False,
        )
        return [KeyNode(r) for r in rows]

    def place(
        self,
        kb_id: uuid.UUID,
        nodes: Sequence[KeyNode],
        target: str,
        name: str,
        apart: Sequence[str],
        rule: str,
        reason: str,
    ) -> None:
        """An administrator's decision: `nodes` linked to `target` (made if need be) and kept
        apart from `apart`, pinned so that a re-parse places them the same way."""
        rows = [{"kg": n.kg, "name": n.name, "key": n.key, "apart": list(apart)} for n in nodes]
        kb = str(kb_id)
        params: dict[str, Any] = {"rows": rows, "kb": kb, "target": target, "name": name}

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.MANUAL_LINK, **params, rule=rule, reason=reason).consume()
            tx.run(cypher.PIN, **params).consume()

        run_transaction(self.driver, self.settings, work, write=True, action=_WRITE)

    def audit(self, kb_id: uuid.UUID, key: str, limit: int) -> dict[str, Any]:
        """One key's resolution: its nodes' resolved entities with their members, and the
        homonyms kept apart."""
        return self._run(cypher.AUDIT, {"kb": str(kb_id), "key": key, "limit": limit}, write=False)[
            0
        ]


def _scores(found: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, float]]:
    """Per document and profile name, its candidates' resolved ids and vector scores, in the
    order found."""
    return {
        (str(r["kg"]), str(r["name"])): {str(f["id"]): float(f["score"]) for f in r["found"]}
        for r in found
    }


def _details(rows: Sequence[dict[str, Any]], s: ResolutionSettings) -> dict[str, dict[str, Any]]:
    """Per resolved id, what the rules compare of it, each part bounded."""
    return {
        str(r["id"]): {
            "name": str(r["name"]),
            "members": tuple((str(m["kg"]), str(m["name"])) for m in r["members"]),
            "single": tuple(single_targets(m["typed"]) for m in r["members"]),
            "related": _typed(
                [pair for m in r["members"] for pair in m["typed"]], s.max_neighbours
            ),
            "attributes": _flat(r["attributes"], s.prompt_attributes),
            # keys and resolved ids: up to two tokens per neighbour
            "neighbours": frozenset(_flat(r["neighbours"], 2 * s.max_neighbours)),
        }
        for r in rows
    }


def word_query(key: str, scope: str, s: ResolutionSettings) -> str:
    """The full-text query of a key's word candidates in one base: its longest word (titles
    aside) required, up to `word_query_terms` of its other words ranking the keys that hold
    them first; "" for a key without a word."""
    words = strip_titles(name_tokens(key), s.titles)
    longest = longest_word(words, ())
    if not longest:
        return ""
    others = [w for w in dict.fromkeys(words) if w != longest][: s.word_query_terms]
    return f"+scope:{scope} +key:{longest}" + "".join(f" key:{w}" for w in others)


def single_targets(typed: Sequence[Sequence[str]]) -> tuple[tuple[str, str], ...]:
    """The (relation type and direction, target key) of the relations with one target."""
    targets: dict[str, set[str]] = {}
    for kind, key in typed:
        targets.setdefault(str(kind), set()).add(str(key))
    return tuple(sorted((kind, keys.pop()) for kind, keys in targets.items() if len(keys) == 1))


def _typed(typed: Sequence[Sequence[str]], limit: int) -> tuple[tuple[str, str], ...]:
    """The (relation type and direction, key) pairs, each once, in order, at most `limit`."""
    seen = dict.fromkeys((str(kind), str(key)) for kind, key in typed)
    return tuple(seen)[:limit]


def _flat(lists: Sequence[Sequence[Any]], limit: int) -> tuple[str, ...]:
    """The lists' items, each once, in order, at most `limit`."""
    seen = dict.fromkeys(str(item) for items in lists for item in items)
    return tuple(seen)[:limit]
