"""The rule conditions of issue #27 (city, query string, IP address or network, after and before a
moment): what may be stored and in which spelling (links.services.targeting), and where real
requests go (serving/gates.py, through Django's view and the WSGI fast path)."""

import time
import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from analytics.enrich import geo_lookup
from links.cache import LinkEntry
from links.services.change import link_update
from links.services.create import link_create
from links.services.policy import LongUrlRules
from links.services.targeting import CONDITIONS, describe_rule, query_text, validate_rules
from links.tests.helpers import call_wsgi, client_for
from serving import gates

LONG = "https://example.com/default"
ELSEWHERE = "https://example.com/elsewhere"
LONDON, SYDNEY = "81.2.69.160", "1.1.1.1"  # MaxMind's test address in London; Cloudflare's


@pytest.fixture
def url_rules(db):
    return LongUrlRules(request_host="testserver")


def stored(url_rules, **condition) -> dict:
    """The one rule `condition` gives, as it is stored (its url left out)."""
    [rule] = validate_rules([{**condition, "url": ELSEWHERE}], url_rules=url_rules)
    del rule["url"]
    return rule


def refusal(url_rules, **condition) -> str:
    with pytest.raises(ValidationError) as exc:
        validate_rules([{**condition, "url": ELSEWHERE}], url_rules=url_rules)
    [problem] = exc.value.message_dict["rules"]
    return problem


# --- What may be stored -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "spelling"),
    [
        ({"utm_source": "mail"}, {"utm_source": "mail"}),
        ({" ref ": None, "debug": ""}, {"ref": None, "debug": ""}),
        ("utm_source=mail", {"utm_source": "mail"}),
        ("?utm_source=mail&ref=*&debug", {"utm_source": "mail", "ref": None, "debug": ""}),
        ("debug=", {"debug": ""}),
        ("q=a+b%26c&star=%2A", {"q": "a b&c", "star": "*"}),
    ],
)
def test_a_query_condition_is_stored_as_name_to_value(url_rules, given, spelling):
    assert stored(url_rules, query=given) == {"query": spelling}


def test_the_forms_query_text_reads_back_as_it_was_stored(url_rules):
    query = {"utm_source": "mail list", "ref": None, "debug": "", "star": "*", "q": "a&b=c"}
    text = query_text(query)
    assert text == "utm_source=mail%20list&ref=*&debug&star=%2A&q=a%26b%3Dc"
    assert stored(url_rules, query=text) == {"query": query}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "rules[0].query: name at least one query parameter"),
        ("", "rules[0].query: name at least one query parameter"),
        ("a=1&a=2", "rules[0].query: “a” is named twice"),
        ({"a": 1}, "rules[0].query: give “a” a text value"),
        ({"": "x"}, "rules[0].query: a parameter's name is 1 to 100 characters"),
        ({f"p{n}": "x" for n in range(11)}, "rules[0].query: a rule checks at most 10"),
        (["utm_source"], "rules[0].query: give the parameters as an object"),
        ({"a": "x\ny"}, "rules[0].query: “a” holds a control character"),
    ],
)
def test_a_bad_query_condition_is_refused(url_rules, given, message):
    assert refusal(url_rules, query=given).startswith(message)


@pytest.mark.parametrize(
    ("given", "spelling"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("203.0.113.7/32", "203.0.113.7"),
        ("203.0.113.9/24", "203.0.113.0/24"),  # the network the address is in
        ("10.0.0.0/255.0.0.0", "10.0.0.0/8"),
        ("203.0.113.*", "203.0.113.0/24"),  # Shlink's wildcard
        ("10.1.*.*", "10.1.0.0/16"),
        ("*.*.*.*", "0.0.0.0/0"),
        ("2001:DB8::/32", "2001:db8::/32"),
        ("2001:db8:0::1", "2001:db8::1"),
        # IPv4-mapped: kept as IPv4, the form a mapped visitor is matched in (it never matched)
        ("::ffff:203.0.113.0/120", "203.0.113.0/24"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
    ],
)
def test_an_address_condition_is_stored_as_a_network(url_rules, given, spelling):
    assert stored(url_rules, ip=given) == {"ip": spelling}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("10.1.*.4", "rules[0].ip: “10.1.*.4” is not an address pattern this service can match"),
        ("10.*", "rules[0].ip: “10.*” is not an address pattern"),
        ("10.1.*.*/16", "rules[0].ip: “10.1.*.*/16” is not an address pattern"),
        ("300.1.2.3", "rules[0].ip: “300.1.2.3” is not an IP address or network"),
        ("intranet", "rules[0].ip: “intranet” is not an IP address or network"),
        (42, "rules[0].ip: give a text value"),
    ],
)
def test_a_bad_address_condition_is_refused(url_rules, given, message):
    assert refusal(url_rules, ip=given).startswith(message)


