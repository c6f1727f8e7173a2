"""Settings of the models: the OpenAI-compatible LLM server and the embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from graphrag.settings.base import Section as _Section

__all__ = ["SCHEMA_EMBEDDING_DIM", "EmbeddingSettings", "LlmSettings"]

# The width of the stored chunk vectors (pgvector's `chunks.embedding`), fixed by the migrations:
# another width needs a migration and a re-embed, not a settings edit. `embedding.dim` must equal
# it (checked when the settings load); Neo4j's vector indexes are sized by `embedding.dim`.
SCHEMA_EMBEDDING_DIM = 384


class LlmSettings(_Section):
    base_url: str
    model: str
    api_key: SecretStr
    timeout_s: float
    temperature: float
    max_tokens: int
    json_schema: bool
    system_role: bool
    concurrency_limit: int | Literal["auto"] = Field(
        description="background calls at once per model; auto: the server's slot count"
    )
    concurrency_fallback: int = Field(gt=0, description="the limit when auto cannot be read")
    concurrency_lease_s: int
    concurrency_wait_s: float
    concurrency_poll_s: float = Field(gt=0.0)
    props_timeout_s: float = Field(gt=0.0)
    interactive_limit: int = Field(gt=0, description="interactive calls at once per model")
    interactive_wait_s: float = Field(gt=0.0)
    interactive_lease_s: int = Field(gt=0)


class EmbeddingSettings(_Section):
    """The embedder; `dim` is the width of its vectors, that of the schema (see above)."""

    backend: Literal["local", "openai"]
    model: str
    base_url: str
    api_key: SecretStr
    dim: int
    batch_size: int
    max_seq_length: int
    timeout_s: float
    onnx_file: Path | None = Field(description="local backend: null = the packaged int8 model")
    onnx_size_bytes: int = Field(gt=0)
    onnx_sha256: str = Field(min_length=64, max_length=64)
    onnx_threads: int = Field(ge=0, description="onnxruntime intra-op threads; 0: one per core")
    tokenizer_file: Path | None = Field(description="null = the packaged MiniLM tokenizer.json")
