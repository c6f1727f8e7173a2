"""Ingestion end to end against an LLM server of S slots answering in L seconds: wall time over
the least time the server needs for the run's calls, ceil(calls / S) * L.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/ingest_e2e.py [--docs 300 --latency-s 0.1
        --slots 4,8 --embeddings server --names shared --layout split --before REV]

Each round uploads N generated documents (about two chunks each) through the REST batch
upload of a `graphrag serve` process, `--uploads-in-flight` requests at a time; a docparse
worker (prefork) parses, chunks, embeds and indexes them into PostgreSQL; a graph worker
(`graphrag worker --queues graph`: threads, four per slot it reads from `/props`, at most eight
more than the slots; `--graph-workers N`: N such workers sharing those threads) asks the
scripted OpenAI-compatible server (a process of its own, S slots, every chat answer held L
seconds) and writes Neo4j. The wall time runs from the first upload to the last document
completed. Lines:
- `ingest_e2e_sS: wall/llm_floor`: 1.00x would be a server busy on every slot from the first
  upload to the last answer; above is what parsing ahead, queueing and writes add.
- `ingest_e2e_sS: llm_span/llm_floor`: the same from the server's first request to its last
  answer: how well the graph stage alone keeps the slots full. Its detail line also gives the
  `lead` (first upload to the server's first request: upload, parse, relay, task start) and the
  `tail` (the server's last answer to the last document completed).
- `ingest_e2e_sS: cpu_busy/cpu_available`: the share of the machine's core-seconds inside the
  wall and the `resolution_tail` after it (the entity resolution runs the round's documents
  queued, still going when the last one completed) that were busy (`stolen`: taken by the
  hypervisor for other machines), with the CPU seconds of each kind of process (the graph
  worker, the docparse worker and its children, the API, the scripted server, Neo4j,
  PostgreSQL, Redis, this bench): near 1.00x, the run is bound by the CPU, not by the LLM
  server.
A first round of `--warmup-docs` documents (300 by default) is run and not reported: the first
work after a Neo4j start is partly spent in its JIT compiler (a Neo4j just started needs about
a thousand documents before its figures settle). `--repeat N` runs every slot count N times and
ends with each one's median (`ingest_e2e_sS_median`).
`--layout split,plain` runs every slot count in both worker layouts (the plain rounds' lines are
named `ingest_e2e_sS_plain`) and ends with `ingest_e2e_sS: plain_wall/split_wall`.
`--before REV` runs REV's own copy of this bench (a git worktree sharing this checkout's `.venv`
and running services: its code, workers and API) before each repeat of ours, same options, split
layout, its own warm-up, and ends with `ingest_e2e_sS_core_ms_per_chunk: ours/before_REV`, the
medians of the busy core-ms per chunk: the same machine at the same hour, the rounds alternated;
then the same for each kind of process (`..._core_ms_per_chunk_neo4j`, `_graph`, ...), and
`..._core_ms_per_chunk_databases: ours/half_before_REV`, what Neo4j and PostgreSQL alone spend
per chunk over half the earlier revision's busy CPU per chunk (at or above 1.00x, halving the
CPU per chunk is out of reach by cutting the Python processes alone).
The server measures requests in flight: `peak` (received at once; never above S when the
workers respect the limit) and `mean` (time-weighted, served at once, over its span).
Embeddings come from the scripted server (`--embeddings server`, the default: no model on the
CPU) or the packaged MiniLM (`--embeddings local`). Every chunk's extraction names the same
three entities (`--names shared`, the default: one base node each, linked by every chunk) or
entities of its document's own (`--names distinct`: three new base nodes and name vectors per
document).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import redis
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from bench.cpu_window import CpuSpent, CpuWindow, wait_quiet
from bench.harness import print_header, print_ratio, services_env
from bench.revision_run import run_bench_at
from bench.sample_text import paragraphs
from graphrag.db.engine import make_engine, make_session_factory, session_scope
from graphrag.db.enums import OutboxStatus, ParseStatus
from graphrag.db.migrate import upgrade_to_head
from graphrag.db.models import Knowledge, OutboxTask
from graphrag.db.outbox import TaskName
from graphrag.llm.concurrency import background_slots_key
from graphrag.settings import Settings, project_root
from tests.support.graph_helpers import remove_label
from tests.support.http_server import free_port
from tests.support.services import create_database, data_dir, drop_database, test_settings
from tests.support.worker import WorkerProcess
from workers.pool import graph_threads

# The process kinds of the two databases (`bench/cpu_window.py`'s names).
DATABASE_KINDS = ("neo4j", "postgres")
# A process kind's seconds in the cpu_busy line's detail: `neo4j=6.7s(sys 0.6)`.
_KIND_SECONDS = re.compile(r"([a-z][a-z0-9]*)=([0-9.]+)s\(sys ")

MODEL = "bench-llm"
DOC_CHARS = 700  # two paragraphs of about 400 characters: two chunks of the default 512
READY_TIMEOUT_S = 60.0
POLL_S = 0.1
# A round starts once its workers sit idle (a tenth of a core over half a second): a prefork
# child opens its connections on a thread of its own after it reports ready, which is start-up,
# not ingestion.
QUIET_SHARE = 0.1
QUIET_INTERVAL_S = 0.5
LOGS = data_dir() / "bench-logs"
LAYOUTS = ("split", "plain")
# The options a revision's copy of this bench shares with it, as far back as 57582ea.
SHARED_OPTIONS = (
    "docs",
    "latency_s",
    "embeddings",
    "names",
    "docparse_concurrency",
    "graph_workers",
    "batch_files",
    "uploads_in_flight",
    "redis_db",
    "timeout_s",
    "warmup_docs",
)


def _reply(suffix: str = "") -> dict[str, Any]:
    """The extraction answer: three entities and two relations, names ending in `suffix`."""
    board, bridge, loop = (
        f"{name}{suffix}" for name in ("Harbour Board", "Northern Bridge", "Cooling Loop")
    )
    return {
        "nodes": [
            {"name": board, "attributes": ["authority"]},
            {"name": bridge, "attributes": ["structure"]},
            {"name": loop, "attributes": []},
        ],
        "relations": [
            {"node1": board, "node2": bridge, "type": "maintains"},
            {"node1": bridge, "node2": loop, "type": "holds"},
        ],
    }


@dataclass(frozen=True)
class Config:
    docs: int
    latency_s: float
    slots: list[int]
    embeddings: str
    names: str
    docparse_concurrency: int
    layouts: list[str]
    graph_workers: int
    batch_files: int
    uploads_in_flight: int
    redis_db: int
    timeout_s: float
    warmup_docs: int
    repeat: int
    before: str | None


@dataclass(frozen=True)
class RoundResult:
    slots: int
    layout: str
    docs: int
    wall_s: float
    completed: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    retries: int
    stats: dict[str, Any]
    stats_at_s: float  # when the stats were read, from the first upload
    cpu: CpuSpent  # CPU seconds by process kind inside the window, and the machine's
    resolution_tail_s: float  # the last document completed to the base's last resolution run


@dataclass(frozen=True)
class PerChunk:
    """One round's busy core-ms per chunk: the machine's, and each kind of process's."""

    busy_ms: float
    by_kind_ms: dict[str, float]

    @classmethod
    def from_seconds(cls, busy_s: float, by_kind_s: Mapping[str, float], calls: int) -> PerChunk:
        """The figures of a round that spent these CPU seconds on `calls` chunks."""
        per_s = 1000 / max(calls, 1)
        return cls(busy_s * per_s, {kind: spent * per_s for kind, spent in by_kind_s.items()})

    @classmethod
    def of(cls, r: RoundResult) -> PerChunk:
        """Our round's figures."""
        return cls.from_seconds(_busy_s(r), r.cpu.by_kind, r.calls)

    @property
    def databases_ms(self) -> float:
        """What Neo4j and PostgreSQL spent: the part no change to our Python code removes."""
        return sum(self.by_kind_ms.get(kind, 0.0) for kind in DATABASE_KINDS)


