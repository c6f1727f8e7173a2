"""The relay loop's schedule: a due full pass stays due until one actually runs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from graphrag.outbox import relay_loop
from graphrag.outbox.relay import RelayReport
from graphrag.outbox.relay_loop import RelayLoop
from graphrag.settings import get_settings

pytestmark = pytest.mark.unit

WAIT_S = 5.0


class _Passes:
    """Stands in for `relay_once`: answers from a script (then passes that ran), records each
    pass's `sweep` flag."""

    def __init__(self, answers: list[RelayReport]) -> None:
        self._answers = answers
        self.sweeps: list[bool] = []
        self._changed = threading.Condition()

    def __call__(self, *_args: Any, sweep: bool) -> RelayReport:
        with self._changed:
            self.sweeps.append(sweep)
            self._changed.notify_all()
        return self._answers.pop(0) if self._answers else RelayReport()

    def first(self, count: int) -> list[bool]:
        with self._changed:
            ok = self._changed.wait_for(lambda: len(self.sweeps) >= count, WAIT_S)
            assert ok, f"passes so far: {self.sweeps}"
            return self.sweeps[:count]


@pytest.fixture()
def loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RelayLoop, _Passes]]:
    """A loop whose full passes are a minute apart, and whose passes follow `_Passes`."""
    settings = get_settings().outbox.model_copy(
        update={"relay_interval_s": 60.0, "lock_retry_s": 0.001, "kick_gap_s": 0.0}
    )
    passes = _Passes([RelayReport(ran=False), RelayReport(ran=False)])
    monkeypatch.setattr(relay_loop, "relay_once", passes)
    running = RelayLoop(sessions=None, sender=None, settings=settings)  # type: ignore[arg-type]
    running.start()
    yield running, passes
    running.stop(WAIT_S)


def test_a_full_pass_that_finds_the_lock_taken_is_retried_as_a_full_pass(
    loop: tuple[RelayLoop, _Passes],
) -> None:
    _, passes = loop
    assert passes.first(3) == [True, True, True]


def test_after_a_full_pass_ran_a_kick_only_sends(loop: tuple[RelayLoop, _Passes]) -> None:
    running, passes = loop
    passes.first(3)
    running.kick()
    assert passes.first(4) == [True, True, True, False]
