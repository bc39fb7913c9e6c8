"""A counting semaphore shared by every web and worker process, in Redis, with leases that expire.

``SharedSemaphore(name, limit, lease_s)`` lets at most ``limit`` holders in at once across all
processes and machines that use the same Redis (``settings.REDIS_URL``). A holder is a random token
in a sorted set scored by its lease's end, in Redis's own clock (``TIME``), so machines need no
common clock. Taking a slot is one Lua script: drop expired leases, then add the token if fewer than
``limit`` remain. A process that dies while holding a slot frees it when the lease runs out; a
long holder keeps it with ``renew`` (streams renew as they read). Waiting is polling with backoff
(5 ms doubling to 100 ms): the callers hold a slot for the length of a model's answer, seconds, so
a few Redis round trips per wait cost little.

Both a blocking form (``with semaphore.hold():``, for threads) and an async one (``async with
semaphore.ahold():``, for views on the event loop: it waits with ``asyncio.sleep`` and holds no
thread) are given.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
import time
import weakref
from contextlib import asynccontextmanager, contextmanager

from django.conf import settings

_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('EXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 60)
  return 1
end
return 0
"""
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
return redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[1]), ARGV[2])
"""
FIRST_WAIT_S, MAX_WAIT_S = 0.005, 0.1

_sync_client = None
_sync_lock = threading.Lock()
_async_clients: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _reset_after_fork() -> None:
    global _sync_client, _sync_lock
    _sync_client, _sync_lock = None, threading.Lock()
    _async_clients.clear()


os.register_at_fork(after_in_child=_reset_after_fork)


def _redis():
    """This process's blocking Redis client (``settings.REDIS_URL``)."""
    global _sync_client
    with _sync_lock:
        if _sync_client is None:
            import redis

            _sync_client = redis.Redis.from_url(settings.REDIS_URL)
        return _sync_client


def _aredis():
    """An asyncio Redis client for the running event loop (a client is bound to the loop it was made in)."""
    import redis.asyncio

    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        client = _async_clients[loop] = redis.asyncio.Redis.from_url(settings.REDIS_URL)
    return client


class SharedSemaphore:
    """At most ``limit`` (>= 1) holders of ``name`` at once across processes; each lease lasts
    ``lease_s`` seconds unless renewed. See the module docstring."""

    def __init__(self, name: str, limit: int, lease_s: float):
        if limit < 1 or lease_s <= 0:
            raise ValueError("a shared semaphore needs a limit of at least 1 and a positive lease")
        prefix = settings.CACHES["default"].get("KEY_PREFIX", "")
        self.key = f"{prefix}:semaphore:{name}"
        self.limit, self.lease_s = int(limit), float(lease_s)

    def _args(self, token: str) -> tuple:
        return (_ACQUIRE, 1, self.key, self.limit, self.lease_s, token)

    @contextmanager
    def hold(self):
        """Block until a slot is free, hold it inside the ``with`` block (yields a ``renew()``
        callable), then free it."""
        client, token, wait = _redis(), secrets.token_hex(8), FIRST_WAIT_S
        while not client.eval(*self._args(token)):
            time.sleep(wait)
            wait = min(MAX_WAIT_S, wait * 2)
        try:
            yield lambda: client.eval(_RENEW, 1, self.key, self.lease_s, token)
        finally:
            client.zrem(self.key, token)

    @asynccontextmanager
    async def ahold(self):
        """The async form of ``hold``: waits with ``asyncio.sleep``; yields an async ``renew()``."""
        client, token, wait = _aredis(), secrets.token_hex(8), FIRST_WAIT_S
        while not await client.eval(*self._args(token)):
            await asyncio.sleep(wait)
            wait = min(MAX_WAIT_S, wait * 2)

        async def renew():
            return await client.eval(_RENEW, 1, self.key, self.lease_s, token)

        try:
            yield renew
        finally:
            await asyncio.shield(client.zrem(self.key, token))

    def holders(self) -> int:
        """How many unexpired leases are held now (for pages and tests)."""
        client = _redis()
        now = client.time()
        return int(client.zcount(self.key, now[0] + now[1] / 1e6, "+inf"))
