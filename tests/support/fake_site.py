"""A small real HTTP server (the standard library's) for URL-import tests: pages (plain or
content-encoded), redirects, trickling and endless bodies, on any loopback address, recording
every request it gets."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["FakeSite", "Handler", "HeldPage", "endless", "gzip_bomb", "page", "redirect", "trickle"]

Handler = Callable[[BaseHTTPRequestHandler], None]
_BLOCK = 64 * 1024


def page(
    body: bytes, media_type: str = "text/plain", content_encoding: str | None = None
) -> Handler:
    """A complete response with its Content-Length; `body` is sent as given, already encoded
    when `content_encoding` names a coding."""

    def serve(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", media_type)
        if content_encoding is not None:
            request.send_header("Content-Encoding", content_encoding)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    return serve


def gzip_bomb(size: int) -> bytes:
    """`size` zero bytes gzipped, without ever holding them: small on the wire, huge inflated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(bytes(min(_BLOCK, size - at))) for at in range(0, size, _BLOCK)]
    return b"".join(parts) + packer.flush()


class HeldPage:
    """A page answered only once `release` is set (503 if it is not within `wait_s`): a slow
    site whose requests the test can count while they wait. The request's path and query end
    the body, so two URLs of it give two different documents."""

    def __init__(self, body: bytes, wait_s: float) -> None:
        self.body = body
        self.wait_s = wait_s
        self.release = threading.Event()
        self._arrived = threading.Semaphore(0)

    def __call__(self, request: BaseHTTPRequestHandler) -> None:
        self._arrived.release()
        if not self.release.wait(self.wait_s):
            request.send_error(503)
            return
        page(self.body + request.path.encode())(request)

    def wait_arrivals(self, count: int) -> None:
        """Return once `count` more requests are waiting; fail after `wait_s`."""
        for _ in range(count):
            if not self._arrived.acquire(timeout=self.wait_s):
                raise AssertionError(f"fewer than {count} requests reached the held page")


def redirect(location: str, status: int = 302) -> Handler:
    def serve(request: BaseHTTPRequestHandler) -> None:
        request.send_response(status)
        request.send_header("Location", location)
        request.send_header("Content-Length", "0")
        request.end_headers()

    return serve


def trickle(interval_s: float, duration_s: float) -> Handler:
    """One byte every `interval_s` for `duration_s`: each read is quick, the whole is not."""

    def serve(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.end_headers()
        end = time.monotonic() + duration_s
        try:
            while time.monotonic() < end:
                request.wfile.write(b"x")
                request.wfile.flush()
                time.sleep(interval_s)
        except OSError:
            return  # the client gave up: what the test wants

    return serve


def endless(declare_length: int | None = None) -> Handler:
    """Bytes until the client hangs up, with or without a (false) Content-Length."""

    def serve(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        if declare_length is not None:
            request.send_header("Content-Length", str(declare_length))
        request.end_headers()
        try:
            while True:
                request.wfile.write(b"y" * _BLOCK)
        except OSError:
            return

    return serve


class FakeSite:
    """`with FakeSite({"/a": page(b"...")}, host="127.0.0.2") as site: site.url`."""

    def __init__(self, routes: dict[str, Handler], host: str = "127.0.0.1", port: int = 0) -> None:
        self.routes = dict(routes)
        self.hits: list[tuple[str, str]] = []  # (path, Host header) of every request
        site = self

        class _Request(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.hits.append((self.path, self.headers.get("Host", "")))
                handler = site.routes.get(self.path.split("?")[0])
                if handler is None:
                    self.send_error(404)
                    return
                handler(self)

            def log_message(self, format: str, *args: object) -> None:
                """Quiet: tests read `hits` instead."""

        self._server = ThreadingHTTPServer((host, port), _Request)
        self._server.daemon_threads = True
        self.host = host
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> FakeSite:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
