"""The product's URLs plus two that fail on purpose, so a browser test can see the real 500 and
503 pages as the server answers them (through handler500 and the outage middleware), not a
template rendered by hand."""

from django.db import OperationalError
from django.urls import path

from shorturl_project.urls import handler500
from shorturl_project.urls import urlpatterns as product_urlpatterns

__all__ = ["handler500", "urlpatterns"]


def a_bug(request):
    raise RuntimeError("a bug, on purpose: the 500 page")


def an_outage(request):
    raise OperationalError("unable to open database file")  # what SQLite says when it is gone


urlpatterns = [
    path("test-faults/bug/", a_bug),
    path("test-faults/outage/", an_outage),
    *product_urlpatterns,
]
