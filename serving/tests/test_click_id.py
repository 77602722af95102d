"""The click id of a link that tracks conversions (issue #29), as a visitor meets it: the redirect
adds `sc_cid=<the visit's event id>` to a web destination, and the stored visit has that id, so a
lead reported with it finds its click. Plain links, HEADs and an app's own scheme get none; a
visitor cannot bring their own. Both entry points (Django's view and the WSGI fast path)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command

from analytics.models import VisitRecord
from links.models import CLICK_ID_PARAM
from links.services.change import link_update
from links.services.create import link_create
from links.tests.helpers import call_wsgi

# transaction=True: the fast path reads a cache miss on a connection of its own (MariaDB).
pytestmark = pytest.mark.django_db(transaction=True)

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
DESKTOP = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"


def _location(client, entry: str, code: str, *, query: str = "", agent: str = DESKTOP) -> str:
    if entry == "wsgi":
        status, headers, _ = call_wsgi(
            f"/{code}", query_string=query, extra={"HTTP_USER_AGENT": agent}
        )
        assert status.startswith("302")
        return headers["Location"]
    path = f"/{code}?{query}" if query else f"/{code}"
    response = client.get(path, HTTP_USER_AGENT=agent)
    assert response.status_code == 302
    return response["Location"]


def _click_ids(location: str) -> list[str]:
    return parse_qs(urlsplit(location).query).get(CLICK_ID_PARAM, [])


@pytest.mark.parametrize("entry", ["django", "wsgi"])
def test_each_click_gets_the_id_its_visit_is_stored_with(client, user, entry):
    link = link_create(
        user=user, long_url="https://shop.example.com/p?x=1#top", track_conversions=True
    ).link
    first = _location(client, entry, link.code, query="utm_source=mail")
    second = _location(client, entry, link.code)
    # The destination's own query and fragment stay; the visitor's query still goes on.
    assert first.startswith("https://shop.example.com/p?x=1&")
    assert first.endswith("#top")
    assert parse_qs(urlsplit(first).query)["utm_source"] == ["mail"]
    ids = _click_ids(first) + _click_ids(second)
    assert len(ids) == 2 and ids[0] != ids[1]
    assert all(re.fullmatch(r"[0-9a-f]{32}", click_id) for click_id in ids)
    call_command("drain_visits", verbosity=0)
    stored = set(VisitRecord.objects.filter(link=link).values_list("event_id", flat=True))
    assert stored == set(ids)
    # The visit's destination is where the marketer sends people, not the id-bearing URL.
    assert set(VisitRecord.objects.filter(link=link).values_list("destination", flat=True)) == {""}


@pytest.mark.parametrize("entry", ["django", "wsgi"])
def test_a_visitor_cannot_choose_the_click_id(client, user, entry):
    link = link_create(user=user, long_url="https://shop.example.com/", track_conversions=True).link
    location = _location(client, entry, link.code, query=f"{CLICK_ID_PARAM}=forged")
    assert len(_click_ids(location)) == 1
    assert _click_ids(location) != ["forged"]


@pytest.mark.parametrize("entry", ["django", "wsgi"])
def test_plain_links_and_app_schemes_get_no_click_id(client, user, entry):
    plain = link_create(user=user, long_url="https://shop.example.com/plain").link
    assert _location(client, entry, plain.code) == "https://shop.example.com/plain"
    app = link_create(
        user=user,
        long_url="https://shop.example.com/app",
        ios_url="exampleshop://product/7",
        track_conversions=True,
    ).link
    assert _location(client, entry, app.code, agent=IPHONE) == "exampleshop://product/7"
    assert _click_ids(_location(client, entry, app.code)) != []


def test_a_head_gets_no_click_id_and_switching_it_off_takes_effect_at_once(client, user):
    link = link_create(user=user, long_url="https://shop.example.com/", track_conversions=True).link
    head = client.head(f"/{link.code}")
    assert head.status_code == 302
    assert _click_ids(head["Location"]) == []
    assert _click_ids(_location(client, "django", link.code)) != []
    link_update(code=link.code, user=user, track_conversions=False)
    assert _location(client, "wsgi", link.code) == "https://shop.example.com/"
