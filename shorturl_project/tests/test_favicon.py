"""The site's icon: every page links it, and `/favicon.ico`, which browsers ask for on their own,
answers with it instead of the redirect's 404 that staff saw atop "requests that reached no
link" (issue #27)."""

import pytest
from django.test import Client

from analytics import orphans
from analytics.models import OrphanVisitCount
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db(transaction=True)


def test_favicon_ico_answers_the_icon_and_is_no_orphan_visit():
    orphans.forget_counts()
    status, headers, _ = call_wsgi("/favicon.ico")
    assert status.startswith("302"), status
    icon = headers["Location"]
    assert "favicon" in icon and icon.endswith(".svg")
    assert "max-age=86400" in headers["Cache-Control"]
    orphans.flush_orphans()
    assert not OrphanVisitCount.objects.filter(path="/favicon.ico").exists()

    response = Client().get(icon)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in b"".join(response.streaming_content)


def test_pages_link_the_icon():
    html = Client().get("/accounts/login/").content.decode()
    assert '<link rel="icon"' in html and "favicon" in html
