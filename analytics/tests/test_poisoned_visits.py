"""A poisoned visit (issue #12, row 11): a forged X-Forwarded-For or a forged message is stored
sanitised or set aside at once, never holding up the good visits of its batch; the dead list can
be replayed after a fix."""

import json
from ipaddress import ip_address

import pytest
from django.core.management import CommandError, call_command
from django.test import RequestFactory

from analytics import buffer, capture, messages, services
from analytics.messages import decode_visit, encode_visit
from analytics.models import VisitRecord
from analytics.tests.visits import visit_message
from core.client_ip import MAX_IP_LENGTH, client_ip
from core.redis_conn import redis_client
from links.cache import LinkEntry

CLIENT_IP_COLUMN = VisitRecord._meta.get_field("client_ip").max_length
LONG_ZONE = "fe80::1%" + "z" * 300  # an IPv6 link-local address with a made-up zone id


def _meta(**meta):
    return RequestFactory().get("/abc", **meta).META


@pytest.mark.parametrize(
    ("forwarded", "expected"),
    [
        (LONG_ZONE, "fe80::1"),  # the zone id means nothing here: dropped
        ("fe80::1%eth0", "fe80::1"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),  # canonical text
        ("0000:0000:0000:0000:0000:ffff:203.0.113.5", str(ip_address("::ffff:203.0.113.5"))),
        ("203.0.113.5%eth0", "198.51.100.7"),  # zone ids are IPv6's only
        ("1" * 5000, "198.51.100.7"),
        ("203.0.113.5 x", "198.51.100.7"),
        ("", "198.51.100.7"),
        # Proxies that write the client's port too: the client, not the proxy.
        ("203.0.113.5:51234", "203.0.113.5"),
        ("[2001:db8::1]:443", "2001:db8::1"),
        ("[2001:db8::1]", "2001:db8::1"),
        (
            "[0000:0000:0000:0000:0000:ffff:203.0.113.5]:65535",
            str(ip_address("::ffff:203.0.113.5")),
        ),
        ("[fe80::1%eth0]:443", "fe80::1"),
        ("203.0.113.5:1:2", "198.51.100.7"),
    ],
)
def test_client_ip_is_a_canonical_address_that_fits_its_column(settings, forwarded, expected):
    settings.NUM_PROXIES = 1
    found = client_ip(_meta(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR=forwarded))
    assert found == expected
    assert len(found) <= CLIENT_IP_COLUMN


def test_an_unusable_socket_address_is_not_passed_on(settings):
    settings.NUM_PROXIES = 0
    assert client_ip(_meta(REMOTE_ADDR="fe80::2%" + "q" * 100)) == "fe80::2"
    assert client_ip(_meta(REMOTE_ADDR="not an address")) == ""


def test_the_decoders_limits_are_the_columns():
    def column(name: str) -> int:
        return VisitRecord._meta.get_field(name).max_length

    assert column("event_id") == messages.MAX_EVENT_ID
    assert column("code") == messages.MAX_CODE
    assert column("client_ip") == MAX_IP_LENGTH


def _forged(link, **wire) -> str:
    """A message as someone with write access to the buffer (or a bug) could leave it."""
    message = json.loads(visit_message(link))
    message.update(wire)
    return json.dumps(message)


@pytest.mark.parametrize(
    "wire",
    [
        {"i": LONG_ZONE},
        {"i": "x" * 100},
        {"e": "e" * 100, "c": "c" * 100, "u": "u" * 5000, "r": "r" * 5000},
        {"u": "\ud800 lone surrogate", "r": "\udfff", "c": "ab\ud83d"},
    ],
)
@pytest.mark.django_db
def test_a_forged_message_decodes_to_values_every_column_takes(make_link, wire):
    link = make_link()
    visit = decode_visit(_forged(link, **wire))
    for name in ("event_id", "code", "client_ip", "user_agent", "referrer"):
        column = VisitRecord._meta.get_field(name)
        assert len(visit[name]) <= column.max_length, name
        visit[name].encode("utf-8")  # storable text: no lone surrogate
    assert services.store_visits(messages=[_forged(link, **wire)]) == 1