def test_a_city_is_stored_trimmed_and_refused_when_it_cannot_be_one(url_rules):
    assert stored(url_rules, city="  New   York ") == {"city": "New York"}
    assert refusal(url_rules, city="x" * 65).startswith(
        "rules[0].city: a city's name has at most 64 characters"
    )
    assert refusal(url_rules, city="").startswith("rules[0].city: give a text value")


@pytest.mark.parametrize(
    ("given", "spelling"),
    [
        ("2026-05-01T09:00:00+02:00", "2026-05-01T07:00:00Z"),
        ("2026-05-01T07:00:00Z", "2026-05-01T07:00:00Z"),
        ("2026-05-01T07:00:00.987Z", "2026-05-01T07:00:00Z"),
        ("2026-05-01 09:30", "2026-05-01T01:30:00Z"),  # no offset: the current time zone's
        ("2026-05-01", "2026-04-30T16:00:00Z"),  # a day: its midnight there
        (datetime(2026, 5, 1, 9, 0, tzinfo=UTC), "2026-05-01T09:00:00Z"),  # from a form
    ],
)
def test_moments_are_stored_in_utc_to_the_second(url_rules, given, spelling):
    with timezone.override(zoneinfo.ZoneInfo("Asia/Shanghai")):
        assert stored(url_rules, after=given) == {"after": spelling}
        assert stored(url_rules, before=given) == {"before": spelling}


@pytest.mark.parametrize("given", ["tomorrow", "2026-02-30", "2026-05-01T25:00", 20260501, ""])
def test_a_moment_that_is_none_is_refused(url_rules, given):
    assert refusal(url_rules, before=given).startswith("rules[0].before: ")


@pytest.mark.parametrize(
    "given",
    [
        "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC: overflowed to a 500
        "9999-12-31T23:00:00-05:00",  # after year 9999 once in UTC
        "0999-01-01T00:00:00Z",  # would be stored as "999-…", which no reader parses
    ],
)
def test_a_moment_outside_the_years_a_person_may_set_is_refused_naming_it(url_rules, given):
    with timezone.override(zoneinfo.ZoneInfo("Asia/Shanghai")):
        assert refusal(url_rules, after=given).startswith("rules[0].after: choose a date between")
        assert refusal(url_rules, before=given).startswith("rules[0].before: choose a date")


def test_a_span_that_ends_before_it_starts_is_refused_naming_before(url_rules):
    message = refusal(url_rules, after="2026-06-01T00:00:00Z", before="2026-05-01T00:00:00Z")
    assert message == (
        "rules[0].before: 2026-05-01T00:00:00Z is not later than after (2026-06-01T00:00:00Z): "
        "this rule could never match."
    )


def test_the_admin_s_line_names_every_condition_in_one_spelling(url_rules):
    [rule] = validate_rules(
        [{"query": "utm_source=mail&ref=*", "ip": "10.1.*.*", "city": "London", "url": ELSEWHERE}],
        url_rules=url_rules,
    )
    assert describe_rule(rule) == "city London, query utm_source=mail&ref=*, ip 10.1.0.0/16"


def test_the_redirect_matches_every_condition_that_may_be_stored():
    assert set(gates._MATCH_ORDER) == set(CONDITIONS)


# --- Where real requests go -------------------------------------------------------------------


def targeted(user, *rules: dict):
    return link_create(user=user, long_url=LONG, rules=list(rules)).link


def location(link, path_suffix: str = "", **meta) -> str:
    """Where a visitor goes, through Django's view (a cache miss, then a hit) and the WSGI fast
    path: all three must agree."""
    answers = set()
    client = Client()
    for _ in range(2):
        answer = client.get(f"/{link.code}{path_suffix}", **meta)
        assert answer.status_code == 302
        answers.add(answer["Location"])
    path, _, query = path_suffix.partition("?")
    status, headers, _ = call_wsgi(f"/{link.code}{path}", query_string=query, extra=meta)
    assert status.startswith("302")
    answers.add(headers["Location"])
    assert len(answers) == 1, answers
    return answers.pop()


