"""Why the cleanup left an extracted entity or relation out, counted per reason.

The counts of one answer add up over a document's chunks; the document keeps them (flat keys
`entities.<reason>` and `relations.<reason>`, see `DropCounts.flat`) and the API shows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from enum import StrEnum

from pydantic import Field

from graphrag.value_model import ValueModel

__all__ = ["DropCounts", "EntityDrop", "RelationDrop"]

_ENTITIES, _RELATIONS = "entities", "relations"
_SEPARATOR = "."


class EntityDrop(StrEnum):
    """Why an extracted entity was not kept."""

    PLACEHOLDER = "placeholder"  # a schema word or a prompt example's name the chunk lacks
    NO_NAME = "no_name"  # empty, or no letter nor digit (punctuation only)
    NAME_TOO_LONG = "name_too_long"  # over `extraction.max_name_chars`: a copied sentence
    OVER_CAP = "over_cap"  # past `extraction.max_nodes_per_chunk`


class RelationDrop(StrEnum):
    """Why an extracted relation was not kept."""

    UNKNOWN_END = "unknown_end"  # an end that is not one of the entities kept
    BAD_TYPE = "bad_type"  # empty, too long, or outside the KB's tags when they are strict
    SELF_LOOP = "self_loop"  # from an entity to itself
    OVER_CAP = "over_cap"  # past a cap (relations, or the nodes cap took an end away)


class DropCounts(ValueModel):
    """Entities and relations left out, per reason (reasons with no drop are absent)."""

    entities: dict[EntityDrop, int] = Field(default_factory=dict)
    relations: dict[RelationDrop, int] = Field(default_factory=dict)

    @classmethod
    def of(cls, entities: Counter[EntityDrop], relations: Counter[RelationDrop]) -> DropCounts:
        """The counts of two counters, zero entries left out."""
        return cls(
            entities={reason: n for reason, n in entities.items() if n > 0},
            relations={reason: n for reason, n in relations.items() if n > 0},
        )

    @property
    def dropped_entities(self) -> int:
        """Entities left out, all reasons together."""
        return sum(self.entities.values())

    @property
    def dropped_relations(self) -> int:
        """Relations left out, all reasons together."""
        return sum(self.relations.values())

    def flat(self) -> dict[str, int]:
        """The counts under flat keys (`entities.placeholder`...), as a document stores them."""
        flat = {f"{_ENTITIES}{_SEPARATOR}{reason}": n for reason, n in self.entities.items()}
        flat |= {f"{_RELATIONS}{_SEPARATOR}{reason}": n for reason, n in self.relations.items()}
        return flat

    @classmethod
    def from_flat(cls, stored: Mapping[str, object]) -> DropCounts:
        """The counts a document stored with `flat`; unknown keys (a reason renamed) are skipped."""
        entities: Counter[EntityDrop] = Counter()
        relations: Counter[RelationDrop] = Counter()
        for key, value in stored.items():
            kind, _, reason = key.partition(_SEPARATOR)
            if not isinstance(value, int):
                continue
            if kind == _ENTITIES and reason in EntityDrop.__members__.values():
                entities[EntityDrop(reason)] += value
            elif kind == _RELATIONS and reason in RelationDrop.__members__.values():
                relations[RelationDrop(reason)] += value
        return cls.of(entities, relations)
