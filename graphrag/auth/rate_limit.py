"""Per-key request limits in Redis: at most N requests per window for each API key, shared by
every API process.

A fixed window per key that opens at the key's first request and closes `window_s` later; the
refusal says how long until it closes (Retry-After). Without a key (auth off) the default
tenant's caller is limited as one key. Redis being down never refuses a request: the limit is
a guard against floods, and the API cannot work without its other services anyway.
"""

from __future__ import annotations

import logging

import redis

from graphrag.auth.models import Principal
from graphrag.errors import RateLimitedError
from graphrag.settings import ApiSettings

__all__ = ["RateLimiter"]

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


class RateLimiter:
    """`hit(principal)` counts one request of the caller's key, or raises RateLimitedError."""

    def __init__(self, client: redis.Redis[bytes], settings: ApiSettings) -> None:
        self.limit = settings.rate_limit_requests
        self.window_s = settings.rate_limit_window_s
        self._hit = client.register_script(_HIT)

    @staticmethod
    def key(principal: Principal) -> str:
        """The Redis key counting the caller's requests."""
        who = principal.key_id or f"tenant-{principal.tenant_id}"
        return f"graphrag:rate:{who}"

    def hit(self, principal: Principal) -> None:
        """Count one request; over the limit: 429 with the seconds until the window closes."""
        if self.limit == 0:
            return
        try:
            count, ttl = self._hit(keys=[self.key(principal)], args=[self.window_s])
        except redis.RedisError as exc:
            log.warning("rate limit not checked (Redis failed): %s", exc)
            return
        if int(count) > self.limit:
            raise RateLimitedError(
                f"this API key made more than {self.limit} requests in {self.window_s} s",
                retry_after_s=max(1, int(ttl)),
                limit=self.limit,
                window_s=self.window_s,
            )
