"""A look-alike host (security round 3, 12a): `https://аpple.com/` (a Cyrillic а) is a valid
internationalised name and is taken, but it reads like apple.com. Wherever people review a link
(its pages, My links, the stats page, the admin, the API) its ASCII form is shown beside it:
`xn--pple-43d.com` reads like nothing else."""

import pytest
from django.urls import reverse

from links.services.create import link_create
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

LOOKALIKE = "https://\u0430pple.com/login"  # а: U+0430 CYRILLIC SMALL LETTER A
ASCII_FORM = "https://xn--pple-43d.com/login"


@pytest.fixture
def lookalike(user):
    return link_create(user=user, long_url=LOOKALIKE).link


def test_the_api_gives_the_ascii_form_beside_the_url(user, lookalike):
    api = client_for(user)
    shown = api.get(f"/api/v1/links/{lookalike.code}/").json()
    assert (shown["long_url"], shown["long_url_ascii"]) == (LOOKALIKE, ASCII_FORM)
    listed = api.get("/api/v1/links/").json()["results"]
    assert [item["long_url_ascii"] for item in listed] == [ASCII_FORM]
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/caf\u00e9"}, format="json"
    ).json()
    assert created["long_url_ascii"] is None  # an ASCII host needs no second spelling


def test_every_page_that_shows_the_link_shows_its_ascii_form(client, user, lookalike):
    client.force_login(user)
    pages = [
        reverse("dashboard"),
        reverse("link_stats", args=[lookalike.code]),
        reverse("link_edit", args=[lookalike.code]),
        reverse("link_qr_page", args=[lookalike.code]),
        reverse("link_revoke", args=[lookalike.code]),
    ]
    for page in pages:
        html = client.get(page).content.decode()
        assert LOOKALIKE in html, page
        assert ASCII_FORM in html and 'data-testid="ascii-url"' in html, page
    created = client.post(
        reverse("home"),
        follow=True,
        data={
            "long_url": "https://g\u043e\u043egle.com/",
            "redirect_type": "302",
            "pass_query": "on",
        },
    )
    assert "https://xn--ggle-55da.com/" in created.content.decode()  # the page after creating


def test_the_admin_shows_the_ascii_form_in_the_list_and_on_the_link(admin_client, lookalike):
    listed = admin_client.get(reverse("admin:links_urllink_changelist")).content.decode()
    assert "xn--pple-43d.com" in listed
    page = admin_client.get(reverse("admin:links_urllink_change", args=[lookalike.pk]))
    assert ASCII_FORM in page.content.decode()
