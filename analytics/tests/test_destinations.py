"""Where each visit went (issue #15): a rule's or variant's URL travels in the visit message, is
stored on the visit, rolled up as the "destinations" breakdown, and shown by the stats API and
page, with the variants side by side."""

import json
from dataclasses import fields

import pytest
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from analytics import selectors
from analytics.messages import decode_visit, encode_visit
from analytics.models import VisitRecord
from analytics.tests.visits import SAFARI_IPHONE
from links.cache import LinkEntry
from links.tests.helpers import client_for

ENTRY = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)
CHINA, USA = "223.5.5.5", "8.8.8.8"
WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36"


def _meta(**meta) -> dict:
    return RequestFactory().get("/Abc1234", **meta).META


def _later():
    return timezone.now() + timezone.timedelta(hours=2)


# --- The message -------------------------------------------------------------------------------


def test_a_rule_s_visit_says_where_it_went_and_is_still_the_json_of_its_fields():
    entry = LinkEntry(**{**_fields(ENTRY), "destination": 'https://cn.example/"é"'})
    message = encode_visit(_meta(HTTP_USER_AGENT='quote " é'), entry, event_id="0123abcd" * 4)
    fields = json.loads(message)
    assert message == json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    assert list(fields)[-1] == "d"
    assert decode_visit(message)["destination"] == 'https://cn.example/"é"'


def test_the_long_url_s_visit_has_no_destination_and_older_messages_read_as_the_long_url():
    message = encode_visit(_meta(), ENTRY, event_id="0123abcd" * 4)
    assert '"d"' not in message
    assert decode_visit(message)["destination"] == ""


def _fields(entry: LinkEntry) -> dict:
    return {item.name: getattr(entry, item.name) for item in fields(entry) if item.init}


# --- Stored, rolled up, shown -----------------------------------------------------------------


@pytest.fixture
def targeted(make_link):
    """Three people from China (a rule), two elsewhere (70/30 variants), one bot from China."""
    link = make_link(
        "https://example.com/default",
        rules=[{"country": "CN", "url": "https://cn.example/"}],
        variants=[
            {"url": "https://a.example/", "weight": 70},
            {"url": "https://b.example/", "weight": 30},
        ],
    )
    client = Client()
    for n in range(3):
        client.get(f"/{link.code}", REMOTE_ADDR=CHINA, HTTP_USER_AGENT=f"{SAFARI_IPHONE} {n}")
    for n in range(2):
        client.get(f"/{link.code}", REMOTE_ADDR=USA, HTTP_USER_AGENT=f"{WINDOWS} {n}")
    client.get(f"/{link.code}", REMOTE_ADDR=USA, HTTP_USER_AGENT=f"{WINDOWS} 0")  # a repeat
    client.get(f"/{link.code}", REMOTE_ADDR=CHINA, HTTP_USER_AGENT="curl/8.5.0")
    call_command("drain_visits", verbosity=0)
    return link


@pytest.mark.django_db
def test_each_visit_records_its_destination_and_people_are_broken_down_by_it(targeted):
    stored = list(
        VisitRecord.objects.filter(link=targeted, is_bot=False).values_list(
            "destination", flat=True
        )
    )
    assert stored.count("https://cn.example/") == 3
    assert {value for value in stored if value != "https://cn.example/"} <= {
        "https://a.example/",
        "https://b.example/",
    }
    stats = selectors.link_stats(link=targeted, start=targeted.created_at, end=_later())
    by_url = {entry["url"]: entry["clicks"] for entry in stats["destinations"]}
    assert by_url["https://cn.example/"] == 3
    assert sum(by_url.values()) == stats["total_clicks"] == 6  # bots are not in it


@pytest.mark.django_db
def test_variants_side_by_side_count_clicks_and_people_apart(targeted):
    results = selectors.variant_results(link=targeted, start=targeted.created_at, end=_later())
    assert [(r["label"], r["url"], r["weight"]) for r in results] == [
        ("Variant A", "https://a.example/", 70),
        ("Variant B", "https://b.example/", 30),
    ]
    assert sum(r["clicks"] for r in results) == 3  # the rule's visitors are not in the split
    assert sum(r["people"] for r in results) == 2  # the repeat visitor counted once
    assert sum(r["share"] for r in results) == pytest.approx(100, abs=0.2)


@pytest.mark.django_db
def test_the_stats_api_and_page_show_destinations_and_variants(targeted, user):
    answer = client_for(user).get(f"/api/v1/links/{targeted.code}/stats/")
    assert answer.status_code == 200
    destinations = answer.json()["destinations"]
    assert {
        "name": "https://cn.example/",
        "url": "https://cn.example/",
        "clicks": 3,
        "share": 50.0,
    } in destinations

    client = Client()
    client.force_login(user)
    html = client.get(reverse("link_stats", args=[targeted.code])).content.decode()
    table = html[html.index('data-breakdown="destinations"') :]
    assert "https://cn.example/" in table[: table.index("</table>")]
    section = html[html.index('data-testid="variants"') :]
    section = section[: section.index("</section>")]
    assert "Variant A" in section and "Variant B" in section
    assert "https://a.example/" in section and "weight 70%" in section


@pytest.mark.django_db
def test_a_link_without_rules_shows_no_destinations(make_link, user):
    link = make_link("https://example.com/plain")
    Client().get(f"/{link.code}", REMOTE_ADDR=USA, HTTP_USER_AGENT=WINDOWS)
    call_command("drain_visits", verbosity=0)
    stats = selectors.link_stats(link=link, start=link.created_at, end=_later())
    assert stats["destinations"] == [{"name": "Long URL", "url": "", "clicks": 1, "share": 100.0}]
    client = Client()
    client.force_login(user)
    html = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert 'data-breakdown="destinations"' not in html
    assert 'data-testid="variants"' not in html
