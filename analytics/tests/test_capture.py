"""The visit hand-off on the redirect: what is recorded, where it goes, and what never happens."""

import json
import logging
import time

import pytest
from django.core.management import call_command
from django.test import RequestFactory

from analytics import buffer, capture, enrich, services
from analytics.messages import decode_visit, decode_visits, encode_visit
from analytics.models import HourlyClick, VisitRecord
from analytics.tests.visits import CHROME_MAC, GOOGLEBOT
from core.client_ip import client_ip
from core.redis_conn import redis_client, reset_redis_state, uses_redis
from links.cache import LinkEntry
from links.selectors import link_click_totals

DEAD_REDIS = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1: connection refused
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": 1,
            "SOCKET_TIMEOUT": 1,
        },
    }
}


def _request(**meta):
    return RequestFactory().get("/abc", **meta)


def test_forwarded_for_is_ignored_without_trusted_proxies(settings):
    settings.NUM_PROXIES = 0
    request = _request(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert client_ip(request.META) == "198.51.100.7"


def test_client_ip_is_the_entry_the_trusted_proxies_wrote(settings):
    # The client wrote "6.6.6.6" itself; the first proxy appended what it saw, 203.0.113.5.
    settings.NUM_PROXIES = 1
    request = _request(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5")
    assert client_ip(request.META) == "203.0.113.5"
    settings.NUM_PROXIES = 2
    request = _request(
        REMOTE_ADDR="10.0.0.3", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.5, 10.0.0.2"
    )
    assert client_ip(request.META) == "203.0.113.5"


def test_short_or_garbled_forwarded_for_falls_back_to_the_socket(settings):
    settings.NUM_PROXIES = 2
    assert client_ip(_request(REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="1.2.3.4").META) == (
        "10.0.0.9"
    )
    settings.NUM_PROXIES = 1
    assert client_ip(_request(REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="junk").META) == (
        "10.0.0.9"
    )


def test_a_message_decodes_to_the_models_fields_with_headers_truncated():
    entry = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)
    request = _request(
        REMOTE_ADDR="198.51.100.7",
        HTTP_USER_AGENT="U" * 2000,
        HTTP_REFERER="https://r/" + "x" * 5000,
    )
    before = time.time()
    message = encode_visit(request.META, entry, event_id=capture.new_event_id())
    assert len(message) < 2000, "compact: one-letter keys, no spaces"
    visit = decode_visit(message)
    assert (visit["link_id"], visit["code"], visit["client_ip"]) == (42, "Abc1234", "198.51.100.7")
    assert len(visit["event_id"]) == 32
    assert before - 1 <= visit["visit_time"].timestamp() <= time.time() + 1
    assert len(visit["user_agent"]) == VisitRecord._meta.get_field("user_agent").max_length
    assert len(visit["referrer"]) == VisitRecord._meta.get_field("referrer").max_length
    assert {field.attname for field in VisitRecord._meta.fields} >= set(visit), "one vocabulary"
    assert capture.new_event_id() != visit["event_id"]


@pytest.mark.parametrize(
    "agent",
    ['quote " backslash \\ tab \t newline \n', "Ünïcödé 浏览器 \u2028 \x00 \x7f", "é" * 600],
)
def test_a_message_is_the_json_of_its_fields_whatever_the_headers_hold(agent):
    entry = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)
    meta = _request(REMOTE_ADDR="2001:db8::1", HTTP_USER_AGENT=agent, HTTP_REFERER=agent).META
    message = encode_visit(meta, entry, event_id="0123abcd" * 4)
    fields = json.loads(message)
    assert message == json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    assert list(fields) == ["l", "e", "c", "t", "i", "u", "r"]
    assert fields["u"] == agent[:512] and fields["r"] == agent[:1024]
    assert "\n" not in message, "one line per message in the spool"


@pytest.mark.parametrize("kind", [bytes, str])
def test_a_batch_decodes_as_its_messages_do_one_by_one_even_with_bad_ones_among_them(kind):
    entry = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)
    meta = _request(REMOTE_ADDR="198.51.100.7", HTTP_USER_AGENT="UA").META
    good = [encode_visit(meta, entry, event_id=capture.new_event_id()) for _ in range(3)]
    # A stray comma inside a message would shift every later one in a joined array.
    batches = [good, [good[0], "1,2", good[1]], [good[0], "{not json", good[2]], [good[0], "[]"]]
    for batch in batches:
        messages = [kind(m, "utf-8") if kind is bytes else m for m in batch]
        decoded = decode_visits(messages)
        assert decoded == [decode_visit(m) for m in messages]
        assert [v is None for v in decoded] == [m not in good for m in batch]


