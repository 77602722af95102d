"""Shlink's JSON shapes for our links, visits, domains and pages of results."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from django.db.models import QuerySet
from django.http import HttpRequest

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
    totals = link_click_totals(link_ids=ids)
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
                "validSince": None,  # we have no start time
                "validUntil": atom(link.shown_expiry),
                "maxVisits": link.max_visits,
            },
            # Shlink says null for the default domain.
            "domain": link.domain_host or None,
            "title": link.title or None,
            "crawlable": False,  # accepted and ignored: we have no robots.txt per link
            "forwardQuery": link.pass_query,
            "hasRedirectRules": bool(link.rules),
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


def page(items: QuerySet | list, *, page_number: int, per_page: int | None) -> tuple[list, dict]:
    """One page of `items` and Shlink's pagination object; `per_page` None: everything."""
    total = items.count() if isinstance(items, QuerySet) else len(items)
    if per_page is None:
        rows = list(items)
        pages = 1
        per_page_shown = total
    else:
        start = (page_number - 1) * per_page
        rows = list(items[start : start + per_page])
        pages = max(1, math.ceil(total / per_page))
        per_page_shown = per_page
    return rows, {
        "currentPage": page_number,
        "pagesCount": pages,
        "itemsPerPage": per_page_shown,
        "itemsInCurrentPage": len(rows),
        "totalItems": total,
    }
