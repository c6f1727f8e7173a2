"""Read the many JSON shapes local models give a graph into one raw form.

Models are asked for `{"nodes": [{"name", "attributes"}], "relations": [{"node1", "node2",
"type"}]}` but answer with other vocabularies (subject/predicate/object, source/target,
head/relation/tail, from/to/label, entities/edges/triples), a bare list, a single node or
relation, nodes as plain strings, node ids that relations refer to, or the whole graph wrapped in
a tool call. Keys are matched case-insensitively. Nothing is cleaned here: names, caps and tags
are the job of `graph_cleanup`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from graphrag.text_scan import split_on_any

__all__ = ["RawGraph", "RawNode", "RawRelation", "read_graph_value"]

NODE_LIST_KEYS = ("nodes", "entities", "entity_list", "vertices")
RELATION_LIST_KEYS = (
    "relations",
    "relationships",
    "edges",
    "triples",
    "triplets",
    "links",
    "facts",
)
# Keys of a tool call written as JSON: `{"name": "extract", "arguments": {...}}`.
CALL_KEYS = ("arguments", "parameters", "args", "input", "function")
# Keys under which a model nests the whole graph (only read on objects without a name).
WRAPPER_KEYS = (
    "graph",
    "knowledge_graph",
    "result",
    "output",
    "data",
    "response",
    "answer",
)
NAME_KEYS = ("name", "entity", "entity_name", "title", "text")
ID_KEYS = ("id", "node_id", "entity_id")
ATTRIBUTE_KEYS = (
    "attributes",
    "entity_attributes",
    "attrs",
    "attribute",
    "properties",
    "description",
    "entity_description",
    "details",
)
SOURCE_KEYS = (
    "node1",
    "source",
    "subject",
    "head",
    "entity1",
    "from",
    "src",
    "src_id",
    "source_entity",
    "source_id",
    "start_node",
    "start_node_id",
    "node_1",
    "entity_1",
)
TARGET_KEYS = (
    "node2",
    "target",
    "object",
    "tail",
    "entity2",
    "to",
    "tgt",
    "tgt_id",
    "target_entity",
    "target_id",
    "end_node",
    "end_node_id",
    "node_2",
    "entity_2",
)
TYPE_KEYS = (
    "type",
    "relation",
    "predicate",
    "label",
    "relationship",
    "relation_type",
    "relationship_type",
    "rel",
    "edge",
)
# "A -> works at -> B", "A -[works at]-> B", "A | works at | B"
_ARROWS = ("-[", "]->", "->")
_PIPES = ("|",)
_TRIPLE_LEN = 3
# Guards against pathological nesting; real answers are two or three levels deep.
_MAX_DEPTH = 6


@dataclass
class RawNode:
    """An entity as the model wrote it; `ref` is an id that relations may use instead of names."""

    name: str
    attributes: list[str] = field(default_factory=list)
    ref: str | None = None


@dataclass
class RawRelation:
    """A relation as the model wrote it; a missing type is an empty string."""

    node1: str
    node2: str
    type: str


@dataclass
class RawGraph:
    """Nodes and relations gathered from one or several JSON values, in reading order."""

    nodes: list[RawNode] = field(default_factory=list)
    relations: list[RawRelation] = field(default_factory=list)

    def add(self, other: RawGraph) -> None:
        """Append `other`'s nodes and relations."""
        self.nodes.extend(other.nodes)
        self.relations.extend(other.relations)


class _Expect(Enum):
    """What the list being read is supposed to hold, which settles ambiguous items."""

    ANY = "any"
    NODES = "nodes"
    RELATIONS = "relations"


def read_graph_value(value: Any, *, accept_bare_strings: bool = True) -> RawGraph | None:
    """The graph held by a decoded JSON value, or None when it has no graph shape.

    `accept_bare_strings=False` refuses a top-level list of plain strings: after a lenient
    repair, prose such as "I cannot [sorry]" decodes to `["sorry"]`, which is not an entity.
    """
    return _read(value, _Expect.ANY, accept_bare_strings, 0)


