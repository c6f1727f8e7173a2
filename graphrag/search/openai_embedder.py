"""Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, llama.cpp, vLLM...)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

import httpx
from pydantic import BaseModel, ValidationError

from graphrag.errors import EmbeddingError
from graphrag.settings import EmbeddingSettings

__all__ = ["OpenAiCompatibleEmbedder"]


class _EmbeddingItem(BaseModel):
    index: int
    embedding: list[float]


class _EmbeddingResponse(BaseModel):
    data: list[_EmbeddingItem]


class OpenAiCompatibleEmbedder:
    """POSTs batches of texts to `{base_url}/embeddings` and checks what comes back.

    `transport` replaces the network layer (tests pass an `httpx.MockTransport`).
    """

    def __init__(
        self, settings: EmbeddingSettings, transport: httpx.BaseTransport | None = None
    ) -> None:
        self._model = settings.model
        self._dim = settings.dim
        self._batch_size = settings.batch_size
        # A trailing slash makes httpx append "embeddings" to the base path (".../v1/embeddings").
        self._client = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            timeout=settings.timeout_s,
            headers={"Authorization": f"Bearer {settings.api_key.get_secret_value()}"},
            transport=transport,
        )

    @property
    def dim(self) -> int:
        """Length of every vector returned."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order; raises `EmbeddingError` on any server or shape fault."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(list(texts[start : start + self._batch_size])))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query."""
        return self.embed([text])[0]

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAiCompatibleEmbedder:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post("embeddings", json={"model": self._model, "input": batch})
            response.raise_for_status()
            parsed = _EmbeddingResponse.model_validate_json(response.content)
        except httpx.HTTPStatusError as exc:
            raise EmbeddingError(
                "embedding server answered with an error",
                status=exc.response.status_code,
                body=exc.response.text,
            ) from exc
        except httpx.HTTPError as exc:
            raise EmbeddingError("embedding server unreachable", reason=str(exc)) from exc
        except ValidationError as exc:
            raise EmbeddingError("embedding server sent an unexpected body") from exc
        items = sorted(parsed.data, key=lambda item: item.index)
        if [item.index for item in items] != list(range(len(batch))):
            raise EmbeddingError(
                "embedding server returned the wrong vectors", sent=len(batch), got=len(items)
            )
        for item in items:
            if len(item.embedding) != self._dim:
                raise EmbeddingError(
                    "embedding dimension mismatch", expected=self._dim, got=len(item.embedding)
                )
        return [item.embedding for item in items]
