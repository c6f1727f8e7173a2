"""The embedding port and the factory that picks its adapter from the settings.

Adapters: `LocalMiniLmEmbedder` (packaged int8 all-MiniLM-L6-v2 on CPU, onnxruntime, offline) and
`OpenAiCompatibleEmbedder` (any `/v1/embeddings` server). Both batch internally by
`embedding.batch_size` and raise `EmbeddingError` when the vectors cannot be trusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphrag.search.minilm_embedder import LocalMiniLmEmbedder
from graphrag.search.openai_embedder import OpenAiCompatibleEmbedder
from graphrag.settings import EmbeddingSettings

__all__ = ["Embedder", "LocalMiniLmEmbedder", "OpenAiCompatibleEmbedder", "build_embedder"]


class Embedder(Protocol):
    """Turns texts into fixed-length vectors for cosine search."""

    @property
    def dim(self) -> int:
        """Length of every vector returned; equals `embedding.dim`."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of one search query."""
        ...

    def close(self) -> None:
        """Release what the adapter holds (connections); called once, when the process ends."""
        ...


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    """The adapter `embedding.backend` names, checked against `embedding.dim`."""
    if settings.backend == "local":
        return LocalMiniLmEmbedder(settings)
    return OpenAiCompatibleEmbedder(settings)