def _args() -> Config:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--latency-s", type=float, default=0.1)
    parser.add_argument(
        "--slots", default="4,8", help="comma-separated slot counts, one round each"
    )
    parser.add_argument("--embeddings", choices=["server", "local"], default="server")
    parser.add_argument(
        "--names",
        choices=["shared", "distinct"],
        default="shared",
        help="shared: every chunk names the same three entities (one base node each, written by "
        "every chunk); distinct: each document names entities of its own",
    )
    parser.add_argument("--docparse-concurrency", type=int, default=2)
    parser.add_argument(
        "--graph-workers",
        type=int,
        default=1,
        help="graph worker processes, sharing the slots' threads (each its own GIL)",
    )
    parser.add_argument(
        "--layout",
        default="split",
        help="comma-separated, one round of each slot count per layout: split: a docparse worker "
        "and a graph worker on threads (what `graphrag worker` runs with no options); plain: "
        "one prefork worker of every queue, as `graphrag worker --pool prefork` runs",
    )
    parser.add_argument("--batch-files", type=int, default=25, help="files per upload request")
    parser.add_argument("--uploads-in-flight", type=int, default=4)
    parser.add_argument("--redis-db", type=int, default=1, help="0 is the demo's, 2-15 tests'")
    parser.add_argument("--timeout-s", type=float, default=900.0)
    parser.add_argument(
        "--warmup-docs",
        type=int,
        default=300,
        help="documents of a first round at the first slot count, not reported (0: none)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="rounds of each slot count; above 1, medians too"
    )
    parser.add_argument(
        "--before",
        help="a git revision whose own copy of this bench runs before each repeat of ours (split "
        "layout, same parameters, its own warm-up): its busy core-ms per chunk against ours",
    )
    a = parser.parse_args()
    layouts = list(dict.fromkeys(a.layout.split(",")))  # each layout once, in the order given
    if not set(layouts) <= set(LAYOUTS):
        parser.error(f"--layout: each of {', '.join(LAYOUTS)}")
    if a.before and "split" not in layouts:
        parser.error("--before compares split rounds: --layout needs split")
    return Config(
        docs=a.docs,
        latency_s=a.latency_s,
        slots=[int(s) for s in a.slots.split(",")],
        embeddings=a.embeddings,
        names=a.names,
        docparse_concurrency=a.docparse_concurrency,
        layouts=layouts,
        graph_workers=a.graph_workers,
        batch_files=a.batch_files,
        uploads_in_flight=a.uploads_in_flight,
        redis_db=a.redis_db,
        timeout_s=a.timeout_s,
        warmup_docs=a.warmup_docs,
        repeat=a.repeat,
        before=a.before,
    )


