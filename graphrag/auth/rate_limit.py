"""Request limits in Redis, shared by every API process.

- `RateLimiter`: at most N requests per window for each API key. A fixed window per key that
  opens at the key's first request and closes `window_s` later. Without a key (auth off) the
  default tenant's caller is limited as one key.
- `FailedAuthLimiter`: at most N failed key checks per window for each client address; past
  them, a request sending a key from that address is refused before the key is hashed or looked
  up, so a stream of guessed keys costs one Redis read each, not a database query. An IPv6
  client is counted by its network (`auth.failed_ipv6_prefix`, a /64 by default): one host
  usually holds a whole /64 and could send each guess from a new address in it.

A refusal says how long until the window closes (Retry-After). Redis being down never refuses a
request: the limits are guards against floods, and the API cannot work without its other
services anyway.
"""

from __future__ import annotations

import ipaddress
import logging

import redis

from graphrag.auth.models import Principal
from graphrag.errors import RateLimitedError
from graphrag.settings import ApiSettings, AuthSettings

__all__ = ["FailedAuthLimiter", "RateLimiter", "address_bucket"]

log = logging.getLogger(__name__)

# Count the request; the first one of a window sets its end. Returns (count, seconds left).
_HIT = """
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
"""

# Read a count without changing it. Returns (count, seconds left), (0, -2) when there is none.
_PEEK = """
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return {count, redis.call('TTL', KEYS[1])}
"""


class _Window:
    """One fixed-window counter per Redis key: `limit` events per `window_s` seconds."""

    def __init__(self, client: redis.Redis[bytes], limit: int, window_s: int) -> None:
        self.limit = limit
        self.window_s = window_s
        self._hit = client.register_script(_HIT)
        self._peek = client.register_script(_PEEK)

    def hit(self, key: str) -> int | None:
        """Count one event; the seconds left in a window now over its limit, else None."""
        if self.limit == 0:
            return None
        try:
            count, ttl = self._hit(keys=[key], args=[self.window_s])
        except redis.RedisError as exc:
            log.warning("request limit not counted (Redis failed): %s", exc)
            return None
        return max(1, int(ttl)) if int(count) > self.limit else None

    def full(self, key: str) -> int | None:
        """The seconds left in a window that already holds `limit` events, else None."""
        if self.limit == 0:
            return None
        try:
            count, ttl = self._peek(keys=[key])
        except redis.RedisError as exc:
            log.warning("request limit not checked (Redis failed): %s", exc)
            return None
        return max(1, int(ttl)) if int(count) >= self.limit else None

    def refuse(self, retry_after: int | None, message: str) -> None:
        """429 when `retry_after` says a window is over its limit; `message` may name the
        `{limit}` and the `{window_s}`."""
        if retry_after is not None:
            raise RateLimitedError(
                message.format(limit=self.limit, window_s=self.window_s),
                retry_after_s=retry_after,
                limit=self.limit,
                window_s=self.window_s,
            )


class RateLimiter:
    """`hit(principal)` counts one request of the caller's key, or raises RateLimitedError."""

    def __init__(self, client: redis.Redis[bytes], settings: ApiSettings) -> None:
        self._window = _Window(client, settings.rate_limit_requests, settings.rate_limit_window_s)

    @staticmethod
    def key(principal: Principal) -> str:
        """The Redis key counting the caller's requests."""
        who = principal.key_id or f"tenant-{principal.tenant_id}"
        return f"graphrag:rate:{who}"

    def hit(self, principal: Principal) -> None:
        """Count one request; over the limit: 429 with the seconds until the window closes."""
        self._window.refuse(
            self._window.hit(self.key(principal)),
            "this API key made more than {limit} requests in {window_s} s",
        )


def address_bucket(address: str, ipv6_prefix: int) -> str:
    """What a client address is counted as: an IPv4 address (an IPv4-mapped IPv6 one too) by
    itself, an IPv6 address by its network of `ipv6_prefix` bits (`2001:db8:1:2::/64`), and
    anything else (a Unix socket's name) as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip.packed, ipv6_prefix), strict=False))
    return str(ip)


class FailedAuthLimiter:
    """Failed key checks per client address: `check` before a key is verified, `failed` after
    a key was refused."""

    def __init__(self, client: redis.Redis[bytes], settings: AuthSettings) -> None:
        self._window = _Window(client, settings.failed_max_per_window, settings.failed_window_s)
        self._ipv6_prefix = settings.failed_ipv6_prefix

    def key(self, address: str) -> str:
        """The Redis key counting the failures of one client address (of its IPv6 network)."""
        return f"graphrag:auth-failed:{address_bucket(address, self._ipv6_prefix)}"

    def check(self, address: str | None) -> None:
        """429 if the address already failed as often as a window allows (None: not limited)."""
        if address is None:
            return
        self._window.refuse(
            self._window.full(self.key(address)),
            "this address sent {limit} invalid API keys within {window_s} s",
        )

    def failed(self, address: str | None) -> None:
        """Count one refused key of the address."""
        if address is not None:
            self._window.hit(self.key(address))
