"""/rest/…: Shlink's REST API v3 (and its version-less health check)."""

from django.urls import path, re_path

from compat.shlink.problems import route_not_found
from compat.shlink.views import (
    DomainsView,
    HealthView,
    MercureInfoView,
    OrphanVisitsView,
    ShortUrlsView,
    ShortUrlView,
    ShortUrlVisitsView,
    TagsStatsView,
    TagsView,
    VisitsOverviewView,
)

urlpatterns = [
    path("health", HealthView.as_view(), name="shlink-health"),
    path("v3/health", HealthView.as_view(), name="shlink-v3-health"),  # where the SDK asks
    path("v3/short-urls", ShortUrlsView.as_view(), name="shlink-short-urls"),
    path("v3/short-urls/<str:short_code>", ShortUrlView.as_view(), name="shlink-short-url"),
    path(
        "v3/short-urls/<str:short_code>/visits",
        ShortUrlVisitsView.as_view(),
        name="shlink-short-url-visits",
    ),
    path("v3/tags", TagsView.as_view(), name="shlink-tags"),
    path("v3/tags/stats", TagsStatsView.as_view(), name="shlink-tags-stats"),
    path("v3/domains", DomainsView.as_view(), name="shlink-domains"),
    path("v3/visits", VisitsOverviewView.as_view(), name="shlink-visits-overview"),
    path("v3/visits/orphan", OrphanVisitsView.as_view(), name="shlink-orphan-visits"),
    path("v3/mercure-info", MercureInfoView.as_view(), name="shlink-mercure-info"),
    # Last: anything else under /rest/ is Shlink's NOT_FOUND problem, never the HTML page.
    re_path(r"^", route_not_found),
]
