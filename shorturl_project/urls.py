from django.contrib import admin
from django.urls import include, path, re_path

from links.redirect import redirect_view

from .health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("links.api.urls")),
    path("healthz", healthz, name="healthz"),
    path("", include("links.urls")),
    path("", include("analytics.urls")),
    # Last: anything that is one path segment may be a short code.
    re_path(r"^(?P<code>[^/]{1,64})$", redirect_view, name="redirect"),
]
