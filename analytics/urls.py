from django.urls import path

from analytics import views

urlpatterns = [
    path("dashboard/overview/", views.overview, name="overview"),
    path("dashboard/links/<str:code>/", views.link_stats, name="link_stats"),
    path("dashboard/links/<str:code>/visits.csv", views.link_visits_csv, name="link_visits_csv"),
    path("dashboard/tags/", views.tags, name="tags"),
    # <path:>: a tag may hold a slash (`spring/summer`), as in the API's tag stats.
    path("dashboard/tags/<path:tag>/", views.tag_stats, name="tag_stats"),
]
