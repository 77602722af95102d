"""Each person sees and enters times in their own zone, and every page says which zone."""

import datetime as dt

import pytest
from django.urls import reverse

from accounts import services
from links.models import UrlLink
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db

CREATED = dt.datetime(2030, 1, 15, 9, 30, tzinfo=dt.UTC)


@pytest.fixture
def paris_user(client, user):
    services.profile_set_time_zone(user=user, time_zone="Europe/Paris")
    client.force_login(user)
    return user


def test_my_links_shows_times_in_the_chosen_zone_and_names_it(client, paris_user):
    link = UrlLinkFactory(owner=paris_user)
    UrlLink.objects.filter(pk=link.pk).update(created_at=CREATED)

    page = client.get(reverse("dashboard")).content.decode()

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


def test_without_a_choice_the_browsers_zone_is_used(client, user):
    client.force_login(user)
    link = UrlLinkFactory(owner=user)
    UrlLink.objects.filter(pk=link.pk).update(created_at=CREATED)
    client.cookies["tz"] = "America/New_York"

    page = client.get(reverse("dashboard")).content.decode()

    assert "2030-01-15 04:30" in page
    assert "Times in America/New_York" in page


def test_a_made_up_browser_zone_falls_back_to_the_servers(client, user, settings):
    client.force_login(user)
    client.cookies["tz"] = "Mars/Olympus_Mons"
    page = client.get(reverse("dashboard")).content.decode()
    assert f"Times in {settings.TIME_ZONE}" in page


def test_the_preferences_page_saves_a_zone_and_refuses_an_unknown_one(client, user):
    client.force_login(user)
    refused = client.post(reverse("preferences"), {"time_zone": "Mars/Olympus_Mons"})
    assert refused.status_code == 200
    assert "errorlist" in refused.content.decode()

    client.post(reverse("preferences"), {"time_zone": "Asia/Tokyo"})
    page = client.get(reverse("preferences")).content.decode()
    assert 'data-testid="active-time-zone">Asia/Tokyo<' in page


def test_the_api_answers_in_utc_whatever_the_zone(client, paris_user):
    UrlLinkFactory(owner=paris_user)
    answer = client.get("/api/v1/links/").json()
    assert answer["results"][0]["created_at"].endswith("Z")
