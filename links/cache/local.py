"""This process's own memory of links: its copies of entries (ProcessCache), each tagged with the
code's counter in the node's shared generation table (core.node_state) as read before the Redis
or database read, so that a change (which bumps the counter: see changes) makes every process of
the node drop its copy on its next redirect; and how often this process read links from the
database.
"""

from __future__ import annotations

import contextlib
import itertools
import time

from django.conf import settings

from core.node_state import generations, local_redirects
from links.cache.entries import LinkEntry


class ProcessCache:
    """This process's entries, valid while the code's counter in the node's table is unchanged.

    Values are kept as they are (no pickling); at most MAX_ENTRIES, the oldest dropped first.
    """

    MAX_ENTRIES = 100_000

    def __init__(self):
        self._entries: dict[str, tuple[int, float, object]] = {}

    def get(self, key: str):
        item = self._entries.get(key)
        if item is None:
            return None
        generation, expires, value = item
        if generation != generations().read(key) or expires <= time.monotonic():
            self._entries.pop(key, None)
            return None
        return value

    def put(self, key: str, value, *, ttl: float, generation: int) -> None:
        if len(self._entries) >= self.MAX_ENTRIES:
            # The oldest tenth at once: dropping one entry at a time from the front of a dict
            # gets slow (its iterator skips every slot freed before), up to ms per put.
            with contextlib.suppress(KeyError, RuntimeError):
                for oldest in list(itertools.islice(self._entries, self.MAX_ENTRIES // 10)):
                    self._entries.pop(oldest, None)
        self._entries[key] = (generation, time.monotonic() + ttl, value)

    def invalidate(self, key: str) -> None:
        """Every process's copy of `key` stops counting (this one's at once)."""
        self._entries.pop(key, None)
        generations().bump(key)

    def clear(self) -> None:
        self._entries.clear()


process_cache = ProcessCache()


def keep_here(code: str, entry: LinkEntry | bool | None, generation: int | None) -> None:
    """Keep a looked-up answer (an entry, or False: no such code) in this process, tagged with
    the generation read before the lookup; nothing without a tag or an answer."""
    if generation is None or entry is None:
        return
    ttl = settings.SHORTURL_CACHE_TTL if entry else settings.SHORTURL_NEGATIVE_CACHE_TTL
    process_cache.put(code, entry, ttl=ttl, generation=generation)


def generation_before_read(code: str) -> int | None:
    """The tag for an entry about to be read from Redis or the database, when this process
    keeps its own entries; else None."""
    return generations().read(code) if local_redirects() else None


# How many times this process read links from the database: the redirect's fast path recycles
# database connections (as Django does after a request) only when a read happened.
database_reads = {"count": 0}
