"""Shortcuts for views of either app that show one link."""

from __future__ import annotations

from django.http import Http404, HttpRequest

from links.models import UrlLink
from links.selectors import LinkNotFound, link_get_changeable, link_get_visible


def visible_link_or_404(request: HttpRequest, code: str) -> UrlLink:
    """The link if the signed-in user may see it; anyone else's link is simply not there.
    `?domain=` names the link's short domain (pages of a link on an extra domain carry it)."""
    return _link_or_404(link_get_visible, request, code)


def changeable_link_or_404(request: HttpRequest, code: str) -> UrlLink:
    """The link if the signed-in user may change it. A member who may only read it (a viewer)
    gets PermissionDenied, which Django answers with the 403 page; anyone else the 404 page."""
    return _link_or_404(link_get_changeable, request, code)


def _link_or_404(get_link, request: HttpRequest, code: str) -> UrlLink:
    try:
        return get_link(
            code=code,
            user=request.user,
            domain=request.GET.get("domain"),
            request_host=request.get_host(),
        )
    except LinkNotFound:
        raise Http404("No such link") from None
