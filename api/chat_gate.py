"""The gate of the chat-like requests: the knowledge and agent chat, `/v1` chat completions and
the MCP `ask`.

Such a request waits for an interactive LLM slot (up to `llm.interactive_wait_s`) and then
generates, in blocking calls. On the AnyIO thread pool that every other sync route, `/health`
and the request guard's key check share, a few dozen chats of one key held every thread and
stalled the whole API. So, in each API process:

- at most `chat.max_concurrent_per_key` chat-like requests of one API key run at once; one more
  is refused at once, 429 `chat_busy` with Retry-After, before any work is done for it;
- their blocking work (the turn's checks, the LLM waits, the generation, storing the turn) runs
  on threads of its own, at most `chat.worker_threads` at once; a turn beyond waits for one
  without holding a thread of any pool.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from graphrag.auth.models import Principal
from graphrag.errors import ChatBusyError
from graphrag.settings import ChatSettings

__all__ = ["ChatGate", "ChatTicket", "GatedStream"]

T = TypeVar("T")


class ChatTicket:
    """One admitted chat-like request; `release` (idempotent) frees its place."""

    def __init__(self, leave: Callable[[], None]) -> None:
        self._leave = leave
        self._released = False

    def release(self) -> None:
        """Give the place back (once; later calls do nothing)."""
        if not self._released:
            self._released = True
            self._leave()


class ChatGate:
    """Admission per API key, and the limiter of the threads the admitted work runs on."""

    def __init__(self, settings: ChatSettings) -> None:
        self._per_key = settings.max_concurrent_per_key
        self._retry_after_s = settings.busy_retry_after_s
        self._threads = settings.worker_threads
        self._limiter: anyio.CapacityLimiter | None = None
        self._held: Counter[str] = Counter()
        self._lock = threading.Lock()

    @staticmethod
    def _who(principal: Principal) -> str:
        return str(principal.key_id or f"tenant-{principal.tenant_id}")

    def enter(self, principal: Principal) -> ChatTicket:
        """Admit one request of the caller's key, or raise `ChatBusyError` (429) at once."""
        who = self._who(principal)
        with self._lock:
            if self._per_key and self._held[who] >= self._per_key:
                raise ChatBusyError(
                    f"this API key already has {self._per_key} chat requests running",
                    retry_after_s=self._retry_after_s,
                    limit=self._per_key,
                )
            self._held[who] += 1
        return ChatTicket(lambda: self._leave(who))

    def _leave(self, who: str) -> None:
        with self._lock:
            self._held[who] -= 1
            if self._held[who] <= 0:
                del self._held[who]

    @property
    def limiter(self) -> anyio.CapacityLimiter:
        """The chat threads' limiter, made in the event loop that first uses it."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._threads)
        return self._limiter

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """`work(*args)` on a chat thread."""
        return await anyio.to_thread.run_sync(work, *args, limiter=self.limiter)

    async def iterate(self, items: Iterator[T]) -> AsyncIterator[T]:
        """`items`, each one produced on a chat thread; a generator is closed there too when
        the stream stops early (the client went away), so its clean-up runs as it would have."""
        try:
            while True:
                produced = await self.run(_next, items)
                if not produced:
                    return
                yield produced[0]
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await self.run(close)

    def stream(self, items: Iterator[str], ticket: ChatTicket, media_type: str) -> GatedStream:
        """A streamed answer of `items`, produced on chat threads; `ticket` is released when
        the response ends, however it ends."""
        return GatedStream(self.iterate(items), ticket, media_type=media_type)


def _next(items: Iterator[T]) -> list[T]:
    # StopIteration cannot cross a thread's future: the end is an empty list instead.
    try:
        return [next(items)]
    except StopIteration:
        return []


class GatedStream(StreamingResponse):
    """A streaming response that releases its chat ticket when it ends (sent, failed, or the
    client gone before its first byte)."""

    def __init__(self, content: AsyncIterator[Any], ticket: ChatTicket, media_type: str) -> None:
        super().__init__(content, media_type=media_type)
        self._ticket = ticket

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._ticket.release()
