"""Ingestion throughput: parse+chunk against raw PyMuPDF, and the queue against in-process runs.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python bench/ingest.py [--pages 60] [--docs 12] ...

(a) `parse_chunk`: pages/s of `parse_file` + `chunk_document` over a generated text PDF, over
    pages/s of `page.get_text()` on the same bytes (ours does more: blocks in reading order, text
    cleaning, image and scan checks, chunking). Below 1: what our parsing costs.
(b) `queue_docs_per_min`: documents/min uploaded through `submit_files` onto the Celery queue and
    processed by a real `graphrag worker` process, over the same documents uploaded through the
    same function with a queue that runs `process_document` inline, one after the other. Above
    1: the worker's parallelism outweighs the queue's overhead.
"""

from __future__ import annotations

import argparse
import os

# The worker pins BLAS to one thread per process (`graphrag worker`); the in-process baseline
# does the same so the two differ only by the queue. Must be set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from bench.harness import median, print_header, print_ratio, timed
from bench.ingest_queue import QueueBenchConfig, run_queue_bench
from bench.sample_text import paragraphs
from graphrag.ingest.chunker import chunk_document
from graphrag.ingest.models import FileType
from graphrag.ingest.parsers.parse import parse_file
from graphrag.kb.chunking import default_chunking
from graphrag.settings import IngestSettings, get_settings
from tests.support.sample_files import text_pdf


def _ours(data: bytes, settings: IngestSettings) -> int:
    parsed = parse_file(data, FileType.PDF, settings)
    return len(chunk_document(parsed, default_chunking(settings)))


def _raw_pymupdf(data: bytes) -> int:
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as document:
        return sum(len(page.get_text()) for page in document)


def parse_chunk_bench(pages: int, page_chars: int, repeats: int) -> None:
    """Both extractions on the same PDF, alternating which goes first on each repeat."""
    settings = get_settings().ingest
    data = text_pdf([paragraphs(f"page{i}", page_chars) for i in range(pages)])
    chunks = _ours(data, settings)  # warm-up: imports, font caches
    _raw_pymupdf(data)
    ours_s: list[float] = []
    raw_s: list[float] = []
    for repeat in range(repeats):
        runs = [(ours_s, lambda: _ours(data, settings)), (raw_s, lambda: _raw_pymupdf(data))]
        for sink, work in runs if repeat % 2 == 0 else reversed(runs):
            sink.append(timed(work)[1])
    ours_rate, raw_rate = pages / median(ours_s), pages / median(raw_s)
    print_ratio(
        "parse_chunk_pages_per_s",
        "ours",
        "pymupdf_get_text",
        ours_rate / raw_rate,
        f"n={repeats} runs x {pages} pages, medians: ours {ours_rate:.0f} pages/s "
        f"({chunks} chunks), pymupdf {raw_rate:.0f} pages/s",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=60, help="pages of the parse+chunk PDF")
    parser.add_argument("--page-chars", type=int, default=1800, help="text characters per page")
    parser.add_argument("--repeats", type=int, default=5, help="parse+chunk runs (median kept)")
    parser.add_argument("--docs", type=int, default=12, help="documents for the queue part")
    parser.add_argument("--doc-pages", type=int, default=1, help="pages per queued document")
    parser.add_argument("--rounds", type=int, default=1, help="inline+queue rounds (median)")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--redis-db", type=int, default=1, help="Redis database of the queue")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="give up waiting after")
    parser.add_argument("--skip-queue", action="store_true", help="only the parse+chunk part")
    args = parser.parse_args()
    print_header("ingest", vars(args))
    parse_chunk_bench(args.pages, args.page_chars, args.repeats)
    if not args.skip_queue:
        run_queue_bench(
            QueueBenchConfig(
                docs=args.docs,
                doc_pages=args.doc_pages,
                page_chars=args.page_chars,
                rounds=args.rounds,
                concurrency=args.concurrency,
                redis_db=args.redis_db,
                timeout_s=args.timeout_s,
            )
        )


if __name__ == "__main__":
    main()
