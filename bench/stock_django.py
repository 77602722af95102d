"""The 'stock Django view' of DESIGN.md: full middleware, one django-redis GET plus one RPUSH.

Served as `bench.stock_django:application` with the project's settings; the view is mounted at
/stock/<code> by replacing the URLconf for this process only.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")

import django

django.setup()

from django.core.cache import cache  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpResponseRedirect  # noqa: E402
from django.urls import path  # noqa: E402
from django_redis import get_redis_connection  # noqa: E402


def stock_redirect(request, code):
    target = cache.get(f"stock:{code}") or "https://example.com/landing"
    get_redis_connection("default").rpush("bench:stock", code)
    return HttpResponseRedirect(target)


urlpatterns = [path("<str:code>", stock_redirect)]


class _UrlConf:
    urlpatterns = urlpatterns


from django.conf import settings  # noqa: E402

settings.ROOT_URLCONF = _UrlConf
application = get_wsgi_application()