def _wait_http(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{url}: the process exited; see {LOGS}")
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(POLL_S)
    raise SystemExit(f"{url} did not answer in {READY_TIMEOUT_S}s")


def _spawn(argv: list[str], env: dict[str, str], log_name: str) -> subprocess.Popen[bytes]:
    LOGS.mkdir(parents=True, exist_ok=True)
    with (LOGS / log_name).open("ab") as log:
        return subprocess.Popen(
            argv, cwd=project_root(), env=env, stdout=log, stderr=subprocess.STDOUT
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=READY_TIMEOUT_S)


def _bench_env(services: dict[str, str], db_url: str, llm_url: str, cfg: Config) -> dict[str, str]:
    env = {
        **os.environ,
        **services,
        "PYTHONPATH": str(project_root()),
        "DATABASE_URL": db_url,
        "REDIS_URL": services["REDIS_URL"].rsplit("/", 1)[0] + f"/{cfg.redis_db}",
        "NEO4J_ENABLE": "true",
        "AUTH_REQUIRED": "false",
        "STORAGE_DIR": str(data_dir() / f"bench-e2e-files-{uuid.uuid4().hex[:8]}"),
        "LLM_BASE_URL": f"{llm_url}/v1",
        "LLM_MODEL": MODEL,
        "METRICS_WORKER_PORT": "0",
    }
    # Queues of this run's own: no other worker on the Redis database takes (or purges) them.
    run = uuid.uuid4().hex[:8]
    for name in ("DEFAULT", "DOCPARSE", "GRAPH", "MEMORY"):
        env[f"CELERY_{name}_QUEUE"] = f"bench-e2e-{name.lower()}-{run}"
    if cfg.embeddings == "server":
        env |= {"EMBEDDING_BACKEND": "openai", "EMBEDDING_BASE_URL": f"{llm_url}/v1"}
    return env


def _documents(tag: str, count: int) -> list[tuple[str, bytes]]:
    return [(f"{tag}-{i}.md", paragraphs(f"{tag}-{i}", DOC_CHARS).encode()) for i in range(count)]


def _upload(
    http: httpx.Client, api: str, kb_id: str, cfg: Config, docs: list[tuple[str, bytes]]
) -> int:
    batches = [docs[i : i + cfg.batch_files] for i in range(0, len(docs), cfg.batch_files)]

    def send(batch: list[tuple[str, bytes]]) -> int:
        files = [("files", (name, data, "text/markdown")) for name, data in batch]
        url = f"{api}/api/v1/knowledge-bases/{kb_id}/knowledge/files"
        response = http.post(url, files=files)
        response.raise_for_status()
        return int(response.json()["accepted"])

    with ThreadPoolExecutor(cfg.uploads_in_flight) as pool:
        return sum(pool.map(send, batches))


def _wait_all(sessions: sessionmaker[Session], kb_id: str, count: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    working = [s.value for s in ParseStatus.working()]
    while time.monotonic() < deadline:
        with session_scope(sessions) as session:
            done = session.execute(
                select(func.count())
                .select_from(Knowledge)
                .where(Knowledge.kb_id == uuid.UUID(kb_id), Knowledge.parse_status.not_in(working))
            ).scalar_one()
        if done >= count:
            return
        time.sleep(POLL_S)
    raise SystemExit(f"documents not finished after {timeout_s}s; see {LOGS}")


def _wait_resolved(sessions: sessionmaker[Session], kb_id: str, timeout_s: float) -> None:
    """Until no resolution run the round's documents queued is owed: the runs still going when
    the last document completes are work of the round, counted in its CPU."""
    owed = (
        select(func.count())
        .select_from(OutboxTask)
        .join(Knowledge, Knowledge.id == OutboxTask.knowledge_id)
        .where(
            Knowledge.kb_id == uuid.UUID(kb_id),
            OutboxTask.task_name == TaskName.RESOLVE_ENTITIES.value,
            OutboxTask.status.in_(OutboxStatus.live()),
        )
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with session_scope(sessions) as session:
            if session.execute(owed).scalar_one() == 0:
                return
        time.sleep(POLL_S)
    raise SystemExit(f"entity resolution not finished after {timeout_s}s; see {LOGS}")


def _totals(sessions: sessionmaker[Session], kb_id: str) -> tuple[int, int, int, int, int]:
    with session_scope(sessions) as session:
        row = session.execute(
            select(
                func.count().filter(Knowledge.parse_status == ParseStatus.COMPLETED),
                func.coalesce(func.sum(Knowledge.llm_calls), 0),
                func.coalesce(func.sum(Knowledge.llm_prompt_tokens), 0),
                func.coalesce(func.sum(Knowledge.llm_completion_tokens), 0),
                func.coalesce(func.sum(Knowledge.graph_retries), 0),
            ).where(Knowledge.kb_id == uuid.UUID(kb_id))
        ).one()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4])


class Bench:
    """The run's services: database, scripted LLM, API; workers are started per round."""

    def __init__(
        self,
        cfg: Config,
        settings: Settings,
        env: dict[str, str],
        llm: str,
        api: str,
        roots: dict[int, str],
    ):
        self.cfg, self.settings, self.env, self.llm, self.api = cfg, settings, env, llm, api
        self.roots = roots  # the run's own processes by kind (the API, the scripted server)
        self.sessions = make_session_factory(make_engine(settings))
        self.kb_ids: list[str] = []
        # One client for the run, as any client would keep: each new one builds its TLS context
        # (about 30 ms of CPU), and the uploads would spend that inside the measured window.
        self.http = httpx.Client(timeout=READY_TIMEOUT_S)

    def _script(self, slots: int, tag: str, docs: int) -> None:
        rules = []
        if self.cfg.names == "distinct":
            # Every sentence of document i holds "(ref {tag}-{i}-<n>)" (bench/sample_text.py).
            rules = [
                {
                    "match": {"user": {"contains": f"(ref {tag}-{i}-"}},
                    "reply": {"content": _reply(f" {i}")},
                }
                for i in range(docs)
            ]
        script = {
            "slots": slots,
            "latency_s": self.cfg.latency_s,
            "models": [MODEL],
            "rules": rules,
            "default": {"content": _reply()},
        }
        self.http.put(f"{self.llm}/_script", json=script).raise_for_status()
        self.http.delete(f"{self.llm}/_requests").raise_for_status()
        self.http.delete(f"{self.llm}/_stats").raise_for_status()

    def _kb(self, slots: int) -> str:
        body = {
            "name": f"bench-e2e-s{slots}-{uuid.uuid4().hex[:6]}",
            "indexing": {"graph_enabled": True},
            "extract_config": {"enabled": True},
        }
        response = self.http.post(f"{self.api}/api/v1/knowledge-bases", json=body)
        response.raise_for_status()
        kb_id = str(response.json()["id"])
        self.kb_ids.append(kb_id)
        return kb_id

    def round(self, slots: int, docs: int, layout: str) -> RoundResult:
        from workers.celery_app import create_celery

        tag = f"e2e-s{slots}-{uuid.uuid4().hex[:6]}"
        self._script(slots, tag, docs)
        celery = create_celery(self.settings)
        celery.control.purge()
        redis.Redis.from_url(self.settings.redis.url).delete(
            background_slots_key(self.settings.llm)
        )
        c = self.settings.celery
        plain = layout == "plain"
        docparse = WorkerProcess(
            self.env,
            LOGS / "e2e-docparse.log",
            self.cfg.docparse_concurrency,
            c.queues if plain else [c.docparse_queue],
        )
        # One graph worker sizes itself from the server's slots; several share those threads.
        n = 0 if plain else self.cfg.graph_workers
        threads = 0 if n == 1 else math.ceil(graph_threads(self.settings, slots) / max(n, 1))
        graphs = [
            WorkerProcess(self.env, LOGS / f"e2e-graph{i}.log", threads, [c.graph_queue])
            for i in range(n)
        ]
        files = _documents(tag, docs)
        kb_id = self._kb(slots)
        docparse.start(celery)
        try:
            for graph in graphs:
                graph.start(celery)
            workers = {_pid(g): "graph" for g in graphs} | {_pid(docparse): "docparse"}
            if not wait_quiet(workers, QUIET_SHARE, QUIET_INTERVAL_S, READY_TIMEOUT_S):
                print(f"# workers still busy after {READY_TIMEOUT_S}s; measuring anyway")
            workers[os.getpid()] = "bench"
            window = CpuWindow({**self.roots, **workers})
            window.start()
            started = time.monotonic()
            accepted = _upload(self.http, self.api, kb_id, self.cfg, files)
            _wait_all(self.sessions, kb_id, accepted, self.cfg.timeout_s)
            wall = time.monotonic() - started
            _wait_resolved(self.sessions, kb_id, self.cfg.timeout_s)
            tail = time.monotonic() - started - wall
            cpu = window.stop()
        finally:
            for graph in graphs:
                graph.stop()
            docparse.stop()
        completed, calls, prompt, completion, retries = _totals(self.sessions, kb_id)
        stats = self.http.get(f"{self.llm}/_stats").json()
        stats_at = time.monotonic() - started
        return RoundResult(
            slots,
            layout,
            docs,
            wall,
            completed,
            calls,
            prompt,
            completion,
            retries,
            stats,
            stats_at,
            cpu,
            tail,
        )

    def cleanup(self) -> None:
        """Remove the rounds' graphs and stored files (the database is dropped by the caller)."""
        from graphrag.graph.neo4j_client import connect_driver

        self.http.close()
        driver = connect_driver(self.settings.neo4j)
        try:
            for kb_id in self.kb_ids:
                remove_label(driver, kb_id)
        finally:
            driver.close()
        shutil.rmtree(self.settings.resolve(self.settings.storage_dir), ignore_errors=True)


def _pid(worker: WorkerProcess) -> int:
    if worker.proc is None:
        raise SystemExit("worker not started")
    return worker.proc.pid


def _floor_s(cfg: Config, r: RoundResult) -> float:
    return math.ceil(r.calls / r.slots) * cfg.latency_s


def _report(cfg: Config, r: RoundResult) -> None:
    floor = _floor_s(cfg, r)
    n = max(r.completed, 1)
    s = r.stats
    detail = (
        f"wall={r.wall_s:.2f}s floor={floor:.2f}s docs={r.completed}/{r.docs} calls={r.calls} "
        f"server_calls={s['calls']} calls/doc={r.calls / n:.2f} "
        f"tokens/doc={r.prompt_tokens / n:.0f}+{r.completion_tokens / n:.0f} "
        f"retries={r.retries} peak_in_flight={s['peak_received']}/{r.slots} "
        f"peak_served={s['peak_active']} mean_in_flight={s['mean_active']:.2f}"
    )
    name = _name(r.slots, r.layout)
    print_ratio(name, "wall", "llm_floor", r.wall_s / floor, detail)
    lead = r.stats_at_s - s["first_ago_s"]
    tail = r.wall_s - (r.stats_at_s - s["last_ago_s"])
    span = (
        f"span={s['span_s']:.2f}s floor={floor:.2f}s busy={s['busy_s']:.2f}s "
        f"utilisation={s['busy_s'] / (r.slots * r.wall_s):.0%} of the wall "
        f"lead={lead:.2f}s tail={tail:.2f}s"
    )
    print_ratio(name, "llm_span", "llm_floor", s["span_s"] / floor, span)
    c = r.cpu
    by_kind = " ".join(
        f"{kind}={spent:.1f}s(sys {c.system_by_kind.get(kind, 0.0):.1f})"
        for kind, spent in sorted(c.by_kind.items(), key=lambda kv: -kv[1])
        if spent >= 0.05
    )
    busy = _busy_s(r)
    cpu = (
        f"busy={busy:.1f} stolen={c.stolen_s:.1f} of {c.cores_s:.1f} core-s "
        f"resolution_tail={r.resolution_tail_s:.2f}s; {by_kind}"
    )
    print_ratio(name, "cpu_busy", "cpu_available", busy / c.cores_s, cpu)
    detail_chunk = f"{busy:.1f} core-s for {r.calls} chunks, one LLM call each; {r.layout}"
    print(f"{name}: busy_core_ms_per_chunk = {PerChunk.of(r).busy_ms:.1f} ({detail_chunk})")


def _summarise(
    cfg: Config,
    results: dict[tuple[str, int], list[RoundResult]],
    before: dict[int, list[PerChunk]],
) -> None:
    """Medians over repeats, the plain layout's wall over the split's, and the busy CPU per
    chunk over the earlier revision's, in all and by kind of process."""
    if cfg.repeat > 1:
        for (layout, slots), rounds in results.items():
            values = sorted(r.wall_s / _floor_s(cfg, r) for r in rounds)
            detail = f"runs={len(values)} " + " ".join(f"{v:.2f}" for v in values)
            name = f"{_name(slots, layout)}_median"
            print_ratio(name, "wall", "llm_floor", statistics.median(values), detail)
    for slots in cfg.slots:
        split, plain = results.get(("split", slots)), results.get(("plain", slots))
        if split and plain:
            walls = [statistics.median(r.wall_s for r in rs) for rs in (plain, split)]
            detail = f"plain={walls[0]:.2f}s split={walls[1]:.2f}s, medians of {len(split)}"
            print_ratio(
                f"ingest_e2e_s{slots}", "plain_wall", "split_wall", walls[0] / walls[1], detail
            )
        if split and before.get(slots):
            _compare_before(cfg, slots, [PerChunk.of(r) for r in split], before[slots])


def _compare_before(cfg: Config, slots: int, ours: list[PerChunk], old: list[PerChunk]) -> None:
    """Our median busy core-ms per chunk over the earlier revision's, then each kind of
    process's, then what the two databases alone spend of half the earlier revision's."""
    name, baseline = f"ingest_e2e_s{slots}_core_ms_per_chunk", f"before_{cfg.before}"
    runs = f"medians of {len(ours)} and {len(old)} rounds"
    mine, theirs = (statistics.median(p.busy_ms for p in rounds) for rounds in (ours, old))
    detail = f"ours={mine:.1f} before={theirs:.1f} core-ms, {runs}"
    print_ratio(name, "ours", baseline, mine / theirs, detail)
    kinds = {kind for p in ours + old for kind in p.by_kind_ms}
    medians = {kind: (_kind_median(ours, kind), _kind_median(old, kind)) for kind in kinds}
    for kind, (mine_k, theirs_k) in sorted(medians.items(), key=lambda kv: -kv[1][0]):
        if theirs_k > 0:
            detail = f"ours={mine_k:.1f} before={theirs_k:.1f} core-ms, {runs}"
            print_ratio(f"{name}_{kind}", "ours", baseline, mine_k / theirs_k, detail)
    databases = statistics.median(p.databases_ms for p in ours)
    detail = (
        f"ours in {' and '.join(DATABASE_KINDS)}={databases:.1f} core-ms, half of the earlier "
        f"revision's busy CPU={theirs / 2:.1f}, {runs}"
    )
    print_ratio(f"{name}_databases", "ours", f"half_{baseline}", databases / (theirs / 2), detail)


def _kind_median(rounds: list[PerChunk], kind: str) -> float:
    return statistics.median(p.by_kind_ms.get(kind, 0.0) for p in rounds)


def _before_round(cfg: Config, environ: Mapping[str, str]) -> dict[int, PerChunk]:
    """The busy core-ms per chunk, in all and by kind of process, of one round of each slot count
    by `cfg.before`'s own copy of this bench (same options, its own warm-up, split layout); its
    header is shown for its load."""
    options = [f"--{name.replace('_', '-')}={getattr(cfg, name)}" for name in SHARED_OPTIONS]
    options += ["--repeat=1", "--slots=" + ",".join(str(slots) for slots in cfg.slots)]
    budget_s = cfg.timeout_s * (1 + len(cfg.slots))
    lines = run_bench_at(str(cfg.before), "bench/ingest_e2e.py", options, environ, budget_s)
    calls: dict[int, int] = {}
    spent: dict[int, tuple[float, dict[str, float]]] = {}  # busy seconds, and by kind
    for line in lines:
        if line.startswith("# machine:"):
            print(f"# before ({cfg.before}) {line.removeprefix('# ')}")
        name, _, rest = line.partition(": ")
        count = name.removeprefix("ingest_e2e_s")
        if not count.isdigit():
            continue
        if rest.startswith("wall/llm_floor"):
            calls[int(count)] = int(_field(rest, "calls"))
        elif rest.startswith("cpu_busy/cpu_available"):
            by_kind = {kind: float(seconds) for kind, seconds in _KIND_SECONDS.findall(rest)}
            spent[int(count)] = (float(_field(rest, "busy")), by_kind)
    # A slot count missing a line (or its calls) gives no figure rather than a crash.
    per_chunk = {
        slots: PerChunk.from_seconds(busy, by_kind, calls[slots])
        for slots, (busy, by_kind) in spent.items()
        if calls.get(slots)
    }
    for slots, p in per_chunk.items():
        print(f"# before ({cfg.before}) S = {slots}: {p.busy_ms:.1f} busy core-ms per chunk")
    return per_chunk


def _field(text: str, key: str) -> str:
    """The value of `key=` in a bench line's detail (after a space or the opening bracket)."""
    found = re.search(rf"[ (]{key}=([0-9.]+)", text)
    if found is None:
        raise SystemExit(f"no {key}= in: {text}")
    return found.group(1)


def _name(slots: int, layout: str) -> str:
    return f"ingest_e2e_s{slots}" + ("" if layout == "split" else f"_{layout}")


def _busy_s(r: RoundResult) -> float:
    c = r.cpu
    return c.cores_s - c.idle_s - c.stolen_s


def main() -> None:
    cfg = _args()
    print_header("ingest_e2e", vars(cfg))
    # As started: the settings below point this process's environment at the run's database.
    environ = dict(os.environ)
    services = services_env()
    db_url = create_database(services["DATABASE_URL"], "bench_e2e")
    llm_port, api_port = free_port(), free_port()
    llm_url, api_url = f"http://127.0.0.1:{llm_port}", f"http://127.0.0.1:{api_port}"
    env = _bench_env(services, db_url, llm_url, cfg)
    settings = test_settings(env)
    upgrade_to_head(settings)
    python = sys.executable
    llm = _spawn(
        [python, "-m", "tests.fakes.scripted_llm", "--port", str(llm_port), "--quiet"],
        env,
        "e2e-llm.log",
    )
    api = _spawn([python, "-m", "cli.main", "serve", "--port", str(api_port)], env, "e2e-api.log")
    bench = Bench(cfg, settings, env, llm_url, api_url, {api.pid: "api", llm.pid: "llm"})
    try:
        _wait_http(f"{llm_url}/_health", llm)
        _wait_http(f"{api_url}/health", api)
        if cfg.warmup_docs:
            # The first work after a Neo4j start runs partly in its JIT compiler: not measured.
            warm = bench.round(cfg.slots[0], cfg.warmup_docs, cfg.layouts[0])
            print(f"# warm-up: {warm.docs} documents at S = {warm.slots} in {warm.wall_s:.1f}s")
        results: dict[tuple[str, int], list[RoundResult]] = {}
        before: dict[int, list[PerChunk]] = {}
        for _ in range(cfg.repeat):
            # The earlier revision's rounds alternate with ours: the machine's speed drifts.
            for slots, per_chunk in (_before_round(cfg, environ) if cfg.before else {}).items():
                before.setdefault(slots, []).append(per_chunk)
            for layout in cfg.layouts:
                for slots in cfg.slots:
                    result = bench.round(slots, cfg.docs, layout)
                    _report(cfg, result)
                    results.setdefault((layout, slots), []).append(result)
        _summarise(cfg, results, before)
    finally:
        _stop(api)
        _stop(llm)
        bench.cleanup()
        drop_database(db_url)


if __name__ == "__main__":
    main()