@pytest.mark.django_db(transaction=True)
def test_query_conditions_send_visitors_by_the_parameters_they_came_with(user):
    link = targeted(
        user,
        {"query": {"utm_source": "mail", "utm_medium": "news letter"}, "url": "https://a.example/"},
        {"query": "ref=*", "url": "https://b.example/"},
        {"query": "debug", "url": "https://c.example/"},
        {"query": {"qr": "1"}, "url": "https://qr.example/"},
    )
    # Every parameter named must have its value (decoded, "+" a space); the query goes on.
    assert location(link, "?utm_source=mail&utm_medium=news+letter") == (
        "https://a.example/?utm_source=mail&utm_medium=news+letter"
    )
    assert location(link, "?utm_medium=news%20letter&x=1&utm_source=mail").startswith(
        "https://a.example/?"
    )
    assert location(link, "?utm_source=mail") == f"{LONG}?utm_source=mail"
    assert location(link, "?utm_source=MAIL&utm_medium=news+letter").startswith(LONG)
    # Any value, none included.
    assert location(link, "?ref=partner") == "https://b.example/?ref=partner"
    assert location(link, "?ref=") == "https://b.example/?ref="
    # No value: `?debug` or `?debug=`, not `?debug=1`.
    assert location(link, "?debug") == "https://c.example/?debug"
    assert location(link, "?debug=") == "https://c.example/?debug="
    assert location(link, "?debug=1") == f"{LONG}?debug=1"
    # The QR code's marker is a parameter like any other (and, as ever, not passed on).
    assert location(link, "?qr=1") == "https://qr.example/"
    assert location(link) == LONG


@pytest.mark.django_db(transaction=True)
def test_an_address_condition_matches_the_address_the_visit_is_stored_with(user, settings):
    link = targeted(
        user,
        {"ip": "10.1.*.*", "url": "https://office.example/"},
        {"ip": "2001:db8::/32", "url": "https://v6.example/"},
        {"ip": "203.0.113.7", "url": "https://one.example/"},
    )
    settings.NUM_PROXIES = 0
    assert location(link, REMOTE_ADDR="10.1.200.3") == "https://office.example/"
    assert location(link, REMOTE_ADDR="10.2.0.1") == LONG
    assert location(link, REMOTE_ADDR="::ffff:10.1.0.9") == "https://office.example/"
    assert location(link, REMOTE_ADDR="2001:db8:4::1") == "https://v6.example/"
    assert location(link, REMOTE_ADDR="203.0.113.7") == "https://one.example/"
    assert location(link, REMOTE_ADDR="203.0.113.8") == LONG
    # Without a proxy in front, X-Forwarded-For is the client's word, not taken.
    assert location(link, REMOTE_ADDR="8.8.8.8", HTTP_X_FORWARDED_FOR="10.1.0.1") == LONG

    # Behind one proxy: the address that proxy saw, never what the client wrote left of it.
    settings.NUM_PROXIES = 1
    behind = {"REMOTE_ADDR": "192.0.2.1"}
    assert location(link, HTTP_X_FORWARDED_FOR="10.1.0.1", **behind) == "https://office.example/"
    assert location(link, HTTP_X_FORWARDED_FOR="10.1.0.1, 8.8.8.8", **behind) == LONG


@pytest.mark.django_db(transaction=True)
def test_a_city_condition_matches_the_city_the_stats_show_in_any_case(user):
    london = geo_lookup(LONDON).city
    assert london, "the GeoIP data names the city of MaxMind's London test address"
    assert geo_lookup(SYDNEY).city != london
    link = targeted(
        user,
        {"country": "AU", "city": london, "url": "https://nowhere.example/"},  # both must match
        {
            "country": geo_lookup(LONDON).country_code,
            "city": london.upper(),
            "url": "https://uk.example/",
        },
    )
    assert location(link, REMOTE_ADDR=LONDON) == "https://uk.example/"
    assert location(link, REMOTE_ADDR=SYDNEY) == LONG


