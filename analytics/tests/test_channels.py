"""QR scans counted apart: a visit through the QR code's URL (`/<code>?qr=1`) is stored with the
QR channel, the marker never reaches the destination, and the stats break people's clicks down
into "Short link" and "QR code"."""

import csv
import datetime as dt
import io
import json
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from analytics import capture, selectors
from analytics.messages import decode_visit, encode_visit
from analytics.models import HourlyClick, VisitRecord, utc_hour
from analytics.tests.factories import VisitRecordFactory
from analytics.tests.visits import GOOGLEBOT, SAFARI_IPHONE, visit_message
from core import channels
from links.cache import LinkEntry
from links.tests.helpers import call_wsgi, client_for

ENTRY = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)


@pytest.mark.parametrize(
    ("query_string", "scan", "passed_on"),
    [
        ("qr=1", True, ""),
        ("utm_source=poster&qr=1", True, "utm_source=poster"),
        ("qr=1&x=2&qr=1", True, "x=2"),
        ("", False, ""),
        ("x=1", False, "x=1"),
        ("qr=10", False, "qr=10"),  # the visitor's own parameters, left alone
        ("xqr=1", False, "xqr=1"),
        ("qr=0&aqr=1b", False, "qr=0&aqr=1b"),
    ],
)
def test_the_qr_marker_is_one_exact_parameter(query_string, scan, passed_on):
    assert channels.is_qr_scan(query_string) is scan
    assert channels.without_qr_marker(query_string) == passed_on


def test_the_qr_url_adds_the_marker_to_the_short_url():
    assert channels.qr_url("https://s.example.com/Abc1234") == "https://s.example.com/Abc1234?qr=1"


# --- The message -------------------------------------------------------------------------------


def _meta(query_string: str = "", **meta) -> dict:
    return RequestFactory().get("/Abc1234", QUERY_STRING=query_string, **meta).META


@pytest.mark.parametrize("query_string", ["qr=1", "utm_source=poster&qr=1"])
def test_a_scan_s_message_says_qr_and_is_still_the_json_of_its_fields(query_string):
    message = encode_visit(
        _meta(query_string, HTTP_USER_AGENT='quote " é'), ENTRY, event_id="0123abcd" * 4
    )
    fields = json.loads(message)
    assert message == json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    assert list(fields) == ["l", "e", "c", "t", "i", "u", "r", "q"]
    assert fields["q"] == "qr"
    assert decode_visit(message)["channel"] == "qr"


@pytest.mark.parametrize("query_string", ["", "x=1", "qr=10"])
def test_a_click_s_message_has_no_channel_and_decodes_as_the_short_link(query_string):
    message = encode_visit(_meta(query_string), ENTRY, event_id="0123abcd" * 4)
    assert "q" not in json.loads(message)
    assert decode_visit(message)["channel"] == "link"


def test_the_fused_message_carries_the_channel_too():
    _, body = capture.fused_push(_meta("qr=1"), "Abc1234", "e" * 32)
    assert decode_visit('{"l":42,' + body)["channel"] == "qr"


def test_messages_spooled_before_channels_existed_are_clicks_on_the_short_link():
    # What an older redirect wrote: the seven fields, no "q".
    old = visit_message(SimpleNamespace(pk=42, code="Abc1234"))
    assert "q" not in json.loads(old)
    assert decode_visit(old)["channel"] == "link"


@pytest.mark.parametrize("value", ["nfc", 1, None, ["qr"], {"qr": 1}, ""])
def test_a_channel_the_code_does_not_know_is_the_short_link(value):
    message = json.loads(encode_visit(_meta(), ENTRY, event_id="e" * 32))
    message["q"] = value
    assert decode_visit(json.dumps(message))["channel"] == "link"


# --- The redirect -----------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "location"),
    [
        ("?qr=1", "https://example.com/sale?a=1"),
        ("?utm_source=poster&qr=1", "https://example.com/sale?a=1&utm_source=poster"),
        ("?qr=10", "https://example.com/sale?a=1&qr=10"),
    ],
)
def test_the_destination_never_sees_the_marker(make_link, query, location):
    link = make_link("https://example.com/sale?a=1")
    client = Client()
    for _ in range(2):  # a cache miss, then a hit
        assert client.get(f"/{link.code}{query}")["Location"] == location


