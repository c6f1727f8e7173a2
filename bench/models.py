"""Which packaged local model is fit for the job: each one answers the same fixed set on this
machine through a real llama.cpp server.

    .venv/bin/python -m bench.models [--models qwen2.5-1.5b,qwen2.5-0.5b,gemma3-270m]
                                     [--questions 24] [--chunks 24]

- questions (`bench/data/model_questions.jsonl`, over the `deploy/local/samples` documents):
  the answer prompt of the chat (`prompt_templates/answer.yaml`) with the three samples as its
  numbered passages; an answer is correct when it holds every expected name (one of each group's
  spellings, case folded) and is not the prompt echoed back (it repeats the question or a
  passage's heading: a base model does that, and the echo holds every name);
- chunks (`bench/data/model_chunks.jsonl`, short passages with hand-written entities and
  relations): the extraction request of the ingestion (`extract_graph` prompt, JSON schema, no
  tags) read by the ingestion's parser. Valid JSON: the reply parses as a graph without repair.
  Entity precision/recall compare case-folded names; relation precision/recall compare
  unordered pairs of names (the type is free text, not scored). Placeholder or empty names are
  counted on the model's raw reply, before any cleanup.

Seconds per call are wall time on this machine (printed with the load average: the cores may
be shared). The models run one after the other, each on its own server on a free port.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import string
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from bench.harness import print_header
from graphrag.extraction.graph_cleanup import ParseOptions
from graphrag.extraction.models import ExtractConfig
from graphrag.extraction.output_parser import OutputKind, parse_graph_output
from graphrag.extraction.prompt_builder import build_extraction_request
from graphrag.llm.client import LlmClient
from graphrag.llm.prompts import load_prompt
from graphrag.settings import Settings, get_settings, project_root
from graphrag.settings.llm import LOCAL_MODELS

ROOT = project_root()
DATA = ROOT / "bench" / "data"
SAMPLES = ROOT / "deploy" / "local" / "samples"
SERVER = ROOT / "deploy" / "local" / "llama_server.sh"
GGUF = ROOT / "deploy" / "local" / "gguf_path.py"
MODELS_DIR = ROOT / "data" / "llama" / "models"
BENCH_HOME = ROOT / "data" / "bench-models"
ANSWER_MAX_TOKENS = 192  # a few sentences: a longer answer is cut, not waited for
EXTRACT_MAX_TOKENS = 512  # a short chunk's graph JSON is about 150 tokens
CALL_TIMEOUT_S = 600.0  # one call on busy cores
# Names a model copies from the prompt's schema or example instead of the chunk's own.
PLACEHOLDERS = frozenset({"<entity>", "entity", "name", "node", "node1", "node2", "...", "string"})


@dataclass
class Score:
    """One model's figures over the set."""

    model: str
    correct: int = 0
    echoes: int = 0
    questions: int = 0
    valid_json: int = 0
    chunks: int = 0
    entity_hits: int = 0
    entity_found: int = 0
    entity_expected: int = 0
    relation_hits: int = 0
    relation_found: int = 0
    relation_expected: int = 0
    placeholders: int = 0
    answer_s: list[float] = field(default_factory=list)
    extract_s: list[float] = field(default_factory=list)


def _fold(name: str) -> str:
    return " ".join(name.casefold().strip(string.punctuation + " ").split())