@pytest.mark.parametrize(
    "wire",
    [
        {"l": 2**70},  # no BIGINT holds it
        {"l": -1},
        {"t": 1e18},  # a time no DATETIME column takes
        {"t": -62135596800},  # year 1
        {"t": "nan"},
        {"e": None},  # no event id: it would collide with every other such message
        {"e": ""},
    ],
)
@pytest.mark.django_db
def test_a_message_no_column_can_take_is_malformed(make_link, wire):
    link = make_link()
    assert decode_visit(_forged(link, **wire)) is None
    assert services.store_visits(messages=[_forged(link, **wire), visit_message(link)]) == 1


@pytest.mark.django_db
def test_a_poisoned_forwarded_for_delays_no_good_visit(redis_buffer, make_link, settings):
    """300 good visits and one with a zone id of 300 characters in X-Forwarded-For: the first
    flush stores all 301 (the poisoned one without its zone id); nothing is retried or buried."""
    settings.NUM_PROXIES = 1
    link = make_link()
    entry = LinkEntry(link.code, link.pk, link.long_url, 302, None, False)

    def message(forwarded: str) -> str:
        meta = _meta(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)
        return encode_visit(meta, entry, event_id=capture.new_event_id())

    good = [message(f"198.51.{n // 250}.{n % 250 + 1}") for n in range(300)]
    redis_buffer(*good[:150], message(LONG_ZONE), *good[150:])
    assert services.flush_pending(max_seconds=0) == 301
    assert VisitRecord.objects.filter(client_ip="fe80::1").count() == 1
    assert redis_buffer.client.llen(buffer.DEAD_KEY) == 0
    assert redis_buffer.client.llen(buffer.lane(0).processing) == 0


@pytest.mark.django_db
def test_a_visit_the_database_refuses_is_buried_at_once_and_the_rest_stored(
    redis_buffer, make_link, monkeypatch, requires_mysql
):
    """Should a decoded visit still not fit a column (here: the decoder's referrer limit raised
    past the column's, as a bug would), the first flush stores every other visit and buries that
    one; it does not fail the batch MAX_ATTEMPTS times first."""
    link = make_link()
    monkeypatch.setattr("analytics.messages.MAX_REFERRER", 5000)
    too_long = visit_message(link, referrer="https://r.example/" + "x" * 3000)
    redis_buffer(*[visit_message(link) for _ in range(40)], too_long, visit_message(link))
    assert services.flush_pending(max_seconds=0) == 41
    assert redis_buffer.client.lrange(buffer.DEAD_KEY, 0, -1) == [too_long.encode()]
    assert redis_buffer.client.llen(buffer.lane(0).processing) == 0


@pytest.mark.django_db
def test_replay_dead_visits_stores_what_can_be_stored_now(redis_buffer, make_link, settings):
    """After a fix, the dead list's messages go back through the pipeline: those that decode are
    stored, those that still cannot be read stay in the dead list. --dry-run changes nothing."""
    link = make_link()
    # Left by an older release, whose decoder passed the zone id through to the INSERT.
    poisoned = _forged(link, i=LONG_ZONE)
    already_stored = visit_message(link)
    services.store_visits(messages=[already_stored])
    unreadable = "{not json"
    redis_buffer.client.rpush(buffer.DEAD_KEY, poisoned, unreadable, already_stored)

    out = _call("replay_dead_visits", "--dry-run")
    assert "3 message(s) in the dead list: 2 can be replayed, 1 still unreadable" in out
    assert redis_buffer.client.llen(buffer.DEAD_KEY) == 3
    assert VisitRecord.objects.count() == 1

    out = _call("replay_dead_visits")
    assert "Replayed 2 message(s): 2 stored (1 new), 0 not stored; 1 left in the dead list" in out
    assert redis_buffer.client.lrange(buffer.DEAD_KEY, 0, -1) == [unreadable.encode()]
    assert VisitRecord.objects.count() == 2
    assert VisitRecord.objects.filter(client_ip="fe80::1").count() == 1


def test_replay_dead_visits_needs_redis():
    if redis_client() is not None:
        pytest.skip("the embedded run's case")
    with pytest.raises(CommandError, match="no Redis"):
        _call("replay_dead_visits")


def _call(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()
