"""Shlink's JSON shapes for our links, visits, domains and pages of results."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest

from analytics.models import OrphanKind, OrphanVisitCount
from analytics.orphans import OTHER_PATHS
from links.models import Domain, UrlLink
from links.selectors import link_click_totals, link_tag_names
from links.shortlinks import link_short_url


def atom(moment: datetime | None) -> str | None:
    """Shlink's dates: ISO 8601 to the second with the offset (`2026-05-01T10:00:00+00:00`)."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def visits_summary(totals: dict[str, int]) -> dict[str, int]:
    people, bots = totals.get("clicks", 0), totals.get("bot_clicks", 0)
    return {"total": people + bots, "nonBots": people, "bots": bots}


def short_urls(links: list[UrlLink], *, request: HttpRequest) -> list[dict]:
    """ShlinkShortUrl objects, with every link's totals and tags read in one query each."""
    ids = [link.pk for link in links]
    totals = link_click_totals(link_ids=ids, people=False)  # Shlink's summary has no people
    tags = link_tag_names(link_ids=ids)
    return [
        {
            "shortCode": link.code,
            "shortUrl": link_short_url(link, request=request),
            "longUrl": link.long_url,
            "dateCreated": atom(link.created_at),
            "visitsSummary": visits_summary(totals[link.pk]),
            "tags": tags[link.pk],
            "meta": {
                "validSince": atom(link.valid_since),
                "validUntil": atom(link.shown_expiry),
                "maxVisits": link.max_visits,
            },
            # Shlink says null for the default domain.
            "domain": link.domain_host or None,
            "title": link.title or None,
            # /robots.txt lets crawlers follow every short link (shorturl_project/urls.py);
            # a create's or edit's `crawlable` is accepted and ignored.
            "crawlable": True,
            "forwardQuery": link.pass_query,
            # App links are listed as trailing device rules (compat.shlink.redirect_rules).
            "hasRedirectRules": bool(link.rules or link.ios_url or link.android_url),
        }
        for link in links
    ]


def short_url(link: UrlLink, *, request: HttpRequest) -> dict:
    return short_urls([link], request=request)[0]


def visit(record, *, visited_url: str) -> dict:
    """A ShlinkVisit from a VisitRecord: coordinates and time zones are not kept (null)."""
    location = {
        "countryCode": record.country_code or None,
        "countryName": record.country or None,
        "regionName": record.province or None,
        "cityName": record.city or None,
        "latitude": None,
        "longitude": None,
        "timezone": None,
    }
    location["isEmpty"] = not any(location.values())
    return {
        "referer": record.referrer,
        "date": atom(record.visit_time),
        "userAgent": record.user_agent,
        "visitLocation": location,
        "potentialBot": record.is_bot,
        "visitedUrl": visited_url,
        "redirectUrl": record.destination or None,
    }


# Shlink's orphan visit types ↔ our kinds: a request for an unknown short code, a short domain's
# bare root, and a request that is no short URL at all (here: to a host that is none of ours).
ORPHAN_TYPES = {
    OrphanKind.UNKNOWN_CODE: "invalid_short_url",
    OrphanKind.BARE_ROOT: "base_url",
    OrphanKind.UNKNOWN_HOST: "regular_404",
}
ORPHAN_KINDS = {shlink: kind for kind, shlink in ORPHAN_TYPES.items()}


def orphan_visited_url(row: OrphanVisitCount, *, request: HttpRequest) -> str | None:
    """The URL asked for: its host (without a port) and path as counted, with SHORT_URL_BASE's
    scheme (else this request's; the visit's own was not kept). None for the paths counted
    together past the per-process limit (analytics.orphans.OTHER_PATHS): theirs were not kept."""
    if row.path == OTHER_PATHS:
        return None
    if not row.host:
        return row.path
    scheme = urlsplit(settings.SHORT_URL_BASE).scheme or request.scheme
    return f"{scheme}://{row.host}{row.path}"


def orphan_visit(row: OrphanVisitCount, *, request: HttpRequest) -> dict:
    """A ShlinkOrphanVisit for one of the visits `row` counts. Counts keep the hour, the URL and
    the Referer, nothing else: the date is the hour's start, the User-Agent empty, no location,
    and none is flagged as a bot (Shlink's rule too for an empty User-Agent)."""
    return {
        "referer": row.referrer,
        "date": atom(row.hour),
        "userAgent": "",
        "visitLocation": None,
        "potentialBot": False,
        "visitedUrl": orphan_visited_url(row, request=request),
        "redirectUrl": None,
        "type": ORPHAN_TYPES.get(row.kind, "regular_404"),
    }


def orphan_visits(rows: list[tuple[OrphanVisitCount, int]], *, request: HttpRequest) -> list[dict]:
    """analytics.selectors.orphan_visit_slice's (row, how many) as that many single visits."""
    return [orphan_visit(row, request=request) for row, many in rows for _ in range(many)]


def redirects(domain: Domain | None) -> dict[str, str | None]:
    """A domain's redirects by Shlink's names: the bare root (never for the default domain,
    whose root is the site's home page) and unknown codes; other 404s are never redirected."""
    if domain is None:
        return {
            "baseUrlRedirect": None,
            "regular404Redirect": None,
            "invalidShortUrlRedirect": None,
        }
    return {
        "baseUrlRedirect": domain.root_redirect or None,
        "regular404Redirect": None,
        "invalidShortUrlRedirect": domain.not_found_redirect or None,
    }


def pagination(*, total: int, page_number: int, per_page: int, in_page: int) -> dict:
    """Shlink's pagination object."""
    return {
        "currentPage": page_number,
        "pagesCount": max(1, math.ceil(total / per_page)) if per_page else 1,
        "itemsPerPage": per_page,
        "itemsInCurrentPage": in_page,
        "totalItems": total,
    }


def page(items: QuerySet | list, *, page_number: int, per_page: int | None) -> tuple[list, dict]:
    """One page of `items` and Shlink's pagination object; `per_page` None: everything."""
    total = items.count() if isinstance(items, QuerySet) else len(items)
    if per_page is None:
        rows = list(items)
        return rows, pagination(total=total, page_number=page_number, per_page=total, in_page=total)
    start = (page_number - 1) * per_page
    rows = list(items[start : start + per_page])
    return rows, pagination(
        total=total, page_number=page_number, per_page=per_page, in_page=len(rows)
    )
