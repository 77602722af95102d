from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_safe

from compat.yourls.views import YourlsApiView
from core.api.base import api_not_found
from core.health import healthz, node_healthz
from links import views as link_views
from links.codes.aliases import RESERVED_ALIASES
from serving.app_links import association_file
from serving.redirect import bare_root_view, redirect_view


def home(request: HttpRequest) -> HttpResponse:
    """`/`: on an extra short domain, that domain's root redirect (or its page); on the
    product's own host, the home page."""
    if (elsewhere := bare_root_view(request)) is not None:
        return elsewhere
    return link_views.home(request)


def favicon(request: HttpRequest) -> HttpResponse:
    """`/favicon.ico`, which browsers ask for on their own: the site's icon (the pages link it
    with <link rel="icon">), not the redirect's 404 counted as a request that reached no link."""
    response = HttpResponseRedirect(static("img/favicon.svg"))
    patch_cache_control(response, public=True, max_age=86400)
    return response


# Crawlers may follow short links (each redirects to its page, which is what gets indexed) but
# stay out of the product's own pages and APIs, which are behind a sign-in or a key anyway.
ROBOTS_TXT = """\
# shorturl: short links may be followed; the app's pages and APIs are not for crawlers.
User-agent: *
Disallow: /dashboard/
Disallow: /admin/
Disallow: /api/
Disallow: /accounts/
Disallow: /workspaces/
Disallow: /rest/
Disallow: /v4/
Disallow: /yourls-api.php
Allow: /
"""


@require_safe
def robots_txt(request: HttpRequest) -> HttpResponse:
    """`/robots.txt`, which crawlers ask for on every host they visit: the same answer on every
    short domain, not the redirect's 404 counted as a request that reached no link."""
    response = HttpResponse(ROBOTS_TXT, content_type="text/plain; charset=utf-8")
    patch_cache_control(response, public=True, max_age=86400)
    return response


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("analytics.api.urls")),
    path("api/v1/", include("webhooks.api.urls")),
    path("api/v1/", include("workspaces.api.urls")),
    path("api/v1/", include("links.api.urls")),
    re_path(r"^api/", api_not_found),  # other API versions or typos: JSON, not the HTML page
    # YOURLS's API for tools written for it (docs/api-yourls.md). A dot is in no short code:
    # the WSGI fast path never takes this path, and the redirect pattern below comes after it.
    path("yourls-api.php", YourlsApiView.as_view(), name="yourls-api"),
    # Shlink's REST API v3 for Shlink clients and dashboards (compat.shlink).
    path("rest/", include("compat.shlink.urls")),
    # Bitly's API v4 (docs/api-bitly.md). Its paths have several segments, which no short code has:
    # the WSGI fast path never takes them, and `/v4` alone stays a possible short code.
    path("v4/", include("compat.bitly.clicks")),  # clicks
    path("v4/", include("compat.bitly.views")),
    path("healthz", healthz, name="healthz"),
    path("healthz/node", node_healthz, name="node-healthz"),
    # A dot is in no short code: the WSGI fast path never takes it; before the redirect pattern.
    path("favicon.ico", favicon, name="favicon"),
    path("robots.txt", robots_txt, name="robots_txt"),
    # Each short domain's app-association files (serving/app_links.py); two segments, so never
    # a short code.
    path(
        ".well-known/apple-app-site-association",
        association_file,
        name="apple_app_site_association",
    ),
    path(".well-known/assetlinks.json", association_file, name="assetlinks"),
    path("", home, name="home"),
    path("", include("accounts.urls")),
    path("", include("links.urls")),
    path("", include("analytics.urls")),
    path("", include("webhooks.urls")),
    path("", include("workspaces.urls")),
    # Last: any single path segment may be a short code, with or without a trailing slash,
    # except reserved words, so that `/admin` still gets its trailing slash from
    # CommonMiddleware.
    re_path(
        r"^(?!(?i:{})/?$)(?P<code>[^/]{{1,64}})/?$".format("|".join(sorted(RESERVED_ALIASES))),
        redirect_view,
        name="redirect",
    ),
]

# An outage met outside a view is a 503 too (core.outages).
handler500 = "core.outages.server_error"
