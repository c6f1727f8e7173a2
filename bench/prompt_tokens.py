"""Prompt tokens of one extraction request, part by part, in the tokens of the packaged Gemma.

    .venv/bin/python bench/prompt_tokens.py [--chunk-chars 512 --model path/to.gguf]

The request is what `build_extraction_request` sends for a chunk of `--chunk-chars` generated
characters (the default chunk size), for the default knowledge base (`graphrag ingest --graph`:
no tags, no example) and for one with tags and a few-shot example. Each message is counted
alone (template tokens of the chat format are left out: they depend on the server). Lines:
- `prompt_tokens_<kb>: request/chunk`: all the messages over the chunk's own tokens; the
  excess is what the instructions (and example) cost per chunk.
- the example's turns are counted once (they are sent once per request), and the line says
  how many times the example text occurs in the request.
Needs the `llama` extra (llama-cpp-python reads the tokenizer from the GGUF, no weights loaded).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench.harness import print_header, print_ratio
from bench.sample_text import paragraphs
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.graph.models import GraphNode, GraphRelation
from graphrag.llm.messages import ChatMessage
from graphrag.settings import get_settings, project_root

EXAMPLE = ExtractConfig(
    enabled=True,
    text="Ada Moreau founded Northwind Robotics in Lyon in 2011.",
    tags=["founded", "located in", "uses", "makes"],
    nodes=[
        GraphNode(name="Ada Moreau", attributes=["founder"]),
        GraphNode(name="Northwind Robotics", attributes=["founded in 2011"]),
        GraphNode(name="Lyon", attributes=[]),
    ],
    relations=[
        GraphRelation(node1="Ada Moreau", node2="Northwind Robotics", type="founded"),
        GraphRelation(node1="Northwind Robotics", node2="Lyon", type="located in"),
    ],
)


def _tokenizer(model: Path) -> Callable[[str], int]:
    from llama_cpp import Llama

    llm = Llama(model_path=str(model), vocab_only=True, verbose=False)
    return lambda text: len(llm.tokenize(text.encode(), add_bos=False, special=False))


def _default_model() -> Path:
    folder = project_root() / "data" / "llama" / "models"
    out = subprocess.run(
        [sys.executable, str(project_root() / "deploy/local/gguf_path.py"), "--dir", str(folder)],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def _report(
    name: str, messages: list[ChatMessage], chunk: str, count: Callable[[str], int], example: str
) -> None:
    parts = [count(m.content) for m in messages]
    own = count(chunk)
    total = sum(parts)
    shown = " + ".join(f"{m.role}:{n}" for m, n in zip(messages, parts, strict=True))
    repeats = sum(m.content.count(example) for m in messages) if example else 0
    detail = f"request={total} tokens ({shown}), chunk={own}, example_text_occurrences={repeats}"
    print_ratio(f"prompt_tokens_{name}", "request", "chunk", total / own, detail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chunk-chars", type=int, default=get_settings().ingest.chunk_size)
    parser.add_argument("--model", type=Path, default=None, help="a GGUF (default: packaged)")
    args = parser.parse_args()
    settings = get_settings()
    print_header("prompt_tokens", {"chunk_chars": args.chunk_chars})
    count = _tokenizer(args.model or _default_model())
    chunk = paragraphs("prompt-tokens", args.chunk_chars)[: args.chunk_chars]
    default = build_extraction_request(ExtractConfig(enabled=True), chunk, settings.extraction)
    _report("default_kb", default.messages, chunk, count, "")
    tagged = build_extraction_request(EXAMPLE, chunk, settings.extraction)
    _report("tags_and_example", tagged.messages, chunk, count, EXAMPLE.text)


if __name__ == "__main__":
    main()
