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
- a destination is broken once its last LINK_CHECK_FAILURES checks (2) all failed, judged on
  its own checks alone; the link is broken while any of its destinations is, and fine again as
  soon as none is (a new check of each broken one succeeded). A destination a pass did not reach
  (blocked, or left for the next tick) keeps what its last checks said; a pass whose checks were
  all blocked says nothing, and ends a broken spell (unknown: the failover stops);
- ok (or unknown) → broken announces link.broken, broken → ok or unknown link.recovered; so does
  an edit that replaces a broken link's destinations (health_forget). Each change is one
  conditional UPDATE (only from the state read), so two checkers racing over one link, or a
  checker and an edit, announce it once;
- the change drops the link's cached entry like an edit (links.services.change), so the next
  redirect reads its health: while broken, a link with a fallback_url sends its visitors there
  (LinkEntry.failover, serving/gates.py), and back to its destinations on recovery.

A checker claims a link before fetching (its health_next_check_at moved past the pass, one
conditional UPDATE), so two checkers holding the same link check it once; a pass is recorded
only if that claim still stands, which an edit of the destinations (health_forget) ends: a
check of the old destinations never lands on the new ones.

The sweep (link_health_sweep, the periodic job) checks the links whose turn has come, a bounded
batch per tick (its time budget kept between destinations, not only between links), at most
one request per host every LINK_CHECK_HOST_SECONDS.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
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


def _history(link: UrlLink) -> dict[str, list[bool]]:
    """Each destination's stored checks (ok or not), newest first, blocked checks skipped: one
    read for the whole pass. It holds only checks of the link's current destinations
    (health_forget drops it with an edit), as many as _trim_history keeps."""
    history: dict[str, list[bool]] = defaultdict(list)
    checks = (
        LinkCheck.objects.filter(link=link)
        .exclude(error=CheckError.BLOCKED)
        .order_by("-checked_at", "-id")
        .values_list("url", "ok")
    )
    for url, ok in checks:
        history[url].append(ok)
    return history


def _failures_in_a_row(earlier: list[bool], latest: checker.CheckResult | None) -> int:
    """How many of the destination's checks in a row have failed up to now: `latest` (this
    pass's, not stored yet; none when it was not checked this pass) first, then `earlier` (its
    stored ones, _history)."""
    needed = settings.LINK_CHECK_FAILURES
    count = 0
    if latest is not None and latest.counts:
        if latest.ok:
            return 0
        count = 1
    for ok in earlier[: max(needed - count, 0)]:
        if ok:
            break
        count += 1
    return count


def _verdict(link: UrlLink, results: list[checker.CheckResult]) -> tuple[str, str]:
    """(the link's health after these checks, the reason in words). Each destination is judged
    on its own checks: broken after its own K failures in a row, whatever the others did; one
    this pass did not reach (blocked, or left for the next tick) keeps what its last checks
    said."""
    needed = settings.LINK_CHECK_FAILURES
    counted = [result for result in results if result.counts]
    if not counted:
        # Nothing said about any destination: what was known is not known any more, and a
        # broken link's failover stops (_set_health).
        blocked = " ".join(result.detail for result in results)
        return HealthStatus.UNKNOWN, blocked or "No destination to check."
    latest = {result.url: result for result in counted}
    history = _history(link)
    broken, failing, hints = [], [], []
    for url in dict.fromkeys([*latest, *link_destinations(link)]):
        result = latest.get(url)
        in_a_row = _failures_in_a_row(history.get(url, []), result)
        if in_a_row >= needed:
            detail = result.detail if result is not None else f"{url} failed its last checks."
            broken.append(f"{detail.rstrip('.')} ({in_a_row} failed checks in a row).")
        elif result is not None and not result.ok:
            failing.append(
                f"{result.detail.rstrip('.')} (failed once; broken after {needed} in a row)."
            )
        elif result is not None and result.detail:
            hints.append(result.detail)
    if broken:
        return HealthStatus.BROKEN, " ".join(broken)
    return HealthStatus.OK, " ".join(failing + hints)


def record_checks(
    *, link: UrlLink, results: list[checker.CheckResult], now: datetime | None = None
) -> str:
    """Store one pass's checks of the link's destinations and apply the rule (the module's
    docstring); the link's health afterwards. The link object is updated to match.

    Only if the link is as `link` read it (its health_next_check_at: the checker's claim, which
    an edit of its destinations and every recorded pass change): a pass over destinations an
    edit replaced meanwhile, or one another checker recorded first, is dropped, stored nowhere.
    """
    now = now or timezone.now()
    status, reason = _verdict(link, results)
    reason = reason[:300]
    # A failure, even one short of breaking the link, brings its next turn forward.
    failing = status == HealthStatus.BROKEN or any(not r.ok and r.counts for r in results)
    wait = settings.LINK_CHECK_BROKEN_SECONDS if failing else settings.LINK_CHECK_OK_SECONDS
    next_check = now + timedelta(seconds=wait)
    with transaction.atomic():
        changed = _set_health(link, status, reason, now, next_check)
        if changed is None:
            return link.health_status
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


