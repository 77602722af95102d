"""/rest/…: Shlink's REST API (and its version-less health check). Shlink answers its routes
alike under /rest/v1/, /rest/v2/ and /rest/v3/: one list, mounted once for the three."""

from django.urls import include, path, re_path

from compat.shlink.problems import route_not_found
from compat.shlink.views import (
    DomainRedirectsView,
    DomainsView,
    DomainVisitsView,
    HealthView,
    MercureInfoView,
    NonOrphanVisitsView,
    OrphanVisitsView,
    RedirectRulesView,
    ShortUrlsView,
    ShortUrlView,
    ShortUrlVisitsView,
    TagsStatsView,
    TagsView,
    TagVisitsView,
    VisitsOverviewView,
)

# Under /rest/v{1,2,3}/; reversed, a name gives the /rest/v3/ path (the first of the class).
VERSIONED = [
    path("health", HealthView.as_view(), name="shlink-v3-health"),  # where the SDK asks
    path("short-urls", ShortUrlsView.as_view(), name="shlink-short-urls"),
    path("short-urls/<str:short_code>", ShortUrlView.as_view(), name="shlink-short-url"),
    path(
        "short-urls/<str:short_code>/redirect-rules",
        RedirectRulesView.as_view(),
        name="shlink-redirect-rules",
    ),
    path(
        "short-urls/<str:short_code>/visits",
        ShortUrlVisitsView.as_view(),
        name="shlink-short-url-visits",
    ),
    path("tags", TagsView.as_view(), name="shlink-tags"),
    path("tags/stats", TagsStatsView.as_view(), name="shlink-tags-stats"),
    path("tags/<str:tag>/visits", TagVisitsView.as_view(), name="shlink-tag-visits"),
    path("domains", DomainsView.as_view(), name="shlink-domains"),
    path("domains/redirects", DomainRedirectsView.as_view(), name="shlink-domain-redirects"),
    path("domains/<str:domain>/visits", DomainVisitsView.as_view(), name="shlink-domain-visits"),
    path("visits", VisitsOverviewView.as_view(), name="shlink-visits-overview"),
    path("visits/non-orphan", NonOrphanVisitsView.as_view(), name="shlink-non-orphan-visits"),
    path("visits/orphan", OrphanVisitsView.as_view(), name="shlink-orphan-visits"),
    path("mercure-info", MercureInfoView.as_view(), name="shlink-mercure-info"),
]

urlpatterns = [
    path("health", HealthView.as_view(), name="shlink-health"),
    re_path(r"^v[321]/", include(VERSIONED)),
    # Last: anything else under /rest/ is Shlink's NOT_FOUND problem, never the HTML page.
    re_path(r"^", route_not_found),
]
