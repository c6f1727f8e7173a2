"""A TCP relay that starts listening late: a server that is still coming up, for start-up
retries. Each accepted connection is piped both ways to the real target."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["LateRelay"]

_CHUNK = 65536
_BACKLOG = 16
_ACCEPT_POLL_S = 0.1  # how often the accept loop looks whether the relay is closing


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(_CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class LateRelay:
    """`with LateRelay(port, target, after_s):` nothing listens on `port` for `after_s`
    seconds, then connections to it reach `target` (host, port)."""

    def __init__(self, port: int, target: tuple[str, int], after_s: float) -> None:
        self.port = port
        self._target = target
        self._after_s = after_s
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        if self._stop.wait(self._after_s):
            return
        listener = socket.create_server(("127.0.0.1", self.port), backlog=_BACKLOG)
        listener.settimeout(_ACCEPT_POLL_S)  # closing a socket does not wake a blocked accept
        self._listener = listener
        while not self._stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed by `__exit__`
            client.settimeout(None)
            upstream = socket.create_connection(self._target)
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def __enter__(self) -> LateRelay:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        for sock in [*self._sockets, *([self._listener] if self._listener else [])]:
            with contextlib.suppress(OSError):
                sock.close()
        self._thread.join()
