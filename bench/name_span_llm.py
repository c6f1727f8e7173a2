"""A deterministic stand-in for the extraction model: an OpenAI-compatible chat server whose
"model" takes the capitalised name spans of a passage as its entities and links the names that
share a sentence. No model is needed, and every run extracts the same graph.

- an extraction request (the `extract_graph` prompt, text after its last "Passage:") answers
  `{"nodes": [...], "relations": [...]}` with relation type `RELATION_TYPE`;
- a question-entities request (the `extract_entity` prompt, after "Question:") answers a JSON
  array of the question's name spans;
- anything else answers a short fixed text.

A name span is a run of capitalised words, which may hold the connectors in `CONNECTORS`
("Cooper Firearms of Montana"); a sentence's first word alone is not a name when it is a common
sentence opener ("The", "In", "He"...).
"""

from __future__ import annotations

import json
import time
from itertools import combinations
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

__all__ = ["RELATION_TYPE", "create_app", "name_spans"]

RELATION_TYPE = "co_occurs"
PASSAGE_MARK = "Passage:"
QUESTION_MARK = "Question:"
CONNECTORS = frozenset({"of", "the", "and", "de", "du", "la", "von", "van", "for", "&"})
OPENERS = frozenset(
    [
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "he",
        "she",
        "it",
        "they",
        "his",
        "her",
        "its",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "as",
        "by",
        "for",
        "from",
        "with",
        "after",
        "before",
        "during",
        "when",
        "while",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "why",
        "how",
        "is",
        "was",
        "are",
        "were",
        "be",
        "been",
        "one",
        "two",
        "however",
        "although",
        "since",
        "following",
        "also",
        "both",
    ]
)
SENTENCE_ENDS = ".?!"
QUOTES = "\"'()[]{}\u201c\u201d\u2018\u2019"
MAX_PAIRS_PER_SENTENCE = 30


def _clean(word: str) -> tuple[str, bool]:
    """The word without surrounding punctuation, and whether punctuation ends its span."""
    core = word.strip(QUOTES)
    ends = core[-1:] in ",;:.?!" or word[-1:] in ")]}"
    return core.rstrip(",;:.?!"), ends


def _sentences(text: str) -> list[list[str]]:
    """Words per sentence; a line break (a title above its paragraph) ends a sentence too."""
    sentences: list[list[str]] = []
    for line in text.splitlines():
        sentences.append([])
        for word in line.split():
            sentences[-1].append(word)
            if word.rstrip(QUOTES)[-1:] in SENTENCE_ENDS:
                sentences.append([])
    return [s for s in sentences if s]


def name_spans(text: str) -> list[list[str]]:
    """Name spans per sentence, in reading order."""
    found: list[list[str]] = []
    for words in _sentences(text):
        spans: list[str] = []
        current: list[str] = []
        for position, raw in enumerate(words):
            word, ends = _clean(raw)
            capital = word[:1].isupper() or (word[:1].isdigit() and bool(current))
            if capital and not (position == 0 and word.lower() in OPENERS):
                current.append(word)
            elif current and word.lower() in CONNECTORS and not ends:
                current.append(word)
                continue
            else:
                _close(current, spans)
                current = []
                continue
            if ends:
                _close(current, spans)
                current = []
        _close(current, spans)
        found.append(list(dict.fromkeys(spans)))
    return found


def _close(current: list[str], spans: list[str]) -> None:
    while current and current[-1].lower() in CONNECTORS:
        current.pop()
    if current:
        spans.append(" ".join(current))


def _extraction(passage: str) -> dict[str, Any]:
    per_sentence = name_spans(passage)
    names = list(dict.fromkeys(name for spans in per_sentence for name in spans))
    relations: dict[tuple[str, str], None] = {}
    for spans in per_sentence:
        for a, b in list(combinations(spans, 2))[:MAX_PAIRS_PER_SENTENCE]:
            relations.setdefault((a, b), None)
    return {
        "nodes": [{"name": name, "attributes": []} for name in names],
        "relations": [{"node1": a, "node2": b, "type": RELATION_TYPE} for a, b in relations],
    }


def _answer(prompt: str) -> str:
    if PASSAGE_MARK in prompt:
        return json.dumps(_extraction(prompt.rsplit(PASSAGE_MARK, 1)[1]))
    if QUESTION_MARK in prompt:
        question = prompt.rsplit(QUESTION_MARK, 1)[1]
        return json.dumps([name for spans in name_spans(question) for name in spans])
    return "No answer: this server only extracts names."


async def _chat(request: Request) -> JSONResponse:
    body = await request.json()
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    content = _answer(prompt)
    return JSONResponse(
        {
            "id": "chatcmpl-names",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "names"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(content) // 4},
        }
    )


async def _models(_: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": [{"id": "names", "object": "model"}]})


def create_app() -> Starlette:
    """The stand-in's ASGI app (serve it with `tests.support.http_server.ThreadedServer`)."""
    return Starlette(
        routes=[
            Route("/v1/chat/completions", _chat, methods=["POST"]),
            Route("/v1/models", _models, methods=["GET"]),
        ]
    )
