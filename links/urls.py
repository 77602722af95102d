from django.urls import path, re_path

from links import views

urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/import/", views.link_import_page, name="link_import"),
    path("dashboard/import/<int:import_id>/", views.link_import_status, name="link_import_status"),
    path(
        "dashboard/import/<int:import_id>/progress.json",
        views.link_import_progress,
        name="link_import_progress",
    ),
    path(
        "dashboard/import/<int:import_id>/report.csv",
        views.link_import_report,
        name="link_import_report",
    ),
    re_path(r"^dashboard/export\.(?P<fmt>csv|json)$", views.links_export, name="links_export"),
    path("dashboard/bulk/", views.links_bulk, name="links_bulk"),
    path("dashboard/links/<str:code>/edit/", views.link_edit, name="link_edit"),
    path("dashboard/links/<str:code>/revoke/", views.link_revoke, name="link_revoke"),
    path("dashboard/links/<str:code>/archive/", views.link_archive, name="link_archive"),
    path("dashboard/links/<str:code>/qr/", views.link_qr_page, name="link_qr_page"),
    path(
        "dashboard/links/<str:code>/qr/preview.svg",
        views.link_qr_preview,
        name="link_qr_preview",
    ),
    re_path(
        r"^dashboard/links/(?P<code>[^/]+)/qr\.(?P<fmt>png|svg)$", views.link_qr, name="link_qr"
    ),
]
