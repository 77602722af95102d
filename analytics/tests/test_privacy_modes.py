"""Privacy modes (ANALYTICS_PRIVACY, a workspace's own choice) as the stored visits show them:
what is kept of the address, the visitor id keyed per window and its secret deleted after, and
Sec-GPC / DNT clicks counted without their details (docs/privacy.md)."""

import datetime as dt
import hashlib
import hmac
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from analytics import services
from analytics.messages import WIRE_KEYS
from analytics.models import VisitorKey, VisitRecord
from analytics.services import privacy
from analytics.tests.visits import CHROME_MAC, GOOGLEBOT, SAFARI_IPHONE, visit_message

# In the 2018 GeoLite2 City file the tests use (analytics/tests/conftest.py): Boxford, GB.
PLACED_IP = "81.2.69.160"
PLACED_V6 = "2001:db8:1234:5678:9abc:def0:1234:5678"


@pytest.fixture(autouse=True)
def _no_remembered_secrets():
    """Each test's windows start with no secret (the table is rolled back, this process's copy
    is not)."""
    privacy._secrets.clear()
    yield
    privacy._secrets.clear()


def _message(link, *, do_not_track="", **fields) -> str:
    message = json.loads(visit_message(link, **fields))
    if do_not_track:
        message[WIRE_KEYS["do_not_track"]] = do_not_track
    return json.dumps(message)


def _stored(link) -> list[VisitRecord]:
    return list(VisitRecord.objects.filter(link=link).order_by("visit_time", "id"))


@pytest.mark.django_db
def test_full_mode_keeps_the_address_and_the_plain_visitor_hash(make_link):
    link = make_link()
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP)])
    (visit,) = _stored(link)
    assert visit.client_ip == PLACED_IP
    assert (
        visit.client_id
        == hashlib.sha1(f"{PLACED_IP}&{CHROME_MAC}".encode(), usedforsecurity=False).hexdigest()
    )


@pytest.mark.django_db
def test_truncated_mode_keeps_the_network_and_the_place_of_the_full_address(settings, make_link):
    link = make_link()
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP)])
    (full,) = _stored(link)
    settings.ANALYTICS_PRIVACY = "truncated"
    other = make_link("https://example.com/other")
    services.store_visits(
        messages=[visit_message(other, ip=PLACED_IP), visit_message(other, ip=PLACED_V6)]
    )
    truncated, v6 = _stored(other)
    assert truncated.client_ip == "81.2.69.0"
    assert v6.client_ip == "2001:db8:1234::"
    assert (truncated.country, truncated.city, truncated.isp) == (full.country, full.city, full.isp)
    assert truncated.country  # looked up before the address was cut
    assert truncated.client_id != full.client_id


@pytest.mark.django_db
def test_none_mode_stores_no_address_and_a_windowed_visitor_id(settings, make_link):
    settings.ANALYTICS_PRIVACY = "none"
    link = make_link()
    now = dt.datetime.now(dt.UTC)
    services.store_visits(
        messages=[
            visit_message(link, ip=PLACED_IP, at=now),
            visit_message(link, ip=PLACED_IP, at=now),
            visit_message(link, ip="115.236.0.1", ua=SAFARI_IPHONE, at=now),
        ]
    )
    first, again, other = _stored(link)
    assert {v.client_ip for v in (first, again, other)} == {""}
    assert first.country  # places are kept, the address is not
    assert first.client_id == again.client_id != other.client_id
    plain = f"{PLACED_IP}&{CHROME_MAC}".encode()
    assert first.client_id not in {
        hashlib.sha1(plain, usedforsecurity=False).hexdigest(),
        hashlib.sha256(plain).hexdigest()[:40],
        hmac.new(settings.SECRET_KEY.encode(), plain, hashlib.sha1).hexdigest(),
    }
    services.aggregate_hourly()
    client = APIClient()
    client.force_authenticate(link.owner)
    stats = client.get(f"/api/v1/links/{link.code}/stats/").json()
    assert (stats["total_clicks"], stats["unique_visitors"]) == (3, 2)
    assert stats["uniques_exact_within"] == "day"


