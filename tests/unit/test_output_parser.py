"""The tolerant extraction-output parser, on answers shaped like those local models really give."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from graphrag.extraction.output_parser import (
    OutputKind,
    ParseOptions,
    parse_graph_output,
)
from graphrag.graph.models import GraphData, GraphNode, GraphRelation

pytestmark = pytest.mark.unit

OPTIONS = ParseOptions(
    tags=[],
    keep_relations_outside_tags=True,
    max_name_chars=40,
    max_attributes_per_node=5,
    max_nodes_per_chunk=50,
    max_relations_per_chunk=50,
)

CANONICAL = (
    '{"nodes": [{"name": "Marie Curie", "attributes": ["physicist", "born in Warsaw"]}, '
    '{"name": "Sorbonne", "attributes": ["university"]}], '
    '"relations": [{"node1": "Marie Curie", "node2": "Sorbonne", "type": "taught at"}]}'
)
CANONICAL_NODES = [("Marie Curie", ["physicist", "born in Warsaw"]), ("Sorbonne", ["university"])]
CANONICAL_RELATIONS = [("Marie Curie", "Sorbonne", "taught at")]


@dataclass(frozen=True)
class Case:
    text: str
    kind: OutputKind
    nodes: list[tuple[str, list[str]]] = field(default_factory=list)
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    options: ParseOptions = OPTIONS
    dropped: tuple[int, int] = (0, 0)  # (nodes, relations)


def case(id_: str, *args: object, **kwargs: object) -> object:
    return pytest.param(Case(*args, **kwargs), id=id_)  # type: ignore[arg-type]  # test table


def wrapped(id_: str, text: str) -> object:
    """A case whose answer holds the canonical graph inside some wrapping."""
    return case(id_, text, OutputKind.OK, CANONICAL_NODES, CANONICAL_RELATIONS)


def opts(**changes: object) -> ParseOptions:
    return OPTIONS.model_copy(update=changes)


def bare(*names: str) -> list[tuple[str, list[str]]]:
    return [(name, []) for name in names]


CASES = [
    case("canonical", CANONICAL, OutputKind.OK, CANONICAL_NODES, CANONICAL_RELATIONS),
    wrapped(
        "json fence",
        f"```json\n{CANONICAL}\n```",
    ),
    wrapped(
        "bare fence with chatter",
        f"Sure! Here is the graph:\n```\n{CANONICAL}\n```\nLet me know if you need more.",
    ),
    wrapped(
        "prose around unfenced json",
        f"The graph is: {CANONICAL} Hope this helps.",
    ),
    wrapped(
        "think block first",
        f"<think>\nThe text names Marie Curie {{a person}} and the Sorbonne.\n</think>\n\n"
        f"{CANONICAL}",
    ),
    wrapped(
        "closing think only (template opened it)",
        f"Okay, the user wants a graph. [thinking]\n</think>\n{CANONICAL}",
    ),
    case(
        "unclosed think, reasoning only",
        "<think>\nLet me find the entities. The first one is Marie Curie, then",
        OutputKind.PROSE,
    ),
    wrapped(
        "unclosed think holding the json",
        f"<think>\nI will answer directly.\n{CANONICAL}",
    ),
    wrapped(
        "harmony final channel",
        "<|channel|>analysis<|message|>Need JSON {maybe}.<|end|><|start|>assistant"
        f"<|channel|>final<|message|>{CANONICAL}",
    ),
    wrapped(
        "special end token after json",
        f"{CANONICAL}<end_of_turn>\n<|im_end|>",
    ),
    case(
        "truncated inside a name",
        '{"nodes": [{"name": "Marie Curie", "attributes": ["physicist"]}, {"name": "Pierre Cu',
        OutputKind.REPAIRED,
        [("Marie Curie", ["physicist"])],
    ),
    case(
        "truncated inside a relation",
        '{"nodes": [{"name": "Marie Curie", "attributes": []}, {"name": "Radium", '
        '"attributes": ["element"]}], "relations": [{"node1": "Marie Curie", "node2": '
        '"Radium", "type": "discovered"}, {"node1": "Marie Curie", "node2": "Polo',
        OutputKind.REPAIRED,
        [("Marie Curie", []), ("Radium", ["element"])],
        [("Marie Curie", "Radium", "discovered")],
    ),
    case(
        "truncated fence",
        '```json\n{"nodes": [{"name": "Radium", "attributes": ["element"]}], "relations": [',
        OutputKind.REPAIRED,
        [("Radium", ["element"])],
    ),
    case(
        "bracketed prose before truncated json, escaped quote in a name",
        'Result [v2]: {"nodes": [{"name": "Le \\"Petit] Prince\\"", "attributes": []}], '
        '"relations": [{"node1": "Le \\"Petit] Prince\\"", "node2": "Saint-Exupery", '
        '"type": "written by"}',
        OutputKind.REPAIRED,
        bare('Le "Petit] Prince"'),
        dropped=(0, 1),  # Saint-Exupery is not among the listed entities
    ),
    wrapped(
        "reference brackets before valid json",
        f"As [1] shows: {CANONICAL}",
    ),
    case(
        "trailing commas and python quotes",
        "{'nodes': [{'name': 'Radium', 'attributes': ['element',],},], 'relations': [],}",
        OutputKind.REPAIRED,
        [("Radium", ["element"])],
    ),
    case(
        "subject predicate object list",
        '[{"subject": "Alice", "predicate": "works for", "object": "Acme"}, '
        '{"subject": "Acme", "predicate": "located in", "object": "Lyon"}]',
        OutputKind.OK,
        bare("Alice", "Acme", "Lyon"),
        [("Alice", "Acme", "works for"), ("Acme", "Lyon", "located in")],
    ),
    case(
        "capitalised spo keys",
        '[{"Subject": "Alice", "Predicate": "manages", "Object": "Bob"}]',
        OutputKind.OK,
        bare("Alice", "Bob"),
        [("Alice", "Bob", "manages")],
    ),
    case(
        "entities + relationships with source/target/relation",
        '{"entities": [{"entity_name": "Acme", "entity_description": "a chemicals maker"}, '
        '{"entity_name": "Lyon"}], '
        '"relationships": [{"source": "Acme", "target": "Lyon", "relation": "based in"}]}',
        OutputKind.OK,
        [("Acme", ["a chemicals maker"]), ("Lyon", [])],
        [("Acme", "Lyon", "based in")],
    ),
    case(
        "a relation to an entity the list lacks is dropped",
        '{"entities": [{"entity_name": "Acme", "entity_description": "a chemicals maker"}], '
        '"relationships": [{"source": "Acme", "target": "Lyon", "relation": "based in"}]}',
        OutputKind.OK,
        [("Acme", ["a chemicals maker"])],
        dropped=(0, 1),
    ),
    case(
        "triples with head/relation/tail",
        '{"triples": [{"head": "Paris", "relation": "capital of", "tail": "France"}]}',
        OutputKind.OK,
        bare("Paris", "France"),
        [("Paris", "France", "capital of")],
    ),
    case(
        "entity1/entity2/relation",
        '{"relations": [{"entity1": "Bob", "entity2": "Carol", "relation": "married to"}]}',
        OutputKind.OK,
        bare("Bob", "Carol"),
        [("Bob", "Carol", "married to")],
    ),
    case(
        "edges from/to/label and nodes as strings",
        '{"nodes": ["Alice", "Acme"], "edges": [{"from": "Alice", "to": "Acme", '
        '"label": "founded"}]}',
        OutputKind.OK,
        bare("Alice", "Acme"),
        [("Alice", "Acme", "founded")],
    ),
    case(
        "triples as arrays",
        '{"triples": [["Marie Curie", "won", "Nobel Prize"], ["Marie Curie", "born in", '
        '"Warsaw"]]}',
        OutputKind.OK,
        bare("Marie Curie", "Nobel Prize", "Warsaw"),
        [("Marie Curie", "Nobel Prize", "won"), ("Marie Curie", "Warsaw", "born in")],
    ),
    case(
        "relation strings with arrows",
        '{"relations": ["Alice -> works at -> Acme", "Bob -[reports to]-> Alice", "noise"]}',
        OutputKind.OK,
        bare("Alice", "Acme", "Bob"),
        [("Alice", "Acme", "works at"), ("Bob", "Alice", "reports to")],
    ),
    case(
        "single node entity/entity_attributes",
        '{"entity": "Acme", "entity_attributes": ["founded 1990", "chemicals"]}',
        OutputKind.OK,
        [("Acme", ["founded 1990", "chemicals"])],
    ),
    case(
        "single relation object",
        '{"node1": "Alice", "node2": "Acme", "type": "works at"}',
        OutputKind.OK,
        bare("Alice", "Acme"),
        [("Alice", "Acme", "works at")],
    ),
    case(
        "bare list of names",
        '["Alice", "Acme", "Lyon"]',
        OutputKind.OK,
        bare("Alice", "Acme", "Lyon"),
    ),
    case(
        "attributes as dict and as string",
        '{"nodes": [{"name": "Acme", "attributes": {"sector": "chemicals", "founded": 1990, '
        '"sites": ["Lyon", "Gent"], "ceo": null}}, {"name": "Lyon", "attributes": "a city"}]}',
        OutputKind.OK,
        [
            ("Acme", ["sector: chemicals", "founded: 1990", "sites: Lyon, Gent"]),
            ("Lyon", ["a city"]),
        ],
    ),
    case(
        "attribute objects in a list",
        '{"nodes": [{"name": "Bob", "attributes": [{"role": "CTO"}, "joined 2019", 42]}]}',
        OutputKind.OK,
        [("Bob", ["role: CTO", "joined 2019", "42"])],
    ),
    case(
        "node object keyed by name",
        '{"nodes": {"Alice": ["engineer"], "Acme": "a firm"}}',
        OutputKind.OK,
        [("Alice", ["engineer"]), ("Acme", ["a firm"])],
    ),
    case(
        "neo4j style ids and properties",
        '{"nodes": [{"id": "0", "label": "Person", "properties": {"name": "Alice", "age": 30}},'
        ' {"id": "1", "properties": {"name": "Acme"}}], "relationships": [{"start_node_id": "0",'
        ' "end_node_id": "1", "type": "WORKS_AT"}]}',
        OutputKind.OK,
        [("Alice", ["age: 30"]), ("Acme", [])],
        [("Alice", "Acme", "WORKS_AT")],
    ),
    case(
        "endpoints as objects",
        '{"relations": [{"source": {"name": "Alice"}, "target": {"id": "Acme"}, '
        '"type": "works at"}]}',
        OutputKind.OK,
        bare("Alice", "Acme"),
        [("Alice", "Acme", "works at")],
    ),
    case(
        "named node with from/to stays a node",
        '{"nodes": [{"name": "World War II", "from": "1939", "to": "1945"}]}',
        OutputKind.OK,
        bare("World War II"),
    ),
    case(
        "tool_call json with string arguments",
        '<tool_call>\n{"name": "extract_graph", "arguments": "{\\"nodes\\": [{\\"name\\": '
        '\\"Alice\\"}], \\"relations\\": []}"}\n</tool_call>',
        OutputKind.OK,
        bare("Alice"),
    ),
    case(
        "several tool calls are merged",
        '<tool_call>{"name": "add_entity", "arguments": {"name": "Alice", "attributes": '
        '["engineer"]}}</tool_call>\n<tool_call>{"name": "add_entity", "arguments": {"name": '
        '"Acme"}}</tool_call>\n<tool_call>{"name": "add_relation", "arguments": '
        '{"source": "Alice", "target": "Acme", "relation": "works at"}}</tool_call>',
        OutputKind.OK,
        [("Alice", ["engineer"]), ("Acme", [])],
        [("Alice", "Acme", "works at")],
    ),
    case(
        "function tag with json body",
        '<function=extract_graph>{"nodes": [{"name": "Acme", "attributes": []}], '
        '"relations": []}</function>',
        OutputKind.OK,
        bare("Acme"),
    ),
    case(
        "function tag with parameters",
        "<tool_call>\n<function=extract_graph>\n<parameter=nodes>\n"
        '[{"name": "Alice", "attributes": ["engineer"]}, {"name": "Acme"}]\n</parameter>\n'
        "<parameter=relations>\n"
        '[{"node1": "Alice", "node2": "Acme", "type": "works at"}]\n</parameter>\n</function>\n'
        "</tool_call>",
        OutputKind.OK,
        [("Alice", ["engineer"]), ("Acme", [])],
        [("Alice", "Acme", "works at")],
    ),
    case(
        "openai tool_calls written in the content",
        '{"tool_calls": [{"type": "function", "function": {"name": "extract_graph", '
        '"arguments": "{\\"nodes\\": [\\"Lyon\\"], \\"relations\\": []}"}}]}',
        OutputKind.OK,
        bare("Lyon"),
    ),
    case(
        "graph under a wrapper key",
        '{"knowledge_graph": {"nodes": [{"name": "Lyon"}], "relations": []}}',
        OutputKind.OK,
        bare("Lyon"),
    ),
    case(
        "prose refusal",
        "I'm sorry, but this passage is a table of contents and mentions no entities.",
        OutputKind.PROSE,
    ),
    case("prose with brackets", "I cannot do that [sorry], the text is {empty}.", OutputKind.PROSE),
    case("empty answer", "   \n  ", OutputKind.EMPTY),
    case("reasoning then nothing", "<think>Nothing useful here.</think>\n", OutputKind.EMPTY),
    case(
        "json of another shape",
        '{"summary": "The text lists chapters.", "score": 3}',
        OutputKind.UNRECOGNIZED,
    ),
    case("explicitly empty graph", '{"nodes": [], "relations": []}', OutputKind.OK),
    case("empty list", "[]", OutputKind.OK),
    case(
        "merge duplicates, drop self-loops and repeated relations",
        '{"nodes": [{"name": "Acme Corp", "attributes": ["chemicals"]}, {"name": "acme  corp",'
        ' "attributes": ["chemicals", "listed"]}, {"name": "Lyon", "attributes": []}],'
        ' "relations": [{"node1": "Acme Corp", "node2": "ACME CORP", "type": "owns"},'
        ' {"node1": "Acme Corp", "node2": "Lyon", "type": "based in"},'
        ' {"node1": "acme corp", "node2": "lyon", "type": "based in"},'
        ' {"node1": "Lyon", "node2": "Acme Corp", "type": "hosts"}]}',
        OutputKind.OK,
        [("Acme Corp", ["chemicals", "listed"]), ("Lyon", [])],
        [("Acme Corp", "Lyon", "based in"), ("Lyon", "Acme Corp", "hosts")],
        dropped=(0, 1),
    ),
    case(
        "names normalised, empty and null names dropped",
        '{"nodes": [{"name": "  Marie\\n  Curie "}, {"name": "   "}, {"name": null}, '
        '{"attributes": ["orphan"]}], "relations": [{"node1": "Marie Curie", "node2": " ",'
        ' "type": "knows"}]}',
        OutputKind.OK,
        bare("Marie Curie"),
        dropped=(1, 1),
    ),
    case(
        "relation without type is dropped, its ends are not invented",
        '{"relations": [{"source": "Alice", "target": "Bob"}]}',
        OutputKind.OK,
        dropped=(0, 1),
    ),
    case(
        "overlong name dropped",
        '{"nodes": [{"name": "'
        + "x" * 41
        + '"}, {"name": "Lyon"}], "relations": [{"node1": "'
        + "x" * 41
        + '", "node2": "Lyon", "type": "in"}]}',
        OutputKind.OK,
        bare("Lyon"),
        dropped=(1, 1),
    ),
    case(
        "names at the cap kept, a relation type over it dropped",
        '{"nodes": [{"name": "'
        + "y" * 40
        + '"}, {"name": "Lyon"}, {"name": "Nice"}], "relations": [{"node1": "'
        + "y" * 40
        + '", "node2": "Lyon", "type": "'
        + "t" * 40
        + '"}, {"node1": "Lyon", "node2": "Nice", "type": "'
        + "t" * 41
        + '"}]}',
        OutputKind.OK,
        bare("y" * 40, "Lyon", "Nice"),
        [("y" * 40, "Lyon", "t" * 40)],
        dropped=(0, 1),
    ),
    case(
        "the node cap keeps the first nodes, a relation losing an end goes with it",
        '{"relations": [{"node1": "A", "node2": "B", "type": "r"}, '
        '{"node1": "C", "node2": "D", "type": "r"}], "nodes": [{"name": "E"}, {"name": "A"}, '
        '{"name": "B"}, {"name": "C"}, {"name": "D"}]}',
        OutputKind.OK,
        bare("E", "A", "B"),
        [("A", "B", "r")],
        opts(max_nodes_per_chunk=3),
        dropped=(2, 1),
    ),
    case(
        "tags: matching types take the tag spelling, others dropped",
        '{"relations": [{"node1": "Alice", "node2": "Acme", "type": "WORKS_FOR"}, '
        '{"node1": "Alice", "node2": "Bob", "type": "likes"}]}',
        OutputKind.OK,
        bare("Alice", "Acme"),
        [("Alice", "Acme", "works for")],
        opts(tags=["works for", "located in"], keep_relations_outside_tags=False),
        dropped=(0, 1),
    ),
    case(
        "tags: other types kept when allowed",
        '{"relations": [{"node1": "Alice", "node2": "Acme", "type": "works-for"}, '
        '{"node1": "Alice", "node2": "Bob", "type": "likes"}]}',
        OutputKind.OK,
        bare("Alice", "Acme", "Bob"),
        [("Alice", "Acme", "works for"), ("Alice", "Bob", "likes")],
        opts(tags=["works for"], keep_relations_outside_tags=True),
    ),
    case(
        "caps on nodes, relations and attributes",
        '{"nodes": [{"name": "A", "attributes": ["1", "2", "3"]}, {"name": "B"}, {"name": "C"}],'
        ' "relations": [{"node1": "A", "node2": "B", "type": "r"}, {"node1": "A", "node2": "C",'
        ' "type": "r"}, {"node1": "B", "node2": "A", "type": "r"}]}',
        OutputKind.OK,
        [("A", ["1", "2"]), ("B", [])],
        [("A", "B", "r")],
        opts(max_nodes_per_chunk=2, max_relations_per_chunk=1, max_attributes_per_node=2),
        dropped=(1, 2),
    ),
]


@pytest.mark.parametrize("c", CASES)
def test_parse_graph_output(c: Case) -> None:
    outcome = parse_graph_output(c.text, c.options)

    expected = GraphData(
        nodes=[GraphNode(name=name, attributes=attrs) for name, attrs in c.nodes],
        relations=[GraphRelation(node1=a, node2=b, type=t) for a, b, t in c.relations],
    )
    assert outcome.kind is c.kind
    assert outcome.data == expected
    assert (outcome.dropped_nodes, outcome.dropped_relations) == c.dropped


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 30


def test_none_is_an_empty_answer() -> None:
    outcome = parse_graph_output(None, OPTIONS)

    assert outcome.kind is OutputKind.EMPTY
    assert outcome.data.is_empty


def test_options_from_settings_copy_the_caps() -> None:
    from graphrag.settings import get_settings

    extraction = get_settings().extraction
    options = ParseOptions.from_settings(extraction, ["works for"])

    assert options.tags == ["works for"]
    assert options.max_name_chars == extraction.max_name_chars
    assert options.keep_relations_outside_tags is extraction.keep_relations_outside_tags
