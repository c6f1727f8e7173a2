"""The URL import gate: fetches beyond the per-key or the process cap are refused at once
(429 with when to try again), never queued, and a slot is free once its fetch has returned."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator

import pytest

from graphrag.errors import UrlImportBusyError
from graphrag.ingest.url.gate import UrlImportGate
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

PER_KEY = 2
TOTAL = 3
DEADLINE_S = 30.0
WAIT_S = 10.0


@pytest.fixture()
def gate() -> Iterator[UrlImportGate]:
    ingest = get_settings().ingest.model_copy(
        update={
            "url_max_concurrent_per_key": PER_KEY,
            "url_max_concurrent": TOTAL,
            "url_total_timeout_s": DEADLINE_S,
        }
    )
    opened = UrlImportGate(ingest)
    yield opened
    opened.close()


class Held:
    """Work that runs until released, saying when it has started."""

    def __init__(self) -> None:
        self.started = threading.Semaphore(0)
        self.release = threading.Event()

    def __call__(self) -> str:
        self.started.release()
        assert self.release.wait(WAIT_S)
        return "fetched"

    def wait_started(self, count: int) -> None:
        for _ in range(count):
            assert self.started.acquire(timeout=WAIT_S)


def test_the_caps_refuse_at_once_and_free_when_fetches_return(gate: UrlImportGate) -> None:
    held = Held()
    try:
        mine = [gate.submit("key-a", held) for _ in range(PER_KEY)]
        held.wait_started(PER_KEY)
        with pytest.raises(UrlImportBusyError) as per_key:
            gate.submit("key-a", held)
        assert per_key.value.details["scope"] == "api_key"
        retry_after = per_key.value.retry_after_s
        assert retry_after is not None and 1 <= retry_after <= math.ceil(DEADLINE_S)

        other = gate.submit("key-b", held)  # another key still fits under the process cap
        held.wait_started(1)
        with pytest.raises(UrlImportBusyError) as total:
            gate.submit("key-c", held)
        assert total.value.details == {
            "retry_after_s": total.value.retry_after_s,
            "limit": TOTAL,
            "scope": "process",
        }
        assert gate.running() == TOTAL
        assert gate.running("key-a") == PER_KEY
    finally:
        held.release.set()
    assert [f.result(timeout=WAIT_S) for f in [*mine, other]] == ["fetched"] * TOTAL
    assert gate.running() == 0
    assert gate.submit("key-a", lambda: "again").result(timeout=WAIT_S) == "again"


def test_a_failed_fetch_frees_its_slot(gate: UrlImportGate) -> None:
    def failing() -> str:
        raise RuntimeError("the site broke")

    for _ in range(PER_KEY + 1):  # more failures than the cap: each one gave its slot back
        with pytest.raises(RuntimeError):
            gate.submit("key-a", failing).result(timeout=WAIT_S)
    assert gate.running() == 0