def test_the_fused_message_is_the_same_message_once_the_link_id_is_prefixed():
    entry = LinkEntry("Abc1234", 42, "https://example.com/", 302, None, False)
    meta = _request(REMOTE_ADDR="198.51.100.7", HTTP_USER_AGENT="UA").META
    key, body = capture.fused_push(meta, "Abc1234", "e" * 32)
    assert key == buffer.VISITS_KEY
    fused = decode_visit('{"l":42,' + body)
    whole = decode_visit(encode_visit(meta, entry, event_id="e" * 32))
    assert {**fused, "visit_time": None} == {**whole, "visit_time": None}


@pytest.mark.django_db
def test_a_click_shows_up_in_the_stats(make_link, click):
    link = make_link()
    response = click(link, ip="115.236.0.1", ua=CHROME_MAC, referrer="https://www.google.com/q")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/landing"
    call_command("drain_visits", verbosity=0)  # the buffer: Redis, or the embedded spool
    visit = VisitRecord.objects.get(link=link)
    assert (visit.city, visit.browser_type, visit.device_type) == ("Hangzhou", "Chrome", "PC")
    assert link_click_totals(link_ids=[link.pk])[link.pk]["clicks"] == 1


@pytest.mark.django_db
def test_embedded_redirect_spools_the_visit_and_the_runner_counts_it(
    make_link, click, django_assert_num_queries
):
    """Without Redis the redirect writes no row (it appends to the spool); the runner's two
    jobs store the visits and count people and bots apart."""
    if uses_redis():
        pytest.skip("the embedded default (no Redis) spools visits; this run has Redis")
    link = make_link()
    click(link)  # caches the link
    with django_assert_num_queries(0):
        click(link, ua=GOOGLEBOT)
    assert not VisitRecord.objects.filter(link=link).exists()
    assert services.flush_pending() == 2
    assert services.aggregate_hourly() == 1
    row = HourlyClick.objects.get(link=link)
    assert (row.clicks, row.unique_visitors, row.bot_clicks) == (1, 1, 1)


@pytest.mark.django_db
def test_with_redis_the_redirect_only_pushes_a_record(
    requires_redis, make_link, click, django_assert_num_queries
):
    link = make_link()
    click(link)  # loads the link into the cache
    client = redis_client()
    client.delete(buffer.VISITS_KEY)
    parsed_before = enrich.parse_user_agent.cache_info()
    with django_assert_num_queries(0):
        assert click(link, ua="Mozilla/5.0 never parsed on the redirect").status_code == 302
    assert enrich.parse_user_agent.cache_info() == parsed_before
    assert client.llen(buffer.VISITS_KEY) == 1
    assert json.loads(client.lindex(buffer.VISITS_KEY, 0))["l"] == link.pk
    assert not VisitRecord.objects.filter(link=link).exists()


@pytest.mark.django_db
def test_redis_down_redirect_succeeds_and_visit_is_stored(
    settings, make_link, click, caplog, monkeypatch
):
    link = make_link()
    settings.CACHES = DEAD_REDIS
    reset_redis_state()
    with caplog.at_level(logging.WARNING, logger="shorturl.redis"):
        for n in range(3):
            response = click(link, ip=f"198.51.100.{n + 1}")
            assert response.status_code == 302
            assert response["Location"] == "https://example.com/landing"
    assert VisitRecord.objects.filter(link=link).count() == 3
    assert HourlyClick.objects.get(link=link).clicks == 3
    warnings = [r for r in caplog.records if r.name == "shorturl.redis"]
    assert len(warnings) == 1, "one warning a minute, not one per request"
    assert "Redis is unreachable" in warnings[0].getMessage()


@pytest.mark.django_db
def test_redis_is_tried_again_after_a_short_pause(
    requires_redis, settings, make_link, click, monkeypatch
):
    link = make_link()
    reset_redis_state()
    live = settings.CACHES
    settings.CACHES = DEAD_REDIS
    click(link)
    settings.CACHES = live
    click(link)  # Redis is back, but the pause has not run out: stored directly
    assert VisitRecord.objects.filter(link=link).count() == 2
    reset_redis_state()  # the pause is over
    click(link)
    assert VisitRecord.objects.filter(link=link).count() == 2
    assert redis_client().llen(buffer.VISITS_KEY) == 1
