"""The numpy BERT forward pass the product ran before onnxruntime: `bench/embeddings.py`'s baseline.

Reads a Hugging Face folder (`config.json` + `model.safetensors`, float32 weights) and computes
the last hidden states for a padded batch of token ids, exactly as `transformers.BertModel` does
in eval mode (no dropout, absolute positions, token type 0, post-LayerNorm blocks, erf GELU);
`NumpyMiniLm` adds the tokenizer, mean pooling and L2 normalisation of the old embedder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from safetensors import SafetensorError
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from graphrag.errors import EmbeddingError

__all__ = ["BertConfig", "BertEncoder", "NumpyEmbedder", "NumpyMiniLm", "gelu"]

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7 on erf, far below float32 noise here.
# numpy has no erf and scipy is not a dependency.
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: FloatArray) -> FloatArray:
    ax = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * ax)
    a1, a2, a3, a4, a5 = _AS_A
    poly = a5 * t
    for a in (a4, a3, a2):
        poly += a
        poly *= t
    poly += a1
    poly *= t
    np.square(ax, out=ax)
    np.negative(ax, out=ax)
    np.exp(ax, out=ax)
    poly *= ax  # poly * exp(-x^2)
    np.subtract(1.0, poly, out=poly)
    result: FloatArray = np.copysign(poly, x, out=poly)
    return result


def gelu(x: FloatArray) -> FloatArray:
    """GELU in its exact erf form, as BERT's `hidden_act: gelu` specifies."""
    # In place on the erf result: these activations are the largest arrays of the pass.
    out = _erf(x * np.float32(1.0 / np.sqrt(2.0)))
    out += 1.0
    out *= x
    out *= 0.5
    return out


def _layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray, eps: float) -> FloatArray:
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    result: FloatArray = (x - mean) / np.sqrt(var + eps) * weight + bias
    return result


@dataclass(frozen=True)
class BertConfig:
    """The fields of a Hugging Face BERT `config.json` that the forward pass needs."""

    hidden_size: int
    num_layers: int
    num_heads: int
    layer_norm_eps: float
    max_positions: int

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        """Read and check `config.json`; only absolute-position BERT with erf GELU is supported."""
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("model_type") != "bert" or raw.get("hidden_act") != "gelu":
            raise EmbeddingError("unsupported model: expected BERT with gelu", config=str(path))
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise EmbeddingError("unsupported BERT position embeddings", config=str(path))
        return cls(
            hidden_size=int(raw["hidden_size"]),
            num_layers=int(raw["num_hidden_layers"]),
            num_heads=int(raw["num_attention_heads"]),
            layer_norm_eps=float(raw["layer_norm_eps"]),
            max_positions=int(raw["max_position_embeddings"]),
        )


@dataclass(frozen=True)
class _Layer:
    qkv_w: FloatArray  # (hidden, 3 * hidden): query, key and value fused into one matmul
    qkv_b: FloatArray
    attn_out_w: FloatArray
    attn_out_b: FloatArray
    attn_ln_w: FloatArray
    attn_ln_b: FloatArray
    ff_in_w: FloatArray
    ff_in_b: FloatArray
    ff_out_w: FloatArray
    ff_out_b: FloatArray
    out_ln_w: FloatArray
    out_ln_b: FloatArray


def _load_layer(w: dict[str, FloatArray], i: int) -> _Layer:
    p = f"encoder.layer.{i}."
    att = p + "attention."
    # torch Linear stores (out, in); transpose once so the forward pass is x @ W.
    qkv_w = np.concatenate([w[f"{att}self.{n}.weight"].T for n in ("query", "key", "value")], 1)
    qkv_b = np.concatenate([w[f"{att}self.{n}.bias"] for n in ("query", "key", "value")])
    return _Layer(
        qkv_w=np.ascontiguousarray(qkv_w),
        qkv_b=qkv_b,
        attn_out_w=np.ascontiguousarray(w[att + "output.dense.weight"].T),
        attn_out_b=w[att + "output.dense.bias"],
        attn_ln_w=w[att + "output.LayerNorm.weight"],
        attn_ln_b=w[att + "output.LayerNorm.bias"],
        ff_in_w=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
        ff_in_b=w[p + "intermediate.dense.bias"],
        ff_out_w=np.ascontiguousarray(w[p + "output.dense.weight"].T),
        ff_out_b=w[p + "output.dense.bias"],
        out_ln_w=w[p + "output.LayerNorm.weight"],
        out_ln_b=w[p + "output.LayerNorm.bias"],
    )


