"""A visitor's query string is passed on to the destination (per link), and `/<code>/` redirects
like `/<code>`: what a visitor of a shared link notices."""

import re

import pytest

from links.cache import LinkEntry
from links.services.change import link_update
from links.services.create import link_create
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import call_wsgi, client_for

pytestmark = pytest.mark.django_db


def test_the_query_string_is_passed_on_by_default(client, user):
    link = link_create(user=user, long_url="https://example.com/sale").link
    response = client.get(f"/{link.code}?utm_source=mail&x=1")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/sale?utm_source=mail&x=1"


def test_the_destinations_own_keys_win(client, user):
    link = link_create(user=user, long_url="https://example.com/sale?x=dest#top").link
    response = client.get(f"/{link.code}?x=visitor&y=2")
    assert response["Location"] == "https://example.com/sale?x=dest&y=2#top"


def test_a_link_can_keep_the_query_string_to_itself(client, user):
    link = link_create(user=user, long_url="https://example.com/sale", pass_query=False).link
    assert client.get(f"/{link.code}?x=1")["Location"] == "https://example.com/sale"


def test_turning_it_off_takes_effect_on_the_next_click(client, user):
    link = link_create(user=user, long_url="https://example.com/sale").link
    assert client.get(f"/{link.code}?x=1")["Location"].endswith("?x=1")  # cached now
    link_update(code=link.code, user=user, pass_query=False)
    assert client.get(f"/{link.code}?x=1")["Location"] == "https://example.com/sale"


def test_a_hit_without_a_query_string_keeps_the_destination_as_it_is(client, user):
    link = link_create(user=user, long_url="https://example.com/sale?a=1").link
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/sale?a=1"


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_fast_path_passes_the_query_string_on(user):
    link = link_create(user=user, long_url="https://example.com/w?k=own").link
    call_wsgi(f"/{link.code}")  # cached
    status, headers, _ = call_wsgi(f"/{link.code}", query_string="k=theirs&q=caf%C3%A9&z")
    assert status.startswith("302")
    assert headers["Location"] == "https://example.com/w?k=own&q=caf%C3%A9&z"


@pytest.mark.django_db(transaction=True)
def test_raw_bytes_in_a_query_string_cannot_break_the_location_header(user):
    link = link_create(user=user, long_url="https://example.com/w").link
    # A WSGI server hands over the raw bytes decoded as latin-1.
    raw = "q=caf\u00c3\u00a9 x".encode().decode("latin-1")
    _, headers, _ = call_wsgi(f"/{link.code}", query_string=raw)
    assert headers["Location"].isascii()
    assert " " not in headers["Location"]


def test_the_api_sets_and_shows_pass_query(user):
    api = client_for(user)
    created = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/a", "pass_query": False}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["pass_query"] is False
    code = created.json()["code"]
    changed = api.patch(f"/api/v1/links/{code}/", {"pass_query": True}, format="json")
    assert changed.json()["pass_query"] is True
    for not_a_boolean in ("maybe", 0, "true"):
        refused = api.patch(f"/api/v1/links/{code}/", {"pass_query": not_a_boolean}, format="json")
        assert refused.status_code == 400
        assert refused.json() == {"pass_query": ["Use true or false."]}


def test_the_create_form_passes_the_query_string_on_unless_unticked(client, user):
    client.force_login(user)
    page = client.get("/")
    assert b'name="pass_query"' in page.content
    client.post(
        "/", {"long_url": "https://example.com/f", "redirect_type": 302, "pass_query": "on"}
    )
    client.post(
        "/", {"long_url": "https://example.com/g", "alias": "no-pass", "redirect_type": 302}
    )
    from links.models import UrlLink

    assert UrlLink.objects.get(long_url="https://example.com/f").pass_query is True
    assert UrlLink.objects.get(long_url="https://example.com/g").pass_query is False


def test_older_cached_entries_without_the_flag_still_read():
    entry = LinkEntry.parse("Abc1234", "42\t302\t\t0\thttps://example.com/")
    assert entry.pass_query is True
    assert entry.location == "https://example.com/"
    again = LinkEntry.parse("Abc1234", entry.serialize())
    assert again == entry
    off = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False, pass_query=False)
    assert LinkEntry.parse("Abc1234", off.serialize()) == off


# --- Trailing slash -----------------------------------------------------------------------------


def test_a_trailing_slash_redirects_like_the_bare_code(client, user):
    UrlLinkFactory(owner=user, long_url="https://example.com/spring", alias="spring-sale")
    response = client.get("/spring-sale/?x=1")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/spring?x=1"


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_fast_path_takes_a_trailing_slash_too(user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/slash")
    status, headers, _ = call_wsgi(f"/{link.code}/")
    assert status.startswith("302")
    assert headers["Location"] == "https://example.com/slash"
    status, _, _ = call_wsgi("/admin/")  # reserved words still reach Django
    assert not status.startswith("404")


def test_the_edit_page_turns_pass_through_off(client, user):
    link = link_create(user=user, long_url="https://example.com/e").link
    client.force_login(user)
    page = client.get(f"/dashboard/links/{link.code}/edit/")
    box = re.search(r'<input type="checkbox" name="pass_query"[^>]*>', page.content.decode())
    assert box is not None and " checked" in box[0]
    # An unticked box is not sent at all.
    client.post(
        f"/dashboard/links/{link.code}/edit/",
        {"long_url": link.long_url, "title": "", "redirect_type": "302"},
    )
    assert client.get(f"/{link.code}?x=1")["Location"] == "https://example.com/e"


def test_staff_see_the_setting_on_the_admin_change_page(admin_client, user):
    link = link_create(user=user, long_url="https://example.com/adm", pass_query=False).link
    page = admin_client.get(f"/admin/links/urllink/{link.pk}/change/").content.decode()
    assert "Pass query string on" in page


@pytest.mark.django_db(transaction=True)
def test_a_query_that_would_pass_the_url_cap_is_dropped_and_the_visitor_still_arrives(
    client, settings, user
):
    """A visitor's query string has no cap of its own: passed on whole, a 10 KB one made a
    Location far past the 2,048 bytes a stored URL may have (a 502 from a proxy in front)."""
    link = link_create(user=user, long_url="https://example.com/offer?src=own").link
    own = "https://example.com/offer?src=own"
    room = settings.SHORTURL_MAX_URL_LENGTH - len(own + "&q=")
    fits = "q=" + "%C3%A9" * (room // 6) + "b" * (room % 6)  # escapes the visitor made
    for fetch in (
        lambda query: call_wsgi(f"/{link.code}", query_string=query)[1]["Location"],
        lambda query: client.get(f"/{link.code}?{query}")["Location"],
    ):
        assert fetch("q=" + "a" * 10_000) == own
        assert fetch("q=" + "é" * 5_000) == own  # 30 KB once encoded
        at_the_cap = fetch(fits)
        assert at_the_cap == f"{own}&{fits}"
        assert len(at_the_cap) == settings.SHORTURL_MAX_URL_LENGTH
        assert fetch(fits + "c") == own  # one byte over: the query is dropped
        assert fetch("utm_source=mail") == f"{own}&utm_source=mail"


def test_the_query_cap_follows_the_setting(client, settings, user):
    link = link_create(user=user, long_url="https://example.com/offer").link
    settings.SHORTURL_MAX_URL_LENGTH = 60
    fits = "q=" + "a" * (60 - len("https://example.com/offer?q="))
    assert client.get(f"/{link.code}?{fits}")["Location"] == f"https://example.com/offer?{fits}"
    assert client.get(f"/{link.code}?{fits}b")["Location"] == "https://example.com/offer"
