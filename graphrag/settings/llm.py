"""Settings of the models: the OpenAI-compatible LLM server and the embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator

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
    concurrency_max_hold_s: float = Field(gt=0.0, description="a background slot's longest hold")
    concurrency_wait_s: float
    concurrency_poll_s: float = Field(gt=0.0)
    props_timeout_s: float = Field(gt=0.0)
    interactive_limit: int = Field(gt=0, description="interactive calls at once per model")
    interactive_wait_s: float = Field(gt=0.0)
    interactive_max_hold_s: float = Field(gt=0.0, description="an interactive slot's longest hold")
    slot_lease_s: float = Field(gt=0.0, description="a slot's lease from its last renewal")
    slot_renew_s: float = Field(gt=0.0, description="how often a holder renews its leases")
    slot_stale_after_s: float = Field(gt=0.0, description="a lease not renewed this long is stale")

    @model_validator(mode="after")
    def _leases_renew_in_time(self) -> LlmSettings:
        """A holder renews before its lease is reported stale, and well before it ends."""
        if not self.slot_renew_s < self.slot_stale_after_s <= self.slot_lease_s:
            raise ValueError("llm.slot_renew_s < llm.slot_stale_after_s <= llm.slot_lease_s")
        if self.slot_lease_s > min(self.concurrency_max_hold_s, self.interactive_max_hold_s):
            raise ValueError("llm.slot_lease_s must not exceed the max hold of either kind")
        return self


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
