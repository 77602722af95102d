from django.urls import path

from analytics import views

urlpatterns = [
    path("dashboard/overview/", views.overview, name="overview"),
    path("dashboard/overview/live/", views.overview_live, name="overview_live"),
    path("dashboard/links/<str:code>/", views.link_stats, name="link_stats"),
    # The pages' totals while open (static/js/live-totals.js); the API's is links_stats_live.
    path("dashboard/links/<str:code>/live/", views.link_live, name="link_live"),
    path("dashboard/links/<str:code>/visits.csv", views.link_visits_csv, name="link_visits_csv"),
    path("dashboard/tags/", views.tags, name="tags"),
    # <path:>: a tag may hold a slash (`spring/summer`), as in the API's tag stats.
    path("dashboard/tags/<path:tag>/", views.tag_stats, name="tag_stats"),
    # Apart from tag_stats: under it, a tag whose name ends in "/live" would lose its page.
    path("dashboard/live/tags/<path:tag>/", views.tag_live, name="tag_live"),
]
