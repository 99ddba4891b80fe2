"""Per-model-config rate limits: requests per window and concurrent requests.

``RedisRateLimiter`` shares the limits between every process and machine using the same Redis
(Celery workers); the clock is Redis's own (``TIME``), so hosts with skewed clocks still agree.
``LocalRateLimiter`` enforces the same rules inside one process, for the embedded default without
Redis. Both hand out a lease that must be released; leases of a crashed worker expire.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Limits:
    requests_per_window: int | None = None
    window_seconds: float = 60.0
    max_concurrency: int | None = None
    lease_seconds: float = 300.0  # a concurrency slot held longer than this is presumed dead

    @property
    def active(self) -> bool:
        return bool(self.requests_per_window) or bool(self.max_concurrency)


class RateLimiter(Protocol):
    def slot(self, key: str, limits: Limits) -> Any: ...


# KEYS[1] = window zset, KEYS[2] = concurrency zset; ARGV: rpw, window, conc, lease, token.
# Returns {granted (0/1), wait_seconds*1000}.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rpw = tonumber(ARGV[1]); local window = tonumber(ARGV[2])
local conc = tonumber(ARGV[3]); local lease = tonumber(ARGV[4]); local token = ARGV[5]
local wait = 0
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= conc then
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    wait = math.max(wait, math.min(tonumber(first[2]) - now, 0.05))
  end
end
if rpw > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
  if redis.call('ZCARD', KEYS[1]) >= rpw then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    wait = math.max(wait, tonumber(oldest[2]) + window - now)
  end
end
if wait > 0 then return {0, math.ceil(wait * 1000)} end
if rpw > 0 then
  redis.call('ZADD', KEYS[1], now, token)
  redis.call('PEXPIRE', KEYS[1], math.ceil(window * 1000) + 1000)
end
if conc > 0 then
  redis.call('ZADD', KEYS[2], now + lease, token)
  redis.call('PEXPIRE', KEYS[2], math.ceil(lease * 1000) + 1000)
end
return {1, 0}
"""


class RedisRateLimiter:
    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "physalign:ratelimit",
        sleep: Callable[[float], None] = time.sleep,
        poll_cap: float = 0.25,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.sleep = sleep
        self.poll_cap = poll_cap
        self._acquire = client.register_script(_ACQUIRE)

    @contextmanager
    def slot(self, key: str, limits: Limits) -> Iterator[float]:
        """Wait until a request may start; yields the seconds waited."""
        if not limits.active:
            yield 0.0
            return
        token = uuid.uuid4().hex
        keys = [f"{self.prefix}:{key}:window", f"{self.prefix}:{key}:concurrency"]
        args = [
            limits.requests_per_window or 0,
            limits.window_seconds,
            limits.max_concurrency or 0,
            limits.lease_seconds,
            token,
        ]
        waited = 0.0
        while True:
            granted, wait_ms = self._acquire(keys=keys, args=args)
            if int(granted):
                break
            pause = min(max(int(wait_ms) / 1000.0, 0.005), self.poll_cap)
            self.sleep(pause)
            waited += pause
        try:
            yield waited
        finally:
            if limits.max_concurrency:
                self.client.zrem(keys[1], token)


class LocalRateLimiter:
    """The same rules within one process (threads share it)."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self._lock = threading.Lock()
        self._starts: dict[str, deque[float]] = {}
        self._running: dict[str, int] = {}

    def _try(self, key: str, limits: Limits) -> float:
        now = self.clock()
        starts = self._starts.setdefault(key, deque())
        while starts and starts[0] <= now - limits.window_seconds:
            starts.popleft()
        wait = 0.0
        if limits.max_concurrency and self._running.get(key, 0) >= limits.max_concurrency:
            wait = 0.01
        if limits.requests_per_window and len(starts) >= limits.requests_per_window:
            wait = max(wait, starts[0] + limits.window_seconds - now)
        if wait > 0:
            return wait
        if limits.requests_per_window:
            starts.append(now)
        if limits.max_concurrency:
            self._running[key] = self._running.get(key, 0) + 1
        return 0.0

    @contextmanager
    def slot(self, key: str, limits: Limits) -> Iterator[float]:
        if not limits.active:
            yield 0.0
            return
        waited = 0.0
        while True:
            with self._lock:
                wait = self._try(key, limits)
            if wait <= 0:
                break
            pause = min(wait, 0.25)
            self.sleep(pause)
            waited += pause
        try:
            yield waited
        finally:
            if limits.max_concurrency:
                with self._lock:
                    self._running[key] = max(self._running.get(key, 1) - 1, 0)


class NoRateLimiter:
    @contextmanager
    def slot(self, key: str, limits: Limits) -> Iterator[float]:
        yield 0.0
