"""Destination health (issue #29): checking what a link's visitors are sent to, deciding whether
it is broken, and sending its visitors to its failover URL meanwhile.

The rule, in one place (record_checks):
- a link's destinations are its long URL, its variants' and its rules' URLs (web ones, once
  each, at most MAX_DESTINATIONS); each check of one is a LinkCheck (links.checker says how);
- a check fails on a 5xx, a 404 or 410, a connection refused or reset, a name that does not
  resolve, a TLS error, or no complete answer within LINK_CHECK_FETCH_SECONDS. Any other
  answer (2xx, 3xx beyond MAX_REDIRECTS aside, 401/403/429…) is fine; a 200 that looks like a
  "not found" page (links.checker.soft_404_hint) is fine too, its hint kept in the reason: the
  signal is too weak to send a link's visitors elsewhere. A check the address rule stopped
  (CheckError.BLOCKED) counts neither way;
- a destination is broken once its last LINK_CHECK_FAILURES checks (2) all failed; the link is
  broken while any of its destinations is, and fine again as soon as a new check of each of
  them succeeds (one success recovers);
- ok (or unknown) → broken announces link.broken, broken → ok link.recovered: each change is
  one conditional UPDATE (only from the state read), so two checkers racing over one link
  announce it once;
- the change drops the link's cached entry like an edit (links.services.change), so the next
  redirect reads its health: while broken, a link with a fallback_url sends its visitors there
  (LinkEntry.failover, serving/gates.py), and back to its destinations on recovery.

The sweep (link_health_sweep, the periodic job) checks the links whose turn has come, a bounded
batch per tick, at most one request per host every LINK_CHECK_HOST_SECONDS.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from links import cache as link_cache
from links import checker, events
from links.models import CheckError, HealthStatus, LinkCheck, UrlLink

# A link with more (rules can be 20) is checked on its first ones only: one link must not take
# a tick's whole budget.
MAX_DESTINATIONS = 8


def link_destinations(link: UrlLink) -> list[str]:
    """The web URLs the link sends visitors to, each once: its long URL, then its variants'
    and its rules' (app deep links are for apps, not fetched)."""
    urls = [link.long_url]
    urls += [variant.get("url", "") for variant in link.variants or ()]
    urls += [rule.get("url", "") for rule in link.rules or ()]
    web = (url for url in urls if url.lower().startswith(("http://", "https://")))
    return list(dict.fromkeys(web))[:MAX_DESTINATIONS]


def _failures_in_a_row(link: UrlLink, url: str, latest: checker.CheckResult) -> int:
    """How many of the destination's checks in a row have failed, `latest` (not stored yet)
    included; blocked checks skipped."""
    if latest.ok:
        return 0
    needed = settings.LINK_CHECK_FAILURES
    earlier = (
        LinkCheck.objects.filter(link=link, url=url)
        .exclude(error=CheckError.BLOCKED)
        .order_by("-checked_at", "-id")
        .values_list("ok", flat=True)[: max(needed - 1, 0)]
    )
    count = 1
    for ok in earlier:
        if ok:
            break
        count += 1
    return count


def _verdict(link: UrlLink, results: list[checker.CheckResult]) -> tuple[str, str]:
    """(the link's health after these checks, the reason in words)."""
    needed = settings.LINK_CHECK_FAILURES
    counted = [result for result in results if result.counts]
    broken, failing, hints = [], [], []
    for result in counted:
        in_a_row = _failures_in_a_row(link, result.url, result)
        if in_a_row >= needed:
            broken.append(f"{result.detail.rstrip('.')} ({in_a_row} failed checks in a row).")
        elif not result.ok:
            failing.append(
                f"{result.detail.rstrip('.')} (failed once; broken after {needed} in a row)."
            )
        elif result.detail:
            hints.append(result.detail)
    if broken:
        return HealthStatus.BROKEN, " ".join(broken)
    if not counted:
        blocked = " ".join(result.detail for result in results)
        return HealthStatus.UNKNOWN, blocked or "No destination to check."
    if link.health_status == HealthStatus.BROKEN and failing:
        # Not recovered: a destination still fails, if not yet K times since the last success.
        return HealthStatus.BROKEN, " ".join(failing)
    return HealthStatus.OK, " ".join(failing + hints)


def record_checks(
    *, link: UrlLink, results: list[checker.CheckResult], now: datetime | None = None
) -> str:
    """Store one pass's checks of the link's destinations and apply the rule (the module's
    docstring); the link's health afterwards. The link object is updated to match."""
    now = now or timezone.now()
    status, reason = _verdict(link, results)
    reason = reason[:300]
    # A failure, even one short of breaking the link, brings its next turn forward.
    failing = status == HealthStatus.BROKEN or any(not r.ok and r.counts for r in results)
    wait = settings.LINK_CHECK_BROKEN_SECONDS if failing else settings.LINK_CHECK_OK_SECONDS
    next_check = now + timedelta(seconds=wait)
    with transaction.atomic():
        LinkCheck.objects.bulk_create(
            LinkCheck(
                link=link,
                checked_at=now,
                url=result.url[:2048],
                status_code=result.status_code,
                final_url=result.final_url[:2048],
                elapsed_ms=result.elapsed_ms,
                error=result.error,
                detail=result.detail[:300],
                ok=result.ok,
            )
            for result in results
        )
        _trim_history(link, len(results))
        changed = _set_health(link, status, reason, now, next_check)
    if changed:
        # A copy: the listeners hear of the link as it was at this change, not as a later one
        # in the same transaction left it.
        events.announce_after_commit(changed, [copy.copy(link)])
    return link.health_status


