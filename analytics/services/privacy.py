"""Privacy modes, applied where a visit is stored (docs/privacy.md): the modes of a batch's
links, the rotating secret that keys visitor ids in "truncated" and "none", and the deletion of
each secret once its window is over (the modes' rules themselves: analytics.privacy).

The redirect carries the raw address to the flush either way (the spool or the Redis buffer holds
it for the seconds until then): the mode is the link's workspace's, which only the flush reads,
and geo and network are looked up from the full address before it is cut or dropped.

A window is ANALYTICS_VISITOR_KEY_HOURS long, counted from the Unix epoch, so every process and
node agrees where one starts. Its secret is made by the first flush that needs it, kept in the
VisitorKey table (every node reads the same one) and deleted by visitor_keys_sweep once the
window plus KEY_GRACE is over. A visit that arrives later than that (its spool was stuck) is
keyed in the current window: its window's secret is not made again.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from analytics.models import VisitorKey
from analytics.privacy import privacy_mode
from links.models import UrlLink

# How long after its window a secret is kept for visits still on their way (flushes run every
# half second; a worker restart or a Redis outage may hold visits back some minutes).
KEY_GRACE = timedelta(minutes=15)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# This process's copy of the windows' secrets (they never change), pruned with the table.
_secrets: dict[datetime, str] = {}


def link_privacy_modes(link_ids: Iterable[int]) -> dict[int, str]:
    """{link id: its privacy mode} of the links that still exist (a deleted link's visits are
    dropped): one query per batch, beside the one that asked which links exist."""
    rows = UrlLink.objects.filter(pk__in=set(link_ids)).values_list(
        "pk", "workspace__analytics_privacy"
    )
    return {pk: privacy_mode(choice or "") for pk, choice in rows}


def window_length() -> timedelta:
    return timedelta(hours=settings.ANALYTICS_VISITOR_KEY_HOURS)


def window_start(at: datetime) -> datetime:
    """The start of the window `at` falls in."""
    length = window_length().total_seconds()
    return _EPOCH + timedelta(seconds=((at - _EPOCH).total_seconds() // length) * length)


def visitor_secret(at: datetime, *, now: datetime | None = None) -> str:
    """The secret keying the visitor ids of a visit at `at`: its window's, or the current
    window's when that one's secret is (about to be) deleted or `at` is ahead of the clock."""
    now = now or timezone.now()
    current = window_start(now)
    start = window_start(at)
    if start > current or start + window_length() + KEY_GRACE <= now:
        start = current
    if len(_secrets) > 1:  # the last window's for its grace, then forgotten here too
        _forget_ended(now)
    secret = _secrets.get(start)
    if secret is None:
        secret = _secrets[start] = _window_secret(start)
    return secret


def _window_secret(start: datetime) -> str:
    """The window's secret from the table, made there by the first process that asks."""
    found = VisitorKey.objects.filter(window_start=start).values_list("secret", flat=True).first()
    if found:
        return found
    try:
        with transaction.atomic():
            VisitorKey.objects.create(window_start=start, secret=secrets.token_hex(32))
    except IntegrityError:
        pass  # another process made it first: theirs is the one
    return VisitorKey.objects.values_list("secret", flat=True).get(window_start=start)


def _forget_ended(now: datetime) -> None:
    ended = now - window_length() - KEY_GRACE
    for start in [start for start in _secrets if start <= ended]:
        del _secrets[start]


def visitor_keys_sweep(*, now: datetime | None = None) -> int:
    """Delete the secrets of the windows that are over (plus KEY_GRACE); returns how many. A
    job in shorturl_project.jobs: after it, the visitor ids of those windows are pseudonyms no
    one can compute again from an address and User-Agent."""
    now = now or timezone.now()
    _forget_ended(now)
    deleted, _ = VisitorKey.objects.filter(
        window_start__lte=now - window_length() - KEY_GRACE
    ).delete()
    return deleted
