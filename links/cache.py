"""The link cache the redirect reads: one entry per code, a short negative entry for unknown ones,
and the set of custom aliases so that garbage which is not a generated code never reaches the DB.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from .models import CodeType, UrlLink

_MISSING = "-"
ALIASES_KEY = "link-aliases"


@dataclass(frozen=True, slots=True)
class LinkEntry:
    code: str
    link_id: int
    long_url: str
    redirect_type: int
    expires_at: float | None  # epoch seconds
    revoked: bool

    @classmethod
    def from_link(cls, link: UrlLink) -> LinkEntry:
        return cls(
            code=link.code,
            link_id=link.pk,
            long_url=link.long_url,
            redirect_type=link.redirect_type,
            expires_at=link.expires_at.timestamp() if link.expires_at else None,
            revoked=link.revoked_at is not None,
        )

    def is_gone(self, now: float | None = None) -> bool:
        """Revoked or past its expiry: the redirect answers 410."""
        if self.revoked:
            return True
        return self.expires_at is not None and self.expires_at <= (now or time.time())


def _key(code: str) -> str:
    return f"link:{code}"


def get_entry(code: str) -> LinkEntry | bool | None:
    """The cached entry, False when the code is known not to exist, None when not cached."""
    value = cache.get(_key(code))
    if value is None:
        return None
    if value == _MISSING:
        return False
    return LinkEntry(code, *value)


def store_entry(entry: LinkEntry) -> None:
    cache.set(
        _key(entry.code),
        (entry.link_id, entry.long_url, entry.redirect_type, entry.expires_at, entry.revoked),
        settings.SHORTURL_CACHE_TTL,
    )


def store_missing(code: str) -> None:
    cache.set(_key(code), _MISSING, settings.SHORTURL_NEGATIVE_CACHE_TTL)


def cache_link(link: UrlLink) -> LinkEntry:
    entry = LinkEntry.from_link(link)
    store_entry(entry)
    return entry


def drop(code: str) -> None:
    cache.delete(_key(code))


def known_aliases() -> frozenset[str]:
    """Every custom alias, loaded with one query when the cache has lost the set."""
    aliases = cache.get(ALIASES_KEY)
    if aliases is None:
        aliases = frozenset(
            UrlLink.objects.filter(code_type=CodeType.CUSTOM).values_list("code", flat=True)
        )
        cache.set(ALIASES_KEY, aliases, settings.SHORTURL_CACHE_TTL)
    return aliases


def forget_aliases() -> None:
    cache.delete(ALIASES_KEY)
