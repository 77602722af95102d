from django.urls import path

from analytics.api.conversions import LeadTrackView, SaleTrackView
from analytics.api.views import LinkLiveStatsView, LinkStatsView, TagStatsView, WorkspaceStatsView

# Included under /api/v1/ before links.api.urls, whose last pattern answers every other path.
urlpatterns = [
    path("links/<str:code>/stats/", LinkStatsView.as_view(), name="api-link-stats"),
    path("links/<str:code>/stats/live", LinkLiveStatsView.as_view(), name="api-link-stats-live"),
    # <path:>: a tag may hold a slash (`spring/summer`), sent as %2F.
    path("tags/<path:tag>/stats/", TagStatsView.as_view(), name="api-tag-stats"),
    path("workspaces/<str:slug>/stats/", WorkspaceStatsView.as_view(), name="api-workspace-stats"),
    # Conversions (issue #29): reported by a site's server, for a click of a tracked link.
    path("track/lead", LeadTrackView.as_view(), name="api-track-lead"),
    path("track/sale", SaleTrackView.as_view(), name="api-track-sale"),
]