@pytest.mark.django_db(transaction=True)
def test_the_wsgi_fast_path_drops_the_marker_as_well(make_link):
    link = make_link("https://example.com/sale")
    call_wsgi(f"/{link.code}")  # cached
    _, headers, _ = call_wsgi(f"/{link.code}", query_string="qr=1")
    assert headers["Location"] == "https://example.com/sale"
    _, headers, _ = call_wsgi(f"/{link.code}", query_string="qr=1&utm_medium=print")
    assert headers["Location"] == "https://example.com/sale?utm_medium=print"


@pytest.mark.django_db
def test_a_link_that_keeps_the_query_to_itself_keeps_the_marker_out_too(make_link):
    link = make_link("https://example.com/sale", pass_query=False)
    assert Client().get(f"/{link.code}?qr=1")["Location"] == "https://example.com/sale"


@pytest.mark.django_db
def test_a_cached_qr_redirect_costs_no_query(make_link, django_assert_num_queries):
    link = make_link()
    client = Client()
    client.get(f"/{link.code}")  # cached
    with django_assert_num_queries(0):
        assert client.get(f"/{link.code}?qr=1").status_code == 302


# --- Stored and counted -----------------------------------------------------------------------


@pytest.fixture
def scanned_and_clicked(make_link):
    """Two people scan the QR code, one clicks the short link, a bot fetches the QR URL."""
    link = make_link()
    client = Client()
    for ip in ("203.0.113.1", "203.0.113.2"):
        client.get(f"/{link.code}?qr=1", REMOTE_ADDR=ip, HTTP_USER_AGENT=SAFARI_IPHONE)
    client.get(f"/{link.code}", REMOTE_ADDR="203.0.113.3", HTTP_USER_AGENT=SAFARI_IPHONE)
    client.get(f"/{link.code}?qr=1", REMOTE_ADDR="203.0.113.4", HTTP_USER_AGENT=GOOGLEBOT)
    call_command("drain_visits", verbosity=0)  # the buffer: Redis, or the embedded spool
    return link


EXPECTED = [
    {"name": "QR code", "clicks": 2, "share": 66.7, "channel": "qr"},
    {"name": "Short link", "clicks": 1, "share": 33.3, "channel": "link"},
]


@pytest.mark.django_db
def test_scans_are_stored_apart_and_broken_down_for_people_only(scanned_and_clicked):
    link = scanned_and_clicked
    stored = VisitRecord.objects.filter(link=link)
    assert sorted(stored.values_list("channel", "is_bot")) == [
        ("link", False),
        ("qr", False),
        ("qr", False),
        ("qr", True),
    ]
    stats = selectors.link_stats(link=link, start=link.created_at, end=_later())
    assert stats["channels"] == EXPECTED
    assert stats["total_clicks"] == 3 and stats["bot_clicks"] == 1


@pytest.mark.django_db
def test_the_stats_api_and_page_show_how_people_came(scanned_and_clicked, user):
    link = scanned_and_clicked
    answer = client_for(user).get(f"/api/v1/links/{link.code}/stats/")
    assert answer.status_code == 200
    assert answer.json()["channels"] == EXPECTED

    client = Client()
    client.force_login(user)
    html = client.get(reverse("link_stats", args=[link.code])).content.decode()
    table = html[html.index('data-breakdown="channels"') :]
    table = table[: table.index("</table>")]
    assert "How people came" in table
    assert table.index("QR code") < table.index("Short link")
    assert "66.7%" in table and "33.3%" in table


@pytest.mark.django_db
def test_the_csv_export_says_how_each_visit_came(scanned_and_clicked, user):
    client = Client()
    client.force_login(user)
    response = client.get(reverse("link_visits_csv", args=[scanned_and_clicked.code]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    header = rows[0]
    assert header[-1] == "channel"
    assert sorted(row[-1] for row in rows[1:]) == ["link", "qr", "qr", "qr"]


@pytest.mark.django_db
def test_hours_not_rolled_up_are_broken_down_from_their_visits(make_link):
    link = make_link()
    now = timezone.now()
    VisitRecordFactory.create_batch(2, link=link, visit_time=now, channel="qr")
    VisitRecordFactory.create(link=link, visit_time=now)
    # An hour whose HourlyClick row the roll-up did not write (by hand, say) has no breakdown
    # rows: its visits are grouped directly.
    HourlyClick.objects.create(link=link, hour=utc_hour(now), clicks=3)
    stats = selectors.link_stats(link=link, start=link.created_at, end=_later())
    assert [(entry["channel"], entry["clicks"]) for entry in stats["channels"]] == [
        ("qr", 2),
        ("link", 1),
    ]


def _later():
    return timezone.now() + dt.timedelta(hours=1)