_HEALTH_FIELDS = [
    "health_status",
    "health_since",
    "health_reason",
    "health_checked_at",
    "health_next_check_at",
]


def _set_health(
    link: UrlLink, status: str, reason: str, now: datetime, next_check: datetime
) -> str | None:
    """Write the link's health; the event to announce ("" none), or None when the link is not
    as `link` read it any more (nothing written). One conditional UPDATE from the state read:
    of two checkers racing, or a checker and an edit, one wins."""
    was = link.health_status
    # A check that said nothing keeps what was known, except that it ends a broken spell: the
    # failover stops when nothing says the destinations are broken any more.
    keep = status == was or (status == HealthStatus.UNKNOWN and was == HealthStatus.OK)
    fields = {"health_reason": reason, "health_checked_at": now, "health_next_check_at": next_check}
    if not keep:
        fields.update(health_status=status, health_since=now)
    won = UrlLink.objects.filter(
        pk=link.pk, health_status=was, health_next_check_at=link.health_next_check_at
    ).update(**fields)
    if not won:
        link.refresh_from_db(fields=_HEALTH_FIELDS)
        return None
    for name, value in fields.items():
        setattr(link, name, value)
    if keep:
        return ""
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
    """For an edit, in the caller's transaction (the caller saves the fields returned): when
    `changed` gives the link other destinations, its health goes back to unknown, its checks'
    history (about the old ones) goes, and it is first in the checker's line; a check of the
    old destinations under way is dropped when it ends (record_checks). A broken link's
    failover stops with the edit, announced once as link.recovered."""
    if not DESTINATION_FIELDS.intersection(changed):
        return []
    stored = UrlLink.objects.filter(pk=link.pk).only(*DESTINATION_FIELDS).first()
    if stored is not None and link_destinations(stored) == link_destinations(link):
        return []  # a form sends every field again: the same destinations keep their health
    if link.health_status == HealthStatus.BROKEN:
        # Conditional: of two edits racing, one announces.
        ended = UrlLink.objects.filter(pk=link.pk, health_status=HealthStatus.BROKEN).update(
            health_status=HealthStatus.UNKNOWN
        )
        if ended:
            was = copy.copy(link)
            was.health_status, was.health_since = HealthStatus.UNKNOWN, timezone.now()
            was.health_reason = "Its destinations were edited: not checked since."
            events.announce_after_commit(events.LINK_RECOVERED, [was])
    LinkCheck.objects.filter(link=link).delete()
    link.health_status, link.health_since = HealthStatus.UNKNOWN, None
    link.health_reason, link.health_checked_at = "", None
    link.health_next_check_at = None
    return list(_HEALTH_FIELDS)


def _claim(link: UrlLink) -> bool:
    """Take the link's turn before fetching: its next check moves past this pass's end, by one
    conditional UPDATE from the value read, so a second checker holding the same link (two
    ticks, check_links beside the job) finds it taken and skips it. The link is read again
    (its destinations as they are now). False: taken."""
    hold = settings.LINK_CHECK_FETCH_SECONDS * (MAX_DESTINATIONS + 1) + 60
    token = timezone.now() + timedelta(seconds=hold)
    taken = UrlLink.objects.filter(
        pk=link.pk, health_next_check_at=link.health_next_check_at
    ).update(health_next_check_at=token)
    if not taken:
        return False
    link.refresh_from_db()
    # An edit between the UPDATE and the read reset it (health_forget): its pass, not ours.
    return link.health_next_check_at == token


def link_health_check(*, link: UrlLink, ends: float | None = None) -> str | None:
    """Claim the link, check its destinations now (the limiter's pace per host) and apply the
    rule; the link's health afterwards, None when another checker has it. Past `ends`
    (time.monotonic()) the pass stops between destinations: the ones not reached keep what
    their last checks said, and go first next time."""
    if not _claim(link):
        return None
    results = []
    for url in _least_recently_checked_first(link, link_destinations(link)):
        if results and ends is not None and time.monotonic() >= ends:
            break
        _limiter.wait(_host(url))
        results.append(checker.check_url(url, seconds=settings.LINK_CHECK_FETCH_SECONDS))
    return record_checks(link=link, results=results)


def _least_recently_checked_first(link: UrlLink, urls: list[str]) -> list[str]:
    last = dict(
        LinkCheck.objects.filter(link=link)
        .values("url")
        .annotate(last=Max("checked_at"))
        .values_list("url", "last")
    )
    # Never checked first; stable: otherwise the link's order.
    return sorted(urls, key=lambda url: (url in last, last.get(url) or 0))


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
        health = link_health_check(link=link, ends=ends)
        if health is None:
            continue  # another checker has it
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
