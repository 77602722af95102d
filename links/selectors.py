"""Reads of links for pages and APIs. Writes live in services.py."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django.utils import timezone

from analytics.selectors import with_total_clicks

from .models import UrlLink

LINK_ORDERINGS = {
    "newest": ("-created_at", "-id"),
    "oldest": ("created_at", "id"),
    "code": ("code",),
    "expires": ("expires_at", "-created_at"),
    "clicks": ("-total_clicks", "-created_at", "-id"),
}


def link_list(
    *,
    user,
    search: str | None = None,
    active: bool | None = None,
    order: str = "newest",
    owned_only: bool = True,
) -> QuerySet[UrlLink]:
    """Links `user` may see, newest first by default.

    `owned_only=False` lets staff see every link; marketers always see only their own.
    `search` matches long URL, title and code; `active` keeps active (True) or stopped (False).
    """
    links = UrlLink.objects.select_related("owner")
    if owned_only or not user.is_staff:
        links = links.filter(owner=user)
    if search:
        search = search.strip()
        links = links.filter(
            Q(long_url__icontains=search) | Q(title__icontains=search) | Q(code=search)
        )
    now = timezone.now()
    if active is True:
        links = links.active(now)
    elif active is False:
        links = links.inactive(now)
    if order == "clicks":
        links = with_total_clicks(links)
    return links.order_by(*LINK_ORDERINGS.get(order, LINK_ORDERINGS["newest"]))
