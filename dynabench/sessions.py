"""The session engine (``SESSION_ENGINE``): Django's ``cached_db`` whose cache never outlives the database.

Sessions are read from the cache (Redis) and kept in the database. Django's ``cached_db`` falls back
to the database when the cache read fails, but then writes the session back into the cache
unguarded (a 500 while Redis is out), and a logout deletes the database row before the cache entry:
when that delete fails, the copy in Redis would keep the user signed in once Redis answers again.

Here, while Redis cannot be reached:

- reading a session falls back to the database, so signed-in pages that need nothing else from
  Redis keep working;
- changing or deleting one (logging in or out, a crowd worker's progress) is refused before
  anything changes: the cache entry is deleted first, and that delete failing raises the Redis error,
  which the edge (``dynabench/outages.py``) answers with a 503. The database row is then written
  (or deleted) and the cache filled again (a failure there is only logged: the entry is gone
  already, so the next read comes from the database).

So no session in the cache ever differs from the database's for longer than one request.
"""

from __future__ import annotations

import logging

from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.db import SessionStore as DBStore

from dynabench.outages import REDIS_ERRORS

logger = logging.getLogger("django.contrib.sessions")


class SessionStore(cached_db.SessionStore):
    """``cached_db`` with reads falling back to the database and writes refused while Redis is out."""

    def load(self):
        try:
            return super().load()
        except REDIS_ERRORS:  # the read fell back to the database; filling the cache failed
            return DBStore.load(self)

    async def aload(self):
        try:
            return await super().aload()
        except REDIS_ERRORS:
            return await DBStore.aload(self)

    def save(self, must_create=False):
        if self.session_key is None:
            return self.create()  # as Django's: create() saves through here with must_create=True
        if not must_create:
            self._cache.delete(self.cache_key)  # raises while Redis is out: nothing changed yet
        DBStore.save(self, must_create)
        try:
            self._cache.set(self.cache_key, self._session, self.get_expiry_age())
        except Exception:  # noqa: BLE001 - the entry was deleted above: the next read comes from the database
            logger.exception("Error saving to cache (%s)", self._cache)

    async def asave(self, must_create=False):
        if self.session_key is None:
            return await self.acreate()
        if not must_create:
            await self._cache.adelete(await self.acache_key())
        await DBStore.asave(self, must_create)
        try:
            await self._cache.aset(await self.acache_key(), self._session, await self.aget_expiry_age())
        except Exception:  # noqa: BLE001
            logger.exception("Error saving to cache (%s)", self._cache)

    def delete(self, session_key=None):
        key = session_key or self.session_key
        if key is None:
            return
        self._cache.delete(self.cache_key_prefix + key)  # raises while Redis is out: nothing deleted yet
        DBStore.delete(self, session_key)
        try:  # again: a read between the two deletes may have filled the cache from the row
            self._cache.delete(self.cache_key_prefix + key)
        except Exception:  # noqa: BLE001
            logger.exception("Error deleting from cache (%s)", self._cache)

    async def adelete(self, session_key=None):
        key = session_key or self.session_key
        if key is None:
            return
        await self._cache.adelete(self.cache_key_prefix + key)
        await DBStore.adelete(self, session_key)
        try:
            await self._cache.adelete(self.cache_key_prefix + key)
        except Exception:  # noqa: BLE001
            logger.exception("Error deleting from cache (%s)", self._cache)
