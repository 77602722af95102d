"""The stats page says what matters once (issue #14, wording and noise): the latest visits are
people's unless bots are asked for, bots there are named with their kind as a badge, empty
breakdowns are one line instead of a card each, and a table that knows nothing ("Unknown
100%") is a muted note instead of a card."""

import re

import pytest
from django.urls import reverse

from analytics.models import VisitRecord
from analytics.tests.factories import add_visits
from core import geodata
from links.services.create import link_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/noise", alias="noise").link


@pytest.fixture
def page(client, user, link):
    """GET the link's stats page with these query parameters: (response, html)."""
    client.force_login(user)

    def get(**params):
        response = client.get(reverse("link_stats", args=[link.code]), params)
        assert response.status_code == 200
        return response, response.content.decode()

    return get


@pytest.fixture
def asn_installed(settings, tmp_path):
    """A network (ASN) file as `make geodata` builds one, naming 8.0.0.0/8 only (the analytics
    tests otherwise run without one: conftest's _geoip_2018)."""
    path = tmp_path / "asn.ranges"
    geodata.build_asn_ranges([(8 << 24, (9 << 24) - 1, "Example AS")], [], path)
    settings.GEOIP_ASN_DB = str(path)
    return path


def _section(html: str, heading_id: str) -> str:
    start = html.index(f'aria-labelledby="{heading_id}"')
    return html[start : html.index("</section>", start)]


# --- Latest visits: people unless asked -------------------------------------------------------


def test_latest_visits_are_peoples_by_default_with_a_way_to_see_bots(page, link):
    add_visits(link, 2)
    add_visits(link, 3, bot=True)
    response, html = page(range="30d")
    latest = response.context["latest_visits"]
    assert len(latest) == 2 and not any(visit.is_bot for visit in latest)
    section = _section(html, "latest-heading")
    assert "Latest visits by people" in section
    assert "Googlebot" not in section
    toggle = re.search(r'<a href="([^"]+)">Show bots and link previews too</a>', section)
    assert toggle, section
    # The toggle keeps the period.
    assert toggle.group(1) == "?range=30d&amp;bots=1#latest-heading"


def test_bots_on_request_are_named_with_their_kind_as_a_badge(page, link):
    add_visits(link)
    add_visits(link, bot=True)
    # A bot stored before bots were named (no name, no kind): never "Unnamed bot bot".
    add_visits(link, is_bot=True, device_type="Bot")
    response, html = page(range="30d", bots="1")
    assert len(response.context["latest_visits"]) == 3
    section = _section(html, "latest-heading")
    assert 'Googlebot <span class="badge badge-expired">Search engine</span>' in section
    assert "Unnamed bot</td>" in section
    assert not re.search(r"\bbot bot\b", section, re.IGNORECASE)
    back = re.search(r'<a href="([^"]+)">Show people only</a>', section)
    assert back and back.group(1) == "?range=30d#latest-heading"


def test_a_link_only_bots_fetched_says_so_and_offers_them(page, link):
    add_visits(link, bot=True)
    response, html = page()
    section = _section(html, "latest-heading")
    assert response.context["latest_visits"] == []
    assert "No visits by people yet." in section
    assert "Show bots and link previews too" in section


def test_a_link_without_visits_offers_no_bot_toggle(page):
    _, html = page()
    section = _section(html, "latest-heading")
    assert "No visits yet." in section
    assert "Show bots" not in section


def test_a_visits_place_names_each_label_once():
    assert VisitRecord(city="Paris", country="France").place == "Paris, France"
    assert VisitRecord(city="Loopback", country="Loopback").place == "Loopback"
    assert VisitRecord(country="France").place == "France"
    assert VisitRecord().place == "Unknown"


# --- Breakdown cards ----------------------------------------------------------------------------


def test_a_new_link_shows_one_no_data_message_instead_of_ten_cards(page):
    _, html = page()
    assert "No data in this period" not in html
    assert html.count("No data yet for this period") == 1
    assert "data-breakdown=" not in html


def test_empty_breakdowns_are_named_in_one_line(page, link):
    add_visits(link, 2)  # people only: the two bot tables have nothing
    response, html = page()
    shown = [table["key"] for table in response.context["cards"]["tables"]]
    assert "bots" not in shown and "bot_kinds" not in shown
    assert "countries" in shown and "browsers" in shown
    line = re.search(r'data-testid="empty-breakdowns">([^<]+)<', html).group(1)
    assert line == "No data yet for this period: Bots &amp; link previews, Bots by kind."
    assert 'data-testid="no-breakdowns"' not in html


def test_a_table_that_knows_nothing_is_a_note_not_a_card(page, link, asn_installed):
    # The place data named the country but not the region or the city.
    add_visits(link, 3, province="", city="", isp="Deutsche Telekom AG")
    response, html = page()
    shown = [table["key"] for table in response.context["cards"]["tables"]]
    assert "provinces" not in shown and "cities" not in shown
    assert "countries" in shown and "isps" in shown
    line = re.search(r'data-testid="unknown-breakdowns">([^<]+)<', html).group(1)
    assert line == "Not known for any click in this period: Provinces / regions, Cities."
    assert 'data-testid="networks-note"' not in html  # networks were named


def test_networks_unknown_with_the_data_installed_say_so_once(page, link, asn_installed):
    add_visits(link, 2, isp="")
    response, html = page()
    assert "isps" not in [table["key"] for table in response.context["cards"]["tables"]]
    assert ">Unknown<" not in html.replace("\n", "")  # no "Unknown 100%" card
    note = re.search(r'data-testid="networks-note">(.+?)</p>', html).group(1)
    assert "names none of this period" in note


def test_networks_without_network_data_say_how_to_install_it(page, link):
    # The analytics tests' set-up: no network data installed (conftest's _geoip_2018).
    add_visits(link, 2, isp="")
    response, html = page()
    assert "isps" not in [table["key"] for table in response.context["cards"]["tables"]]
    note = re.search(r'data-testid="networks-note">(.+?)</p>', html).group(1)
    assert "<code>make geodata</code>" in note and "GEOIP_ASN_DB" in note


def test_changing_the_period_keeps_bots_and_every_row_on_show(page, link):
    """Showing bots or every row, then picking another period (a tab, or a custom range) keeps
    them: the period changes, not what the page lists."""
    add_visits(link, 1, bot=True)
    _, html = page(range="7d", bots="1", rows="all")
    tabs = re.findall(r'<a href="(\?range=[^"]+)"', html)
    assert "?range=30d&amp;rows=all&amp;bots=1" in tabs
    custom = html[html.index('name="range" value="custom"') :]
    custom = custom[: custom.index("</form>")]
    assert '<input type="hidden" name="bots" value="1">' in custom
    assert '<input type="hidden" name="rows" value="all">' in custom
    _, plain = page(range="7d")
    assert "?range=30d&amp;" not in plain
