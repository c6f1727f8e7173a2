"""Answer quality on a multi-hop set: the local model answers the dev set's questions through
the real chat path, with the graph on and off, with and without the question split.

    .venv/bin/python -m bench.answer_quality [--questions 30] [--llm-url URL]
        [--modes off,graph,graph+split] [--dataset ../shared/datasets/hotpotqa-dev]

The knowledge base holds the paragraphs of the chosen questions' pools (each question's gold
paragraphs and its distractors; not the whole corpus, so that it builds in minutes on 2 cores),
each one a document sent through a real API and worker as `bench/retrieval_quality.py` does,
its graph extracted by the deterministic stand-in model (`bench/name_span_llm.py`), not by the
local model. `--reuse` answers over the base of the previous run (`data/bench/answer_quality.json`).
The questions are then answered by the model at `--llm-url` (default: `llm.base_url`, the local
llama.cpp server) with the chat's own stages (`graphrag.chat.service.run_chat`: question
entities when the graph is on, the split when asked, retrieval, the answer prompt).

Per mode: exact match, token F1 and "the answer contains the gold answer" (answers and gold
normalised as the dataset's README says: case, punctuation, articles and spaces folded; the
best over the gold's aliases), seconds per answer, R@5 (share of a question's gold paragraphs
among the prompt's first 5 passages) and the share of answers whose cited passages ([n] in the
answer) hold a gold paragraph.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.harness import print_header, services_env
from bench.name_span_llm import create_app
from bench.retrieval_quality import _environment, _ingest, _load_jsonl, _settings
from cli.services import command_services
from graphrag.chat.schemas import ChatRequest, DeltaEvent, SessionCreate
from graphrag.chat.service import run_chat, start_turn
from graphrag.chat.sessions import SessionAccess, create_session
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.models import Knowledge
from graphrag.settings import Settings, project_root
from graphrag.tenancy import ensure_tenant
from tests.support.http_server import ThreadedServer
from tests.support.services import create_database

STATE_FILE = project_root() / "data" / "bench" / "answer_quality.json"
MODES = {"off": (False, False), "graph": (True, False), "graph+split": (True, True)}
R_AT = 5
ARTICLES = frozenset({"a", "an", "the"})
CITATION = re.compile(r"\[(\d{1,3})\]")  # one bounded run of digits: no nested quantifier
CALL_TIMEOUT_S = 600.0  # one LLM call on busy cores


@dataclass
class ModeScore:
    em: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    contains: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    cited_gold: list[float] = field(default_factory=list)


def normalise(text: str) -> list[str]:
    """Lower case, punctuation and articles removed, spaces folded: the answer's tokens."""
    folded = "".join(" " if c in string.punctuation else c for c in text.casefold())
    return [w for w in folded.split() if w not in ARTICLES]


def token_f1(answer: str, gold: str) -> float:
    """SQuAD-style token F1 of an answer against one gold string."""
    got, want = normalise(answer), normalise(gold)
    common = sum((Counter(got) & Counter(want)).values())
    if not common:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def _golds(question: dict[str, Any]) -> list[str]:
    return [question["answer"], *question.get("answer_aliases", [])]


def _ask(
    settings: Settings, kb_id: uuid.UUID, text: str, use_graph: bool
) -> tuple[str, list[tuple[int, uuid.UUID]]]:
    """One question through the chat path: the answer and its (passage number, document)."""
    with command_services(settings) as opened:
        services = opened.chat()
        with session_scope(services.sessions) as session:
            tenant = ensure_tenant(session, settings.api.default_tenant)
            chat = create_session(
                session, tenant, "bench", SessionCreate(kb_ids=[kb_id]), settings.chat
            )
        access = SessionAccess.bound_to(tenant, "bench", settings.memory.default_owner)
        turn = start_turn(services, access, chat.id, ChatRequest(query=text, use_graph=use_graph))
        parts = [e.data.content for e in run_chat(services, turn) if isinstance(e.data, DeltaEvent)]
    return "".join(parts), [(ref.n, ref.knowledge_id) for ref in turn.references]


def _paragraphs(settings: Settings, kb_id: uuid.UUID) -> dict[uuid.UUID, str]:
    engine = make_engine(settings)
    try:
        with session_scope(make_session_factory(engine)) as session:
            rows = session.execute(
                select(Knowledge.id, Knowledge.file_name).where(Knowledge.kb_id == kb_id)
            ).all()
    finally:
        engine.dispose()
    return {row.id: Path(row.file_name).stem for row in rows}


