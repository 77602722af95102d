"""With DEBUG on (`make run`), an unknown page shows the product's 404 page, as production does,
not Django's technical page listing every URL pattern (issue #27)."""

import pytest
from django.test import Client


@pytest.fixture
def debug_client(settings, user):
    settings.DEBUG = True
    client = Client()  # a new handler: the middleware chain is built with DEBUG on
    client.force_login(user)
    return client


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/no-such-page/",  # nothing in the URLconf matches
        "/dashboard/links/no-such-link/",  # the view raises Http404
    ],
)
def test_debug_404s_show_the_friendly_page(debug_client, path):
    response = debug_client.get(path)
    assert response.status_code == 404
    html = response.content.decode()
    assert "Page not found" in html and "Go to the home page" in html
    assert "URLconf" not in html and "DEBUG = True" not in html


@pytest.mark.django_db
def test_pages_that_write_their_own_404_keep_it(debug_client):
    response = debug_client.get("/api/v2/nothing/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
