"""Settings of the models: the OpenAI-compatible LLM server and the embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from graphrag.settings.base import Section as _Section

__all__ = ["LOCAL_MODELS", "SCHEMA_EMBEDDING_DIM", "EmbeddingSettings", "LlmSettings", "LocalModel"]

# The width of the stored chunk vectors (pgvector's `chunks.embedding`), fixed by the migrations:
# another width needs a migration and a re-embed, not a settings edit. `embedding.dim` must equal
# it (checked when the settings load); Neo4j's vector indexes are sized by `embedding.dim`.
SCHEMA_EMBEDDING_DIM = 384


# The packaged GGUF models the local llama.cpp server can run (deploy/local/gguf_path.py).
LocalModel = Literal["qwen2.5-1.5b", "qwen2.5-0.5b", "gemma3-270m"]
LOCAL_MODELS: tuple[LocalModel, ...] = ("qwen2.5-1.5b", "qwen2.5-0.5b", "gemma3-270m")


class LlmSettings(_Section):
    base_url: str
    model: str
    local_model: LocalModel = Field(
        description="the packaged model deploy/local/llama_server.sh serves (services --llama)"
    )
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
    model_dir: Path | None