def score_mode(
    settings: Settings,
    kb_id: uuid.UUID,
    questions: list[dict[str, Any]],
    use_graph: bool,
    paragraph: dict[uuid.UUID, str],
) -> ModeScore:
    """Every question answered once in this mode."""
    result = ModeScore()
    for q in questions:
        start = time.perf_counter()
        answer, refs = _ask(settings, kb_id, q["question"], use_graph)
        result.seconds.append(time.perf_counter() - start)
        golds = _golds(q)
        norm = " ".join(normalise(answer))
        result.em.append(float(any(normalise(answer) == normalise(g) for g in golds)))
        result.f1.append(max(token_f1(answer, g) for g in golds))
        result.contains.append(float(any(" ".join(normalise(g)) in norm for g in golds)))
        gold = set(q["gold"])
        order: list[str] = []
        for n, doc in sorted(refs, key=lambda r: r[0]):
            if len(order) < n:
                order.append(paragraph.get(doc, ""))
        result.recall.append(len(gold & set(order[:R_AT])) / len(gold))
        cited = {int(m) for m in CITATION.findall(answer)}
        cited_paragraphs = {paragraph.get(doc, "") for n, doc in refs if n in cited}
        result.cited_gold.append(float(bool(gold & cited_paragraphs)))
        print(
            f"# {q['id'][:10]} f1={result.f1[-1]:.2f} {result.seconds[-1]:.0f}s "
            f"gold={q['answer']!r} answer={answer[:100]!r}",
            flush=True,
        )
    return result


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> None:
    """Answer the first `--questions` questions in each mode and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    default_dataset = project_root().parent / "shared" / "datasets" / "hotpotqa-dev"
    parser.add_argument("--dataset", type=Path, default=default_dataset)
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--llm-url", default="", help="the answering model (default llm.base_url)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated: " + ",".join(MODES)
    )
    parser.add_argument("--reuse", action="store_true", help="answer over the previous base")
    parser.add_argument("--redis-db", type=int, default=1)  # as bench/retrieval_quality.py
    parser.add_argument("--worker-concurrency", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=3600.0)
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if set(modes) - set(MODES):
        parser.error(f"modes are {', '.join(MODES)}")
    questions = _load_jsonl(args.dataset / "questions.jsonl")[: args.questions]
    env = services_env()
    llm_url = args.llm_url or Settings().llm.base_url  # read before the bench's environment
    if args.reuse:
        state = json.loads(STATE_FILE.read_text())
    else:
        pooled = {pid for q in questions for pid in q["pool"]}
        corpus = [p for p in _load_jsonl(args.dataset / "corpus.jsonl") if p["id"] in pooled]
        database_url = create_database(env["DATABASE_URL"], "bench_answers")
        with ThreadedServer(create_app()) as names_url:
            build_env = _environment(args, database_url, names_url + "/v1")
            state = {"database_url": database_url, "kb_id": _ingest(args, build_env, corpus)}
        STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
        STATE_FILE.write_text(json.dumps(state))
    base = _settings(_environment(args, state["database_url"], llm_url))
    llm = base.llm.model_copy(
        update={
            "model": base.llm.local_model,
            "timeout_s": CALL_TIMEOUT_S,
            # llama-cpp-python's server answers one call at a time
            "concurrency_limit": 1,
        }
    )
    print_header(
        "answer_quality",
        {
            "dataset": args.dataset.name,
            "questions": len(questions),
            "model": llm.model,
            "graph_built_by": "bench/name_span_llm.py",
        },
    )
    kb_id = uuid.UUID(state["kb_id"])
    paragraph = _paragraphs(base, kb_id)
    rows: list[tuple[str, ModeScore]] = []
    for mode in modes:
        use_graph, split = MODES[mode]
        chat = base.chat.model_copy(update={"decompose": split})
        settings = base.model_copy(update={"llm": llm, "chat": chat})
        rows.append((mode, score_mode(settings, kb_id, questions, use_graph, paragraph)))
    print("| mode | EM | token F1 | contains gold | R@5 | cites a gold passage | s per answer |")
    print("|---|---|---|---|---|---|---|")
    for mode, s in rows:
        print(
            f"| {mode} | {_mean(s.em):.2f} | {_mean(s.f1):.2f} | {_mean(s.contains):.2f} "
            f"| {_mean(s.recall):.2f} | {_mean(s.cited_gold):.2f} | {_mean(s.seconds):.1f} |"
        )


if __name__ == "__main__":
    main()
