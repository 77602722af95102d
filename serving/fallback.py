"""A stopped link's fallback: a visitor of an expired, revoked or limit-reached link is sent
(302) to the link's own `expired_url`, else to its domain's `expired_redirect`, instead of the
410 page (issue #28). Only stopped links come here: the redirect of a live link never looks.

The visit is the link's, noted with the state it was in (VisitRecord.link_state) and with the
fallback as its destination, so the stats can say how many were sent there. It never takes one
of a capped link's visits: the cap's counter is only taken in serving/gates.py, for a click the
link itself serves. A HEAD is sent on like a GET and never counted, as everywhere.

A link before its start (scheduled) is not stopped: it answers its "not live yet" page.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from analytics.capture import record_visit
from links import domains
from links.cache import LinkEntry
from links.models import LinkStatus

GONE = 410
FOUND = 302


def stopped(
    entry: LinkEntry, meta: Mapping[str, str], state: str, *, event_id: str, counted: bool
) -> tuple[int, LinkEntry | None]:
    """(302, the entry sent to the fallback) for a link stopped in `state`, or (410, None) when
    neither the link nor its domain names a fallback."""
    location = entry.fallback
    if not location:
        route = domains.route_for(meta)  # this process's table: no I/O
        default = route.expired_entry if route is not None else None
        if default is None:
            return GONE, None
        location = default.location
    sent = replace(
        entry,
        location=location,
        destination=location,
        link_state=state,
        redirect_type=FOUND,
        # The fallback as it is stored: the visitor's query string was meant for the campaign.
        pass_query=False,
    )
    if counted:
        record_visit(meta, sent, event_id=event_id)
    return FOUND, sent


def gone_state(entry: LinkEntry) -> str:
    """The state of a link whose entry is_gone: revoked wins over expired (LinkStatus's order)."""
    return LinkStatus.REVOKED if entry.revoked else LinkStatus.EXPIRED
