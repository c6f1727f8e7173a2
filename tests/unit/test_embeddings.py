"""Embedders: the onnxruntime MiniLM against sentence-transformers vectors and against the vectors
of the numpy path it replaced, the HTTP one against a fake transport."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from tokenizers import Tokenizer

from graphrag.errors import EmbeddingError
from graphrag.search import minilm_embedder
from graphrag.search.embeddings import (
    LocalMiniLmEmbedder,
    OpenAiCompatibleEmbedder,
    build_embedder,
)
from graphrag.settings import EmbeddingSettings, get_settings

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
REFERENCE = json.loads((DATA / "minilm_reference.json").read_text(encoding="utf-8"))
ITEMS: list[dict[str, Any]] = REFERENCE["items"]
# Vectors of the numpy float32 forward pass, recorded just before the switch to onnxruntime.
NUMPY = json.loads((DATA / "minilm_numpy_vectors.json").read_text(encoding="utf-8"))


def _settings(**changes: Any) -> EmbeddingSettings:
    return get_settings().embedding.model_copy(update=changes)


@pytest.fixture(scope="module")
def local() -> LocalMiniLmEmbedder:
    return LocalMiniLmEmbedder(_settings(backend="local", dim=384))


def _cosine(a: list[float], b: list[float]) -> float:
    va, vb = np.asarray(a), np.asarray(b)
    return float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))


# --- local onnxruntime MiniLM -------------------------------------------------------------


def test_reference_covers_truncation_at_our_sequence_length() -> None:
    assert REFERENCE["max_seq_length"] == _settings().max_seq_length
    assert max(item["untruncated_tokens"] for item in ITEMS) > REFERENCE["max_seq_length"]


@pytest.mark.parametrize("item", ITEMS, ids=[item["text"][:20] for item in ITEMS])
def test_local_matches_sentence_transformers(
    local: LocalMiniLmEmbedder, item: dict[str, Any]
) -> None:
    # int8 weights: close to the float32 model, not equal to it.
    assert _cosine(local.embed_query(item["text"]), item["vector"]) >= 0.999


def test_local_matches_the_numpy_path_it_replaced(local: LocalMiniLmEmbedder) -> None:
    assert NUMPY["max_seq_length"] == _settings().max_seq_length
    items = NUMPY["items"]
    assert len(items) >= 10
    vectors = local.embed([item["text"] for item in items])
    cosines = [_cosine(new, item["vector"]) for new, item in zip(vectors, items, strict=True)]
    assert min(cosines) >= 0.999, cosines


def test_local_vectors_have_dim_384_and_unit_norm(local: LocalMiniLmEmbedder) -> None:
    vectors = local.embed([item["text"] for item in ITEMS])
    assert local.dim == 384
    assert len(vectors) == len(ITEMS)
    for vector in vectors:
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_local_batching_does_not_change_vectors(local: LocalMiniLmEmbedder) -> None:
    texts = [item["text"] for item in ITEMS]
    together = np.asarray(local.embed(texts))
    one_by_one = np.asarray([local.embed_query(text) for text in texts])
    in_threes = np.asarray(LocalMiniLmEmbedder(_settings(batch_size=3)).embed(texts))
    assert np.abs(together - one_by_one).max() < 1e-5
    assert np.abs(together - in_threes).max() < 1e-5


def test_local_truncates_long_texts(local: LocalMiniLmEmbedder) -> None:
    long_text = max(ITEMS, key=lambda item: item["untruncated_tokens"])["text"]
    extended = local.embed_query(long_text + " A completely different ending about volcanoes.")
    assert _cosine(local.embed_query(long_text), extended) > 0.99999


def test_local_paraphrase_is_closer_than_unrelated(local: LocalMiniLmEmbedder) -> None:
    guitar, paraphrase, tax = local.embed(
        [
            "A man is playing a guitar on stage.",
            "Someone performs music with a guitar in front of an audience.",
            "The quarterly tax report is due next Monday.",
        ]
    )
    assert _cosine(guitar, paraphrase) > 0.5
    assert _cosine(guitar, paraphrase) > _cosine(guitar, tax) + 0.3


def test_local_embeds_nothing_and_refuses_a_bare_string(local: LocalMiniLmEmbedder) -> None:
    assert local.embed([]) == []
    with pytest.raises(TypeError):
        local.embed("one string")


def test_local_weights_load_once_under_concurrent_first_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loads: list[Path] = []
    real_tokenizer = minilm_embedder._tokenizer

    def counting_tokenizer(path: Path, max_seq_length: int) -> Tokenizer:
        loads.append(path)
        time.sleep(0.05)  # widen the window in which a second thread could start a load
        return real_tokenizer(path, max_seq_length)

    monkeypatch.setattr(minilm_embedder, "_models", {})
    monkeypatch.setattr(minilm_embedder, "_tokenizer", counting_tokenizer)
    embedders = [LocalMiniLmEmbedder(_settings()) for _ in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        vectors = list(pool.map(lambda e: e.embed_query("same text"), embedders))
    assert len(loads) == 1
    assert all(v == vectors[0] for v in vectors)


def test_local_refuses_a_dim_the_model_does_not_have() -> None:
    with pytest.raises(EmbeddingError) as caught:
        LocalMiniLmEmbedder(_settings(dim=768)).load()
    assert caught.value.details == {"expected": 768, "model_dim": 384}


def test_local_refuses_a_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="not found"):
        LocalMiniLmEmbedder(_settings(onnx_file=tmp_path / "absent.onnx"))


def test_local_refuses_a_model_file_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    packaged = minilm_embedder.packaged_onnx_file().read_bytes()
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(packaged[:-1] + bytes([packaged[-1] ^ 1]))
    with pytest.raises(EmbeddingError, match="SHA-256"):
        LocalMiniLmEmbedder(_settings(onnx_file=tampered)).load()
    truncated = tmp_path / "short.onnx"
    truncated.write_bytes(packaged[:1000])
    with pytest.raises(EmbeddingError, match="wrong size"):
        LocalMiniLmEmbedder(_settings(onnx_file=truncated)).load()


def test_build_embedder_follows_the_backend() -> None:
    assert isinstance(build_embedder(_settings(backend="local")), LocalMiniLmEmbedder)
    remote = build_embedder(_settings(backend="openai"))
    assert isinstance(remote, OpenAiCompatibleEmbedder)
    remote.close()


# --- OpenAI-compatible HTTP embedder ------------------------------------------------------

Handler = Callable[[httpx.Request], httpx.Response]


def _remote(handler: Handler, **changes: Any) -> OpenAiCompatibleEmbedder:
    settings = _settings(
        backend="openai", base_url="http://embed.test/v1", model="m", dim=3, **changes
    )
    return OpenAiCompatibleEmbedder(settings, transport=httpx.MockTransport(handler))


def _vectors_for(texts: list[str], dim: int = 3) -> dict[str, Any]:
    # Reversed order: the client must sort by `index`.
    data = [
        {"index": i, "embedding": [float(len(t))] + [float(i)] * (dim - 1)}
        for i, t in enumerate(texts)
    ]
    return {"object": "list", "data": data[::-1], "model": "m"}


def test_remote_posts_batches_and_keeps_order() -> None:
    requests: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url == "http://embed.test/v1/embeddings"
        assert request.headers["authorization"] == "Bearer " + (
            _settings().api_key.get_secret_value()
        )
        body = json.loads(request.content)
        requests.append(body)
        return httpx.Response(200, json=_vectors_for(body["input"]))

    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    with _remote(handler, batch_size=2) as embedder:
        vectors = embedder.embed(texts)
    assert [body["input"] for body in requests] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert all(body["model"] == "m" for body in requests)
    assert [v[0] for v in vectors] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert embedder.dim == 3


def test_remote_http_500_raises_embedding_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="model crashed")

    with _remote(handler) as embedder, pytest.raises(EmbeddingError) as caught:
        embedder.embed_query("x")
    assert caught.value.details["status"] == 500
    assert caught.value.code == "embedding_failed"


def test_remote_wrong_dimension_raises_embedding_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_vectors_for(json.loads(request.content)["input"], dim=4))

    with _remote(handler) as embedder, pytest.raises(EmbeddingError, match="dimension"):
        embedder.embed(["x", "y"])


def test_remote_missing_vectors_raise_embedding_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_vectors_for(["only one"]))

    with _remote(handler) as embedder, pytest.raises(EmbeddingError, match="wrong vectors"):
        embedder.embed(["x", "y"])


def test_remote_malformed_body_raises_embedding_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"error": "nope"})

    with _remote(handler) as embedder, pytest.raises(EmbeddingError, match="unexpected body"):
        embedder.embed(["x"])


def test_remote_unreachable_server_raises_embedding_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with _remote(handler) as embedder, pytest.raises(EmbeddingError, match="unreachable"):
        embedder.embed(["x"])