def _ratio(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def served(model: str) -> Iterator[str]:
    """A llama.cpp server on `model` (assembled GGUF reused), its base URL, stopped after."""
    python = str(ROOT / ".venv" / "bin" / "python")
    gguf = subprocess.run(
        [python, str(GGUF), "--dir", str(MODELS_DIR), "--model", model],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = {
        **os.environ,
        "LLAMA_LOCAL_MODEL": model,
        "LLAMA_MODEL": gguf,
        "LLAMA_PORT": str(_free_port()),
        "LLAMA_HOME_DIR": str(BENCH_HOME / model),
    }
    url = subprocess.run(
        ["bash", str(SERVER), "start"], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run(["bash", str(SERVER), "stop"], env=env, capture_output=True, check=False)


def _read(name: str, limit: int) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()][:limit]


def _passages() -> str:
    files = sorted(SAMPLES.iterdir())
    return "\n\n".join(
        f"[{n}] ({f.name})\n{f.read_text(encoding='utf-8').strip()}" for n, f in enumerate(files, 1)
    )


def _raw_names(reply: str) -> list[str]:
    """Entity names as the model wrote them (nodes and relation ends), if the reply is JSON."""
    start = reply.find("{")
    try:
        value = json.loads(reply[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        return []
    if not isinstance(value, dict):
        return []
    names = [n.get("name") for n in value.get("nodes", []) if isinstance(n, dict)]
    for rel in value.get("relations", []):
        if isinstance(rel, dict):
            names += [rel.get("node1"), rel.get("node2")]
    return [n if isinstance(n, str) else "" for n in names]


def _is_placeholder(name: str) -> bool:
    folded = name.strip().casefold()
    return not _fold(name) or folded in PLACEHOLDERS


def ask_questions(llm: LlmClient, settings: Settings, score: Score, limit: int) -> None:
    """The answer prompt over the samples, once per question."""
    template = load_prompt("answer", settings.extraction.prompt_templates_dir)
    passages = _passages()
    echo_marks = [f.name.casefold() for f in SAMPLES.iterdir()]
    for item in _read("model_questions.jsonl", limit):
        rendered = template.render(question=item["question"], passages=passages)
        start = time.perf_counter()
        reply = llm.complete(rendered.messages(), max_tokens=ANSWER_MAX_TOKENS).content
        score.answer_s.append(time.perf_counter() - start)
        answer = reply.casefold()
        score.questions += 1
        echo = item["question"].casefold() in answer or any(m in answer for m in echo_marks)
        score.echoes += echo
        score.correct += not echo and all(
            any(alt.casefold() in answer for alt in group) for group in item["expected"]
        )


def extract_chunks(llm: LlmClient, settings: Settings, score: Score, limit: int) -> None:
    """The ingestion's extraction request and parser, once per chunk."""
    config = ExtractConfig(enabled=True)
    options = ParseOptions.from_settings(settings.extraction, [])
    for item in _read("model_chunks.jsonl", limit):
        request = build_extraction_request(config, item["text"], settings.extraction)
        start = time.perf_counter()
        reply = llm.complete(
            request.messages, request.response_format, max_tokens=EXTRACT_MAX_TOKENS
        ).content
        score.extract_s.append(time.perf_counter() - start)
        outcome = parse_graph_output(reply, options)
        score.chunks += 1
        score.valid_json += outcome.kind == OutputKind.OK
        score.placeholders += sum(_is_placeholder(n) for n in _raw_names(reply))
        found = {_fold(n.name) for n in outcome.data.nodes}
        expected = {_fold(n) for n in item["entities"]}
        score.entity_hits += len(found & expected)
        score.entity_found += len(found)
        score.entity_expected += len(expected)
        pairs = {
            frozenset((_fold(r.node1), _fold(r.node2)))
            for r in outcome.data.relations
            if _fold(r.node1) != _fold(r.node2)
        }
        wanted = {frozenset((_fold(a), _fold(b))) for a, b in item["relations"]}
        score.relation_hits += len(pairs & wanted)
        score.relation_found += len(pairs)
        score.relation_expected += len(wanted)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def print_table(scores: list[Score]) -> None:
    """The Markdown table of the README."""
    print(
        "| model | answers correct (echoes) | valid extraction JSON | entity P / R "
        "| relation P / R | placeholder or empty names | s per answer | s per extraction |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for s in scores:
        print(
            f"| {s.model} | {s.correct}/{s.questions} ({s.echoes}) | {s.valid_json}/{s.chunks} "
            f"| {_ratio(s.entity_hits, s.entity_found):.2f} / "
            f"{_ratio(s.entity_hits, s.entity_expected):.2f} "
            f"| {_ratio(s.relation_hits, s.relation_found):.2f} / "
            f"{_ratio(s.relation_hits, s.relation_expected):.2f} "
            f"| {s.placeholders} | {_mean(s.answer_s):.1f} | {_mean(s.extract_s):.1f} |"
        )


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def main(argv: list[str] | None = None) -> None:
    """Run every chosen model over the set and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models", default=",".join(LOCAL_MODELS), help="comma-separated")
    parser.add_argument("--questions", type=int, default=24, help="questions asked per model")
    parser.add_argument("--chunks", type=int, default=24, help="chunks extracted per model")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    unknown = set(models) - set(LOCAL_MODELS)
    if unknown:
        parser.error(f"unknown models: {sorted(unknown)}; known: {', '.join(LOCAL_MODELS)}")
    settings = get_settings()
    print_header(
        "bench.models",
        {"models": ",".join(models), "questions": args.questions, "chunks": args.chunks},
    )
    scores: list[Score] = []
    for model in models:
        with served(model) as url:
            update = {"base_url": url, "model": model, "timeout_s": CALL_TIMEOUT_S}
            llm = LlmClient(settings.llm.model_copy(update=update))
            score = Score(model)
            before = _load()
            ask_questions(llm, settings, score, args.questions)
            extract_chunks(llm, settings, score, args.chunks)
            print(f"{model}: done (load average {before} before, {_load()} after)", flush=True)
            scores.append(score)
    print_table(scores)


if __name__ == "__main__":
    main()
