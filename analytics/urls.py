from django.urls import path

from . import views

urlpatterns = [
    path("dashboard/overview/", views.overview, name="overview"),
    path("dashboard/links/<str:code>/", views.link_stats, name="link_stats"),
    path("dashboard/links/<str:code>/visits.csv", views.link_visits_csv, name="link_visits_csv"),
]