@pytest.mark.django_db
def test_each_window_has_its_secret_deleted_once_the_window_is_over():
    day = dt.timedelta(days=1)
    start = dt.datetime(2026, 3, 2, tzinfo=dt.UTC)  # a window's start (24 h from the epoch)
    assert privacy.window_start(start + dt.timedelta(hours=23)) == start
    monday = privacy.visitor_secret(
        start + dt.timedelta(hours=1), now=start + dt.timedelta(hours=2)
    )
    # Late visits of a window are keyed in it while its grace lasts, then in the current one.
    just_after = start + day + privacy.KEY_GRACE / 2
    assert privacy.visitor_secret(start + dt.timedelta(hours=3), now=just_after) == monday
    tuesday = privacy.visitor_secret(just_after, now=just_after)
    assert tuesday != monday
    assert privacy.visitor_keys_sweep(now=just_after) == 0
    later = start + day + privacy.KEY_GRACE
    assert privacy.visitor_keys_sweep(now=later) == 1
    assert list(VisitorKey.objects.values_list("secret", flat=True)) == [tuesday]
    assert privacy.visitor_secret(start + dt.timedelta(hours=3), now=later) == tuesday
    assert VisitorKey.objects.count() == 1  # monday's secret is never made again


@pytest.mark.django_db
def test_the_same_visitor_gets_another_id_in_the_next_window(settings, make_link):
    settings.ANALYTICS_PRIVACY = "none"
    link = make_link()
    now = dt.datetime.now(dt.UTC)
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP, at=now)])
    (today,) = _stored(link)
    # The next window, as the flush would key it then: this window's secret deleted by then.
    VisitorKey.objects.all().delete()
    privacy._secrets.clear()
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP, at=now)])
    assert _stored(link)[1].client_id != today.client_id


@pytest.mark.django_db
def test_a_workspace_chooses_its_own_mode(settings, make_link, user):
    settings.ANALYTICS_PRIVACY = "full"
    link = make_link()
    workspace = link.workspace
    workspace.analytics_privacy = "none"
    workspace.save()
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP)])
    assert _stored(link)[0].client_ip == ""
    settings.ANALYTICS_PRIVACY = "none"
    workspace.analytics_privacy = "full"
    workspace.save()
    services.store_visits(messages=[visit_message(link, ip=PLACED_IP)])
    assert _stored(link)[1].client_ip == PLACED_IP


@pytest.mark.django_db
def test_switching_modes_never_changes_past_totals(settings, make_link):
    link = make_link()
    at = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
    services.store_visits(
        messages=[visit_message(link, ip=f"115.236.0.{n}", at=at) for n in range(1, 6)]
    )
    services.aggregate_hourly()
    client = APIClient()
    client.force_authenticate(link.owner)
    before = client.get(f"/api/v1/links/{link.code}/stats/").json()
    assert (before["total_clicks"], before["unique_visitors"]) == (5, 5)
    settings.ANALYTICS_PRIVACY = "none"
    services.rebuild_hourly(since=at - dt.timedelta(hours=1))
    after = client.get(f"/api/v1/links/{link.code}/stats/").json()
    assert (after["total_clicks"], after["unique_visitors"]) == (5, 5)
    assert after["series"] == before["series"]


@pytest.mark.django_db
def test_a_gpc_click_is_counted_without_its_details(make_link, click, settings):
    link = make_link()
    click(link, ip=PLACED_IP, referrer="https://news.example/", HTTP_SEC_GPC="1")
    click(link, ip="115.236.0.1", ua=GOOGLEBOT, HTTP_SEC_GPC="1")
    call_command("drain_visits", verbosity=0)
    person, bot = sorted(_stored(link), key=lambda v: v.is_bot)
    for visit in (person, bot):
        assert visit.client_ip == visit.user_agent == visit.referrer == ""
        assert visit.country == visit.city == visit.isp == visit.browser_type == ""
        assert visit.client_id == "private"
    assert (person.is_bot, bot.is_bot) == (False, True)  # bots stay apart from people


@pytest.mark.django_db
def test_dnt_is_honoured_only_when_configured(settings, make_link):
    link = make_link()
    services.store_visits(messages=[_message(link, ip=PLACED_IP, do_not_track="dnt")])
    assert _stored(link)[0].client_ip == PLACED_IP
    settings.ANALYTICS_HONOUR_DNT = True
    services.store_visits(messages=[_message(link, ip=PLACED_IP, do_not_track="dnt")])
    assert _stored(link)[1].client_ip == ""
    assert _stored(link)[1].client_id == "private"


@pytest.mark.django_db
def test_the_stats_page_says_over_what_span_unique_visitors_are_exact(settings, make_link, client):
    link = make_link()
    client.force_login(link.owner)
    page = client.get(f"/dashboard/links/{link.code}/")
    assert page.status_code == 200
    assert b"uniques-exact-within" not in page.content  # "full": exact over any span
    settings.ANALYTICS_PRIVACY = "truncated"
    page = client.get(f"/dashboard/links/{link.code}/")
    assert b"exact within each day" in page.content