@pytest.mark.django_db(transaction=True)
def test_moments_open_and_close_a_rule_without_the_link_changing(user):
    now = datetime.now(UTC)
    link = targeted(
        user,
        {"after": now + timedelta(days=1), "url": "https://later.example/"},
        {"before": now - timedelta(days=1), "url": "https://earlier.example/"},
        {
            "after": now - timedelta(days=1),
            "before": now + timedelta(seconds=2),
            "url": "https://now.example/",
        },
    )
    assert location(link) == "https://now.example/"
    # Cached as it is, the entry's rule closes by itself once its moment has passed.
    closes = datetime.fromisoformat(link.rules[2]["before"])
    time.sleep(max(0.0, (closes - datetime.now(UTC)).total_seconds()) + 0.1)
    assert location(link) == LONG
    link_update(code=link.code, user=user, rules=[{"after": now, "url": "https://now.example/"}])
    assert location(link) == "https://now.example/"


@pytest.mark.django_db(transaction=True)
def test_every_condition_of_a_rule_must_match(user, settings):
    settings.NUM_PROXIES = 0
    link = targeted(
        user,
        {
            "query": {"utm_source": "mail"},
            "ip": "10.0.0.0/8",
            "after": "2000-01-01",
            "url": "https://both.example/",
        },
    )
    assert location(link, "?utm_source=mail", REMOTE_ADDR="10.0.0.1").startswith(
        "https://both.example/"
    )
    assert location(link, "?utm_source=mail", REMOTE_ADDR="11.0.0.1").startswith(LONG)
    assert location(link, "?utm_source=sms", REMOTE_ADDR="10.0.0.1").startswith(LONG)


def test_a_cached_rule_with_a_condition_this_version_does_not_know_never_matches():
    entry = LinkEntry(
        code="abc",
        link_id=1,
        location=LONG,
        redirect_type=302,
        expires_at=None,
        revoked=False,
        rules=(
            {"browser": "chrome", "location": "https://newer.example/"},
            {"query": {"a": "1"}, "location": "https://a.example/"},
        ),
    )
    meta = {"QUERY_STRING": "a=1", "REMOTE_ADDR": "10.0.0.1"}
    assert gates.destination(entry, meta).location == "https://a.example/"
    assert gates.destination(entry, {"REMOTE_ADDR": "10.0.0.1"}).location == LONG


@pytest.mark.django_db
def test_the_api_stores_the_new_conditions_in_one_spelling_and_names_a_bad_one(user):
    api = client_for(user)
    answer = api.post(
        "/api/v1/links/",
        {
            "long_url": LONG,
            "rules": [
                {
                    "query": "utm_source=mail&ref=*",
                    "ip": "10.1.*.*",
                    "city": " London ",
                    "after": "2026-05-01T09:00:00+02:00",
                    "before": "2027-01-01",
                    "url": ELSEWHERE,
                }
            ],
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    assert answer.json()["rules"] == [
        {
            "query": {"utm_source": "mail", "ref": None},
            "ip": "10.1.0.0/16",
            "city": "London",
            "after": "2026-05-01T07:00:00Z",
            "before": "2027-01-01T00:00:00Z",  # TIME_ZONE's midnight (UTC here)
            "url": ELSEWHERE,
        }
    ]
    answer = api.patch(
        f"/api/v1/links/{answer.json()['code']}/",
        {"rules": [{"country": "GB", "url": ELSEWHERE}, {"ip": "10.*.1.*", "url": ELSEWHERE}]},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json()["rules"][0].startswith("rules[1].ip: “10.*.1.*” is not an address")


@pytest.mark.django_db
def test_the_admin_lists_the_new_conditions_in_their_one_spelling(admin_client, user):
    link = targeted(
        user,
        {"query": {"utm_source": "mail", "ref": None}, "ip": "10.1.*.*", "url": ELSEWHERE},
        {"city": "London", "before": "2030-01-01T00:00:00+01:00", "url": "https://b.example/"},
    )
    html = admin_client.get(f"/admin/links/urllink/{link.pk}/change/").content.decode()
    assert f"query utm_source=mail&amp;ref=*, ip 10.1.0.0/16 → {ELSEWHERE}" in html
    assert "city London, before 2029-12-31T23:00:00Z → https://b.example/" in html