def _read(value: Any, expect: _Expect, bare_strings: bool, depth: int) -> RawGraph | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, str):
        return _read_encoded(value, bare_strings, depth)
    if isinstance(value, Mapping):
        return _read_mapping(_lower_keys(value), expect, bare_strings, depth)
    if isinstance(value, list):
        return _read_list(value, expect, bare_strings, depth)
    return None


def _read_encoded(text: str, bare_strings: bool, depth: int) -> RawGraph | None:
    """A JSON document inside a string (tool-call arguments are often sent that way)."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        decoded = json.loads(stripped)
    except (ValueError, RecursionError):  # bad JSON, or nested past the recursion limit
        return None
    return _read(decoded, _Expect.ANY, bare_strings, depth + 1)


def _lower_keys(value: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(key).strip().lower(): item for key, item in value.items()}


def _first(mapping: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if mapping.get(key) is not None:
            return mapping[key]
    return None


def _read_mapping(
    mapping: dict[str, Any], expect: _Expect, bare_strings: bool, depth: int
) -> RawGraph | None:
    if any(key in mapping for key in NODE_LIST_KEYS + RELATION_LIST_KEYS):
        return _read_graph_object(mapping, depth)
    if isinstance(mapping.get("tool_calls"), list):
        return _read_list(mapping["tool_calls"], _Expect.ANY, bare_strings, depth + 1)
    if _is_relation(mapping, expect):
        return RawGraph(relations=[_relation_from(mapping)])
    wrapped = _read_wrapped(mapping, bare_strings, depth)
    if wrapped is not None:
        return wrapped
    node = _node_from(mapping)
    return RawGraph(nodes=[node]) if node is not None else None


def _read_wrapped(mapping: dict[str, Any], bare_strings: bool, depth: int) -> RawGraph | None:
    """The graph inside a tool call's arguments or under a wrapper key such as "graph".

    An entity may carry an "input" or "data" field of its own: only a JSON object or a JSON
    string counts as a tool call's arguments, and wrapper keys are read on unnamed objects only.
    """
    candidates = [mapping[key] for key in CALL_KEYS if isinstance(mapping.get(key), str | Mapping)]
    if _first(mapping, NAME_KEYS) is None:
        candidates += [
            mapping[key]
            for key in WRAPPER_KEYS
            if isinstance(mapping.get(key), str | list | Mapping)
        ]
    for candidate in candidates:
        found = _read(candidate, _Expect.ANY, bare_strings, depth + 1)
        if found is not None:
            return found
    return None


def _read_graph_object(mapping: dict[str, Any], depth: int) -> RawGraph:
    """`{"nodes": ..., "relations": ...}` under any of their aliases; absent lists are empty."""
    graph = RawGraph()
    for keys, expect in ((NODE_LIST_KEYS, _Expect.NODES), (RELATION_LIST_KEYS, _Expect.RELATIONS)):
        for key in keys:
            items = mapping.get(key)
            if isinstance(items, Mapping):
                graph.add(_read_keyed(_lower_keys(items), items, expect, depth + 1))
            elif isinstance(items, list):
                graph.add(_read_list(items, expect, True, depth + 1) or RawGraph())
    return graph


def _read_list(
    items: list[Any], expect: _Expect, bare_strings: bool, depth: int
) -> RawGraph | None:
    graph = RawGraph()
    recognised = not items  # "[]" is a clear "nothing here"
    for item in items:
        found = _read_item(item, expect, bare_strings, depth)
        if found is not None:
            graph.add(found)
            recognised = True
    return graph if recognised else None


def _read_item(item: Any, expect: _Expect, bare_strings: bool, depth: int) -> RawGraph | None:
    if isinstance(item, str):
        if expect is _Expect.RELATIONS:
            relation = _relation_from_text(item)
            return RawGraph(relations=[relation]) if relation else None
        if not bare_strings:
            return None
        return RawGraph(nodes=[RawNode(name=item)])
    if isinstance(item, int | float) and not isinstance(item, bool) and expect is _Expect.NODES:
        return RawGraph(nodes=[RawNode(name=str(item))])
    if isinstance(item, list):
        relation = _relation_from_triple(item)
        return RawGraph(relations=[relation]) if relation else None
    if isinstance(item, Mapping):
        return _read_mapping(_lower_keys(item), expect, bare_strings, depth + 1)
    return None


def _is_relation(mapping: Mapping[str, Any], expect: _Expect) -> bool:
    """Both ends present; a named object without a type in a node list stays a node.

    The guard keeps `{"name": "WW2", "from": "1939", "to": "1945"}` an entity.
    """
    if _first(mapping, SOURCE_KEYS) is None or _first(mapping, TARGET_KEYS) is None:
        return False
    if _first(mapping, TYPE_KEYS) is not None:
        return True
    return expect is not _Expect.NODES and _first(mapping, NAME_KEYS) is None


def _relation_from(mapping: Mapping[str, Any]) -> RawRelation:
    return RawRelation(
        node1=_endpoint_name(_first(mapping, SOURCE_KEYS)),
        node2=_endpoint_name(_first(mapping, TARGET_KEYS)),
        type=_endpoint_name(_first(mapping, TYPE_KEYS)),
    )


def _endpoint_name(value: Any) -> str:
    """A relation end given as a string, a number, or an object with a name."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, Mapping):
        lowered = _lower_keys(value)
        return _endpoint_name(_first(lowered, NAME_KEYS + ID_KEYS))
    return ""


