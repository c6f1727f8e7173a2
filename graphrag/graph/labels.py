"""Neo4j labels built from ids: the only place where text becomes part of a label.

A label cannot be passed as a query parameter in index DDL or in `MATCH (n:Label)`, so it is
spliced into query text; these helpers make that safe. Every id is parsed as a UUID first and the
label is written from the parsed value, so nothing of the caller's string reaches the query.
Python's UUID parser also takes the braced (`{...}`), `urn:uuid:` and undashed forms; they give
the same label as the canonical form.
"""

from __future__ import annotations

from uuid import UUID

__all__ = ["ENTITY_KEY_LABEL", "base_scope", "entity_label"]

# Every document entity also carries this label, which holds the (kg, name) uniqueness
# constraint; the namespace labels stay what they are per knowledge base and per document.
ENTITY_KEY_LABEL = "GraphEntity"


def entity_label(raw_id: str | UUID) -> str:
    """`ENTITY` followed by the id with underscores for dashes; ValueError unless a real UUID."""
    uid = UUID(str(raw_id))  # ValueError unless a real uuid
    return "ENTITY" + str(uid).replace("-", "_")


def base_scope(raw_id: str | UUID) -> str:
    """The one-token tag of a base in its nodes' word index: `k` and the id's 32 hex digits."""
    return "k" + UUID(str(raw_id)).hex