class BertEncoder:
    """BERT weights held as float32 arrays; calling it runs the encoder on a padded batch."""

    def __init__(self, config: BertConfig, weights: dict[str, FloatArray]) -> None:
        self.config = config
        self._word = weights["embeddings.word_embeddings.weight"]
        self._position = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self._emb_ln_w = weights["embeddings.LayerNorm.weight"]
        self._emb_ln_b = weights["embeddings.LayerNorm.bias"]
        self._layers = [_load_layer(weights, i) for i in range(config.num_layers)]

    @classmethod
    def from_dir(cls, model_dir: Path) -> BertEncoder:
        """Load `config.json` and `model.safetensors` from a Hugging Face model folder."""
        config = BertConfig.from_file(model_dir / "config.json")
        try:
            raw = load_file(str(model_dir / "model.safetensors"))
            weights = {k: v.astype(np.float32, copy=False) for k, v in raw.items()}
            return cls(config, weights)
        except (OSError, KeyError, SafetensorError) as exc:
            raise EmbeddingError("cannot load BERT weights", model_dir=str(model_dir)) from exc

    def __call__(self, input_ids: IntArray, attention_mask: IntArray) -> FloatArray:
        """Last hidden states, shape (batch, seq, hidden), for right-padded ids and their mask."""
        seq_len = input_ids.shape[1]
        if seq_len > self.config.max_positions:
            raise EmbeddingError("sequence longer than the model's positions", length=seq_len)
        x = self._word[input_ids] + self._position[:seq_len] + self._token_type
        x = _layer_norm(x, self._emb_ln_w, self._emb_ln_b, self.config.layer_norm_eps)
        # Padding keys score -inf so softmax gives them exactly zero weight; [CLS] is never
        # padding, so every row keeps a finite maximum.
        key_bias = np.where(attention_mask[:, None, None, :] == 0, -np.inf, 0.0).astype(np.float32)
        for layer in self._layers:
            x = self._block(x, key_bias, layer)
        return x

    def _block(self, x: FloatArray, key_bias: FloatArray, layer: _Layer) -> FloatArray:
        batch, seq_len, hidden = x.shape
        heads = self.config.num_heads
        head_dim = hidden // heads
        eps = self.config.layer_norm_eps
        # Dense layers run on (batch * seq, hidden): numpy sends 2-D matmuls to one BLAS call
        # but loops over the batch for 3-D @ 2-D, which is several times slower.
        flat = x.reshape(batch * seq_len, hidden)
        qkv = flat @ layer.qkv_w + layer.qkv_b
        # (batch, seq, 3, heads, head_dim) -> three contiguous (batch, heads, seq, head_dim)
        q, k, v = np.ascontiguousarray(
            qkv.reshape(batch, seq_len, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
        )
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim)) + key_bias
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores, out=scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * seq_len, hidden)
        attn = context @ layer.attn_out_w + layer.attn_out_b
        flat = _layer_norm(attn + flat, layer.attn_ln_w, layer.attn_ln_b, eps)
        ff = gelu(flat @ layer.ff_in_w + layer.ff_in_b) @ layer.ff_out_w + layer.ff_out_b
        out = _layer_norm(ff + flat, layer.out_ln_w, layer.out_ln_b, eps)
        return out.reshape(batch, seq_len, hidden)


class NumpyMiniLm:
    """The old local embedder: the packaged MiniLM folder's tokenizer and float32 weights."""

    def __init__(self, model_dir: Path, max_seq_length: int, batch_size: int) -> None:
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_seq_length)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.encoder = BertEncoder.from_dir(model_dir)
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> FloatArray:
        """Unit vectors, one row per text, batched by length as the product batches."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), self.encoder.config.hidden_size), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encodings = self.tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = self.encoder(ids, mask)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[batch] = pooled / np.maximum(norms, np.finfo(np.float32).tiny)
        return out


class NumpyEmbedder:
    """`NumpyMiniLm` behind the product's `Embedder` port, for benches that compare the paths."""

    def __init__(self, model: NumpyMiniLm) -> None:
        self._model = model

    @property
    def dim(self) -> int:
        """Width of the vectors."""
        return self._model.encoder.config.hidden_size

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        vectors: list[list[float]] = self._model.embed(list(texts)).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query."""
        return self.embed([text])[0]

    def close(self) -> None:
        """Nothing to release: the weights live as long as the bench."""
