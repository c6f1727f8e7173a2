"""HTTP/1.1 over a bare socket: requests no client library would send (a length it never
honours, chunked bodies), and the answer read as it comes."""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RawResponse", "chunked", "exchange"]

_HEAD_END = b"\r\n\r\n"
_BLOCK = 65536


@dataclass
class RawResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    sent_bytes: int = 0  # body bytes the server took before it answered or closed

    def json(self) -> Any:
        return json.loads(self.body)


def chunked(parts: Iterable[bytes]) -> Iterable[bytes]:
    """`parts` framed as chunked transfer encoding, the final empty chunk included."""
    for part in parts:
        yield f"{len(part):x}\r\n".encode() + part + b"\r\n"
    yield b"0\r\n\r\n"


def _read_response(sock: socket.socket) -> RawResponse:
    data = b""
    while _HEAD_END not in data:
        block = sock.recv(_BLOCK)
        if not block:
            raise ConnectionError(f"connection closed before a response: {data!r}")
        data += block
    head, _, body = data.partition(_HEAD_END)
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        block = sock.recv(_BLOCK)
        if not block:
            break
        body += block
    return RawResponse(status=int(status_line.split()[1]), headers=headers, body=body[:length])


def exchange(
    base_url: str,
    method: str,
    path: str,
    headers: dict[str, str],
    body_parts: Iterable[bytes] = (),
    timeout_s: float = 30.0,
) -> RawResponse:
    """Send the head and then each body part, read the answer.

    Sending stops early once the server has answered (or closed): `sent_bytes` tells how much of
    the body it was given.
    """
    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    head_lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    head_lines += [f"{name}: {value}" for name, value in headers.items()]
    head = ("\r\n".join(head_lines) + "\r\n\r\n").encode("latin-1")
    sent = 0
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(head)
        try:
            for part in body_parts:
                if select.select([sock], [], [], 0)[0]:
                    break  # an answer (or the close) is waiting: the server stopped reading
                sock.sendall(part)
                sent += len(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the whole body was sent
        response = _read_response(sock)
    response.sent_bytes = sent
    return response
