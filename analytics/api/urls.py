from django.urls import path

from .views import LinkStatsView

# Included under /api/v1/ before links.api.urls, whose last pattern answers every other path.
urlpatterns = [
    path("links/<str:code>/stats/", LinkStatsView.as_view(), name="api-link-stats"),
]