def _trim_history(link: UrlLink, per_pass: int) -> None:
    """Keep the newest LINK_CHECK_HISTORY checks (never fewer than the rule needs)."""
    keep = max(settings.LINK_CHECK_HISTORY, settings.LINK_CHECK_FAILURES * per_pass)
    history = LinkCheck.objects.filter(link=link)
    # A list, not a subquery: MySQL takes no LIMIT inside IN (…).
    kept = list(history.order_by("-checked_at", "-id").values_list("id", flat=True)[:keep])
    if len(kept) == keep:
        history.exclude(id__in=kept).delete()


def _set_health(
    link: UrlLink, status: str, reason: str, now: datetime, next_check: datetime
) -> str:
    """Write the link's health; the event to announce ("" none). The change of state is a
    conditional UPDATE from the states it may come from: of two checkers racing, one wins."""
    if status == link.health_status or (
        status == HealthStatus.UNKNOWN and link.health_status != HealthStatus.UNKNOWN
    ):
        # No change of state (a check that said nothing keeps what was known).
        UrlLink.objects.filter(pk=link.pk).update(
            health_reason=reason, health_checked_at=now, health_next_check_at=next_check
        )
        link.health_reason, link.health_checked_at = reason, now
        link.health_next_check_at = next_check
        return ""
    came_from = (
        [HealthStatus.OK, HealthStatus.UNKNOWN]
        if status == HealthStatus.BROKEN
        else [link.health_status]
    )
    won = UrlLink.objects.filter(pk=link.pk, health_status__in=came_from).update(
        health_status=status,
        health_since=now,
        health_reason=reason,
        health_checked_at=now,
        health_next_check_at=next_check,
    )
    if not won:
        link.refresh_from_db(
            fields=["health_status", "health_since", "health_reason", "health_checked_at"]
        )
        return ""
    was = link.health_status
    link.health_status, link.health_since = status, now
    link.health_reason, link.health_checked_at = reason, now
    link.health_next_check_at = next_check
    if link.fallback_url and HealthStatus.BROKEN in (was, status):
        # Where its visitors go changes: the cached entry goes, as with an edit.
        key = link_cache.key_of_link(link)
        link_cache.drop(key)
        link_cache.drop_after_commit(key)
    if status == HealthStatus.BROKEN:
        return events.LINK_BROKEN
    if was == HealthStatus.BROKEN:
        return events.LINK_RECOVERED
    return ""


# The fields whose change gives the link other destinations: what was known is about the old ones.
DESTINATION_FIELDS = frozenset({"long_url", "rules", "variants"})


def health_forget(link: UrlLink, changed: Iterable[str]) -> list[str]:
    """For an edit (in memory; the caller saves): when `changed` gives the link other
    destinations, its health goes back to unknown (no event: nothing recovered) and it is first
    in the checker's line; a broken link's failover stops with the edit. The fields to save."""
    if not DESTINATION_FIELDS.intersection(changed) or link.health_checked_at is None:
        return []
    link.health_status, link.health_since = HealthStatus.UNKNOWN, None
    link.health_reason, link.health_checked_at = "", None
    link.health_next_check_at = None
    return [
        "health_status",
        "health_since",
        "health_reason",
        "health_checked_at",
        "health_next_check_at",
    ]


def link_health_check(*, link: UrlLink) -> str:
    """Check every destination of one link now (the limiter's pace per host), and apply the
    rule; the link's health afterwards."""
    results = []
    for url in link_destinations(link):
        _limiter.wait(_host(url))
        results.append(checker.check_url(url, seconds=settings.LINK_CHECK_FETCH_SECONDS))
    return record_checks(link=link, results=results)


def links_due(*, now: datetime | None = None) -> Iterable[UrlLink]:
    """Active links whose turn has come, never checked first, then the longest waiting."""
    now = now or timezone.now()
    due = Q(health_next_check_at__isnull=True) | Q(health_next_check_at__lte=now)
    return (
        UrlLink.objects.active(now)
        .filter(due)
        .order_by(F("health_next_check_at").asc(nulls_first=True), "id")
    )


def link_health_sweep(
    *,
    max_seconds: float | None = None,
    max_links: int | None = None,
    links: Iterable[UrlLink] | None = None,
    progress: Callable[[UrlLink, str], object] | None = None,
) -> int:
    """One tick of the checker: the due links (or `links`), within `max_seconds` and
    `max_links`; a link one of whose hosts was asked too recently waits for a later tick. The
    number of links checked. `progress(link, health)` after each."""
    max_seconds = settings.LINK_CHECK_TICK_SECONDS if max_seconds is None else max_seconds
    max_links = settings.LINK_CHECK_BATCH if max_links is None else max_links
    ends = time.monotonic() + max_seconds
    waiting = links is not None  # named links (check_links): wait for their hosts' turn
    candidates = links if links is not None else links_due()[: max_links * 5]
    checked = 0
    for link in candidates:
        if checked >= max_links or time.monotonic() >= ends:
            break
        hosts = {_host(url) for url in link_destinations(link)}
        if not waiting and any(_limiter.busy(host) for host in hosts):
            continue
        health = link_health_check(link=link)
        checked += 1
        if progress is not None:
            progress(link, health)
    return checked


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


class _HostLimiter:
    """At most one request per host every LINK_CHECK_HOST_SECONDS, in this process (one checker
    runs per node in the embedded mode, in the webhooks worker in services mode)."""

    def __init__(self) -> None:
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def busy(self, host: str) -> bool:
        with self._lock:
            return self._next.get(host, 0.0) > time.monotonic()

    def wait(self, host: str) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(host, 0.0))
            self._next[host] = start + settings.LINK_CHECK_HOST_SECONDS
            if len(self._next) > 10_000:  # forget hosts whose turn is long past
                self._next = {h: t for h, t in self._next.items() if t > now}
        if start > now:
            time.sleep(start - now)


_limiter = _HostLimiter()
