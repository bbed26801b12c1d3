"""Rate limits per API key: a token bucket of `per_minute` tokens that refills continuously.

`LocalRateLimiter` counts in this process. `RedisRateLimiter` keeps the buckets in Redis
(`LORE_REDIS_URL`), so every API process behind one port draws from the same bucket: one Lua
script reads, refills and takes atomically, on Redis's clock (Redis 5 or newer). When Redis
cannot be reached, requests are counted in the process's own buckets (the limit then holds per
process) for `RETRY_S` before Redis is tried again, so an outage costs one request a wait of at
most the socket timeout, not every request; it is logged, at most every 30 s."""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger(__name__)


class RateLimiter(Protocol):
    def take(self, bucket: str, per_minute: int) -> float:
        """0 when a request on `bucket` may go now, else the seconds until one may."""
        ...


class _Bucket:
    def __init__(self, per_minute: int) -> None:
        self.tokens = float(per_minute)
        self.stamp = time.monotonic()

    def take(self, per_minute: int) -> float:
        rate = per_minute / 60.0
        now = time.monotonic()
        self.tokens = min(float(per_minute), self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / rate


class LocalRateLimiter:
    """Buckets in this process's memory."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, bucket: str, per_minute: int) -> float:
        with self._lock:
            found = self._buckets.get(bucket)
            if found is None:
                found = self._buckets[bucket] = _Bucket(per_minute)
            return found.take(per_minute)

    def close(self) -> None:
        pass


# KEYS[1]: the bucket; ARGV[1]: its capacity per minute. Returns the wait in seconds as a string
# (Lua numbers come back from Redis as integers). Idle buckets expire once they would be full.
_TAKE = """
local capacity = tonumber(ARGV[1])
local rate = capacity / 60.0
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'stamp')
local tokens = tonumber(state[1]) or capacity
local stamp = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - stamp) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'stamp', tostring(now))
redis.call('EXPIRE', KEYS[1], 61)
return tostring(wait)
"""


class RedisRateLimiter:
    """Buckets in Redis, shared by every process that uses the same `url`."""

    WARN_EVERY_S = 30.0
    RETRY_S = 10.0

    def __init__(self, url: str, prefix: str = "lore:rate:") -> None:
        try:
            import redis  # noqa: PLC0415 - only the server stack needs it
        except ImportError as exc:
            raise RuntimeError(
                "LORE_REDIS_URL needs the redis package: pip install 'lore[redis]'"
            ) from exc

        self._client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
        self._script = self._client.register_script(_TAKE)
        self._prefix = prefix
        self._where = without_password(url)
        self._local = LocalRateLimiter()
        self._warned_at = -self.WARN_EVERY_S
        self._down_until = 0.0
        self._errors = (redis.RedisError, OSError)

    def take(self, bucket: str, per_minute: int) -> float:
        if time.monotonic() < self._down_until:
            return self._local.take(bucket, per_minute)
        try:
            wait = float(self._script(keys=[self._prefix + bucket], args=[per_minute]))
        except self._errors as exc:
            now = time.monotonic()
            self._down_until = now + self.RETRY_S
            if now - self._warned_at >= self.WARN_EVERY_S:
                self._warned_at = now
                log.warning(
                    "rate limits: Redis at %s does not answer (%s); counting per process",
                    self._where,
                    exc,
                )
            return self._local.take(bucket, per_minute)
        return wait

    def close(self) -> None:
        self._client.close()


def without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def rate_limiter(redis_url: str | None) -> LocalRateLimiter | RedisRateLimiter:
    return RedisRateLimiter(redis_url) if redis_url else LocalRateLimiter()
