"""Visit hand-off from the redirect. Replaced by the analytics pipeline (issue 5)."""

from django.http import HttpRequest


def record_visit(request: HttpRequest, link) -> None:
    """Keep one click on `link` (a links.cache.LinkEntry); must never slow or fail the redirect."""
