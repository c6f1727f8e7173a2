"""Name vectors at graph-build time: the threads of one process embed a key once between them."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import cast

import pytest

from graphrag.graph.name_vectors import KeysInHand, write_name_vectors
from graphrag.graph.store import GraphStore

KB = uuid.uuid4()
OTHER_KB = uuid.uuid4()
WAIT_S = 5.0


class VectorSink:
    """The one store call `write_name_vectors` makes: the vectors it was given, per base."""

    def __init__(self) -> None:
        self.stored: list[tuple[uuid.UUID, list[str]]] = []

    def set_key_vectors(self, kb_id: uuid.UUID, vectors: Mapping[str, Sequence[float]]) -> None:
        self.stored.append((kb_id, list(vectors)))


class HeldEmbedder:
    """Embeds only once `release` is set, so a call can be caught in progress."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        self.entered.set()
        assert self.release.wait(WAIT_S)
        return [[float(len(t))] for t in texts]


def _store(sink: VectorSink) -> GraphStore:
    return cast(GraphStore, sink)


def test_a_key_another_thread_is_embedding_is_left_to_it() -> None:
    sink, held, in_hand = VectorSink(), HeldEmbedder(), KeysInHand()
    first = threading.Thread(
        target=write_name_vectors, args=(_store(sink), KB, ["acme", "orvex"], held, in_hand)
    )
    first.start()
    assert held.entered.wait(WAIT_S)
    # The first call is still embedding: the second gets only the key it does not hold.
    quick = HeldEmbedder()
    quick.release.set()
    written = write_name_vectors(_store(sink), KB, ["orvex", "acme", "kimber"], quick, in_hand)
    held.release.set()
    first.join(WAIT_S)
    assert written == 1
    assert held.calls == [["acme", "orvex"]]
    assert quick.calls == [["kimber"]]
    assert sorted(keys for _, keys in sink.stored) == [["acme", "orvex"], ["kimber"]]


def test_keys_are_given_back_after_the_write_and_on_failure() -> None:
    sink, in_hand = VectorSink(), KeysInHand()

    def failing(texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("embedder down")

    with pytest.raises(RuntimeError):
        write_name_vectors(_store(sink), KB, ["acme"], failing, in_hand)
    embed = HeldEmbedder()
    embed.release.set()
    assert write_name_vectors(_store(sink), KB, ["acme"], embed, in_hand) == 1
    assert write_name_vectors(_store(sink), KB, ["acme"], embed, in_hand) == 1
    assert embed.calls == [["acme"], ["acme"]]


def test_the_same_key_of_another_base_is_its_own() -> None:
    in_hand = KeysInHand()
    with in_hand.take(KB, ["acme", "acme"]) as held:
        assert held == ["acme"]
        with in_hand.take(KB, ["acme"]) as again, in_hand.take(OTHER_KB, ["acme"]) as other:
            assert again == []
            assert other == ["acme"]
