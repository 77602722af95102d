from django.urls import path

from analytics.api.conversions import LeadTrackView, SaleTrackView
from analytics.api.privacy import (
    LinkRawVisitsView,
    WorkspaceErasureView,
    WorkspaceVisitorDataView,
)
from analytics.api.views import LinkLiveStatsView, LinkStatsView, TagStatsView, WorkspaceStatsView

# Included under /api/v1/ before links.api.urls, whose last pattern answers every other path.
urlpatterns = [
    path("links/<str:code>/stats/", LinkStatsView.as_view(), name="api-link-stats"),
    path("links/<str:code>/stats/live", LinkLiveStatsView.as_view(), name="api-link-stats-live"),
    # <path:>: a tag may hold a slash (`spring/summer`), sent as %2F.
    path("tags/<path:tag>/stats/", TagStatsView.as_view(), name="api-tag-stats"),
    path("workspaces/<str:slug>/stats/", WorkspaceStatsView.as_view(), name="api-workspace-stats"),
    # Retention and erasure (issue #30): raw visits deleted, counts kept.
    path("links/<str:code>/visits/", LinkRawVisitsView.as_view(), name="api-link-raw-visits"),
    path("workspaces/<str:slug>/erasure/", WorkspaceErasureView.as_view(), name="api-erasure"),
    path(
        "workspaces/<str:slug>/visitor-data/",
        WorkspaceVisitorDataView.as_view(),
        name="api-visitor-data",
    ),
    # Conversions (issue #29): reported by a site's server, for a click of a tracked link.
    path("track/lead", LeadTrackView.as_view(), name="api-track-lead"),
    path("track/sale", SaleTrackView.as_view(), name="api-track-sale"),
]
