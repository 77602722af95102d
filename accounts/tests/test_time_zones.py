"""Each person sees and enters times in their own zone, and every page says which zone."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils.html import strip_tags

from accounts import services
from accounts.middleware import database_converts_time_zones
from links.models import UrlLink
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db

CREATED = dt.datetime(2030, 1, 15, 9, 30, tzinfo=dt.UTC)


@pytest.fixture
def zones_convert():
    if not database_converts_time_zones():
        pytest.skip("MySQL/MariaDB without time zone tables: pages stay in TIME_ZONE")


@pytest.fixture
def paris_user(client, user, zones_convert):
    services.profile_set_time_zone(user=user, time_zone="Europe/Paris")
    client.force_login(user)
    return user


def test_my_links_shows_times_in_the_chosen_zone_and_names_it(client, paris_user):
    link = UrlLinkFactory(owner=paris_user)
    UrlLink.objects.filter(pk=link.pk).update(created_at=CREATED)

    # The text a person reads (date and time are two spans, so a narrow column wraps between).
    page = strip_tags(client.get(reverse("dashboard")).content.decode())

    assert "2030-01-15 10:30" in page  # 09:30 UTC is 10:30 in Paris in January
    assert "2030-01-15 09:30" not in page
    assert "Times in Europe/Paris" in page


def test_the_expiry_typed_in_is_read_in_the_chosen_zone(client, paris_user):
    client.post(
        reverse("home"),
        {
            "long_url": "https://example.com/summer",
            "redirect_type": "302",
            "expires_at": "2030-07-01T12:00",
        },
    )
    link = UrlLink.objects.get(owner=paris_user)
    assert link.expires_at == dt.datetime(2030, 7, 1, 10, 0, tzinfo=dt.UTC)  # CEST is UTC+2
    assert "Times are in Europe/Paris" in client.get(reverse("home")).content.decode()


def test_without_a_choice_the_browsers_zone_is_used(client, user, zones_convert):
    client.force_login(user)
    link = UrlLinkFactory(owner=user)
    UrlLink.objects.filter(pk=link.pk).update(created_at=CREATED)
    client.cookies["tz"] = "America/New_York"

    page = strip_tags(client.get(reverse("dashboard")).content.decode())

    assert "2030-01-15 04:30" in page
    assert "Times in America/New_York" in page


def test_a_made_up_browser_zone_falls_back_to_the_servers(client, user, settings):
    client.force_login(user)
    client.cookies["tz"] = "Mars/Olympus_Mons"
    page = client.get(reverse("dashboard")).content.decode()
    assert f"Times in {settings.TIME_ZONE}" in page


def test_the_preferences_page_saves_a_zone_and_refuses_an_unknown_one(client, user, zones_convert):
    client.force_login(user)
    refused = client.post(reverse("preferences"), {"time_zone": "Mars/Olympus_Mons"})
    assert refused.status_code == 200
    assert "errorlist" in refused.content.decode()

    client.post(reverse("preferences"), {"time_zone": "Asia/Tokyo"})
    page = client.get(reverse("preferences")).content.decode()
    assert 'data-testid="active-time-zone">Asia/Tokyo<' in page


def test_the_api_answers_in_utc_whatever_the_zone(client, user):
    services.profile_set_time_zone(user=user, time_zone="Europe/Paris")
    client.force_login(user)
    paris_user = user
    UrlLinkFactory(owner=paris_user)
    answer = client.get("/api/v1/links/").json()
    assert answer["results"][0]["created_at"].endswith("Z")


@pytest.mark.parametrize(
    "changelist",
    [
        "admin:links_urllink_changelist",
        "admin:analytics_visitrecord_changelist",
        "admin:analytics_hourlyclick_changelist",
    ],
)
def test_admin_lists_with_date_drill_down_open_in_a_staff_members_zone(
    admin_client, staff_user, user, changelist
):
    from analytics.tests.factories import add_visits

    add_visits(UrlLinkFactory(owner=user), 2)
    services.profile_set_time_zone(user=staff_user, time_zone="Europe/Paris")
    response = admin_client.get(reverse(changelist))
    assert response.status_code == 200


def test_without_time_zone_tables_the_pages_say_times_stay_in_the_servers_zone(
    client, user, settings
):
    if database_converts_time_zones():
        pytest.skip("this database converts time zones (SQLite, or MySQL with its tables)")
    services.profile_set_time_zone(user=user, time_zone="Europe/Paris")
    client.force_login(user)
    page = client.get(reverse("preferences")).content.decode()
    assert 'data-testid="zones-unavailable"' in page
    assert f"Times in {settings.TIME_ZONE}" in page


def test_the_zone_costs_no_query_per_page_once_known(client, user, zones_convert):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    services.profile_set_time_zone(user=user, time_zone="Europe/Paris")
    client.force_login(user)
    client.get(reverse("dashboard"))
    with CaptureQueriesContext(connection) as second_page:
        page = client.get(reverse("dashboard")).content.decode()
    assert "Times in Europe/Paris" in page
    assert not [q for q in second_page.captured_queries if "accounts_profile" in q["sql"]]


def test_the_visits_csv_is_in_the_chosen_zone_with_offsets_and_names_it(client, paris_user):
    """The rows are written while the response streams, after the middleware has switched the
    zone off again: the export must still be in the person's zone."""
    from analytics.tests.factories import add_visits
    from analytics.tests.test_views import read_csv

    link = UrlLinkFactory(owner=paris_user)
    add_visits(link, when=dt.datetime(2030, 7, 1, 10, 0, 5, tzinfo=dt.UTC))
    add_visits(link, when=dt.datetime(2030, 1, 15, 9, 30, tzinfo=dt.UTC))

    rows = read_csv(client.get(reverse("link_visits_csv", args=[link.code])))

    header, *data = rows
    assert header[:2] == ["time (Europe/Paris)", "time (UTC)"]
    assert [row[:2] for row in data] == [
        ["2030-01-15T10:30:00+01:00", "2030-01-15T09:30:00+00:00"],  # CET
        ["2030-07-01T12:00:05+02:00", "2030-07-01T10:00:05+00:00"],  # CEST
    ]
