from django.urls import path, re_path

from core.api.base import SchemaView, SwaggerView, api_not_found
from links.api.views import (
    DomainListView,
    LinkBulkView,
    LinkDetailView,
    LinkListCreateView,
    LinkQrDesignView,
    LinkQrView,
    TagDetailView,
    TagListView,
)

urlpatterns = [
    path("links/", LinkListCreateView.as_view(), name="api-link-list"),
    path("links/bulk/", LinkBulkView.as_view(), name="api-link-bulk"),
    path("links/<str:code>/", LinkDetailView.as_view(), name="api-link-detail"),
    path("links/<str:code>/qr/", LinkQrView.as_view(), name="api-link-qr"),
    path("links/<str:code>/qr-design/", LinkQrDesignView.as_view(), name="api-link-qr-design"),
    path("tags/", TagListView.as_view(), name="api-tag-list"),
    # <path:>: a tag may hold a slash (`spring/summer`), sent as %2F. After the tag stats'
    # pattern (analytics.api.urls is included first).
    path("tags/<path:tag>/", TagDetailView.as_view(), name="api-tag-detail"),
    path("domains/", DomainListView.as_view(), name="api-domain-list"),
    path("schema/", SchemaView.as_view(), name="api-schema"),
    path("docs/", SwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # Last: anything else under /api/v1/ is a JSON 404, never the site's HTML page.
    re_path(r"^", api_not_found),
]