def _relation_from_triple(items: list[Any]) -> RawRelation | None:
    """`[subject, predicate, object]`."""
    if len(items) < _TRIPLE_LEN:
        return None
    subject, predicate, obj = (_endpoint_name(item) for item in items[:_TRIPLE_LEN])
    return RawRelation(node1=subject, node2=obj, type=predicate)


def _relation_from_text(text: str) -> RawRelation | None:
    for separators in (_ARROWS, _PIPES):
        pieces = [piece for piece in split_on_any(text.strip(" ()"), separators) if piece]
        if len(pieces) == _TRIPLE_LEN:
            return RawRelation(node1=pieces[0], node2=pieces[2], type=pieces[1])
    return None


def _node_from(mapping: dict[str, Any]) -> RawNode | None:
    """An entity object; its name may sit in `properties` (Neo4j style) or be its `id`."""
    ref = _first(mapping, ID_KEYS)
    ref_text = _endpoint_name(ref) or None
    properties = mapping.get("properties")
    nested = _lower_keys(properties) if isinstance(properties, Mapping) else {}
    name = _endpoint_name(_first(mapping, NAME_KEYS)) or _endpoint_name(_first(nested, NAME_KEYS))
    name = name or (ref_text or "")
    if not name:
        # An entity written with an empty name is a node the cleanup counts as nameless; an
        # object naming nothing at all is no entity.
        return RawNode(name="") if isinstance(_first(mapping, NAME_KEYS), str) else None
    attributes: list[str] = []
    for key in ATTRIBUTE_KEYS:
        value = mapping.get(key)
        if key == "properties" and isinstance(value, Mapping):
            value = {k: v for k, v in value.items() if str(k).strip().lower() not in NAME_KEYS}
        attributes.extend(attribute_texts(value))
    return RawNode(name=name, attributes=attributes, ref=ref_text)


def _read_keyed(
    lowered: dict[str, Any], items: Mapping[Any, Any], expect: _Expect, depth: int
) -> RawGraph:
    """An object where a list was expected: one node or relation, or nodes keyed by name
    (`{"Alice": ["engineer"], "Acme": {"founded": 1990}}`)."""
    single = _first(lowered, NAME_KEYS + SOURCE_KEYS) is not None
    if single or expect is not _Expect.NODES:
        return _read_mapping(lowered, expect, True, depth) or RawGraph()
    return RawGraph(
        nodes=[
            RawNode(name=str(name), attributes=attribute_texts(value))
            for name, value in items.items()
        ]
    )


def attribute_texts(value: Any) -> list[str]:
    """Attributes as strings: a list stays a list, a string is one attribute, a dict gives
    `key: value` pairs, numbers are written out, nulls disappear."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool | int | float):
        return [str(value)]
    if isinstance(value, Mapping):
        pairs = []
        for key, item in value.items():
            texts = attribute_texts(item)
            if texts:
                pairs.append(f"{key}: {', '.join(texts)}")
        return pairs
    if isinstance(value, list):
        return [text for item in value for text in attribute_texts(item)]
    return []
