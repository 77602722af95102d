"""The fast visit ingest (issue #11) stores exactly what the plain, uncached path stores.

Caches per visitor, per address and per User-Agent, GeoIP read straight from maxminddb, and
rows written without model instances: each is checked here against the slow way it replaced.
"""

import ipaddress
import random

import geoip2.database
import geoip2.errors
import pytest
import user_agents

from analytics import enrich
from analytics.messages import decode_visit
from analytics.models import VisitRecord
from analytics.services import inserts
from analytics.tests.visits import (
    CHROME_MAC,
    FIREFOX_WINDOWS,
    GOOGLEBOT,
    SAFARI_IPAD,
    SAFARI_IPHONE,
    SLACKBOT,
    WECHAT_ANDROID,
    visit_message,
)
from core import geodata

AGENTS = [CHROME_MAC, FIREFOX_WINDOWS, GOOGLEBOT, SAFARI_IPAD, SAFARI_IPHONE, SLACKBOT,
          WECHAT_ANDROID, "", "curl/8.5.0", "Mozilla/5.0 ' \\ \" %s 😀 Käse"]  # fmt: skip
SPECIAL_ADDRESSES = ["127.0.0.1", "::1", "10.1.2.3", "fd00::1", "169.254.1.1", "240.0.0.1",
                     "not-an-ip", "", " 81.2.69.160 ", "2001:4860:4860::8888", "115.236.0.1",
                     "::ffff:81.2.69.160"]  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh_caches():
    enrich.clear_caches()
    yield
    enrich.clear_caches()


def addresses(count: int, seed: int = 7) -> list[str]:
    """Public IPv4 and IPv6 addresses spread over the whole space, plus the odd ones."""
    rnd = random.Random(seed)
    out = list(SPECIAL_ADDRESSES)
    while len(out) < count:
        if rnd.random() < 0.7:
            out.append(str(ipaddress.IPv4Address(rnd.randint(1 << 24, (224 << 24) - 1))))
        else:
            prefix = rnd.choice([0x2001, 0x2400, 0x2600, 0x2800, 0x2A00, 0x2C0F])
            out.append(str(ipaddress.IPv6Address((prefix << 112) | rnd.getrandbits(112))))
    return out


def geoip2_places(ip: str, language: str) -> tuple[str, str, str, str]:
    """Country, ISO code, province, city the way enrich read them before: geoip2's City model."""
    reader = geoip2.database.Reader(
        enrich.city_db_path(), locales=geodata.maxmind_locales(language)
    )
    try:
        found = reader.city(ip)
    except (geoip2.errors.AddressNotFoundError, ValueError, TypeError):
        return "", "", "", ""
    finally:
        reader.close()
    return (
        (found.country.name or found.registered_country.name or "")[:64],
        (found.country.iso_code or found.registered_country.iso_code or "")[:2],
        (found.subdivisions.most_specific.name or "")[:64],
        (found.city.name or "")[:64],
    )


@pytest.mark.parametrize("language", ["en", "zh-CN", "xx"])
def test_places_read_from_maxminddb_are_those_geoip2_gives(settings, language):
    settings.GEOIP_LANGUAGE = language
    compared = located = 0
    for ip in addresses(1500):
        canonical = enrich.normalize_ip(ip)
        if not canonical:
            continue
        address = ipaddress.ip_address(canonical)
        if (
            address.is_loopback
            or address.is_private
            or address.is_link_local
            or address.is_reserved
        ):
            continue
        geo = enrich._geo_lookup(canonical)
        expected = geoip2_places(canonical, language)
        assert (geo.country, geo.country_code, geo.province, geo.city) == expected, canonical
        compared += 1
        located += bool(expected[0])
    assert compared > 1000 and located > 500  # most of the space is somewhere


def uncached_fields(client_ip: str, user_agent: str, *, anonymize: bool, key: str) -> tuple:
    """What enrich() computed for one visit before any cache: every step done afresh."""
    ip = enrich.normalize_ip(client_ip) if client_ip else ""
    geo = enrich._geo_lookup(ip) if ip else enrich.GeoInfo()
    agent = enrich.parse_user_agent.__wrapped__(user_agent)
    visitor = enrich.client_id(ip, user_agent, anonymize=anonymize, key=key)
    stored = (enrich.anonymize_ip(ip) if ip else "") if anonymize else ip
    return (visitor, stored, *geo, *agent)


@pytest.mark.parametrize("anonymize", [False, True])
def test_batch_enricher_gives_what_the_uncached_path_gives(settings, anonymize):
    settings.ANONYMIZE_IP = anonymize
    rnd = random.Random(3)
    ips = addresses(200)
    enriched = enrich.enricher()
    for _ in range(3000):  # repeat visitors, so the caches answer most of these
        ip, ua = rnd.choice(ips), rnd.choice(AGENTS)
        expected = uncached_fields(ip, ua, anonymize=anonymize, key=settings.SECRET_KEY)
        assert enriched(ip, ua) == expected
        assert enrich.enrich(client_ip=ip, user_agent=ua) == dict(
            zip(enrich.ENRICHED_FIELDS, expected, strict=True)
        )


def test_each_user_agent_is_parsed_once_and_each_address_looked_up_once(monkeypatch):
    parsed, located = [], []
    real_parse, real_lookup = user_agents.parse, enrich._geo_lookup
    monkeypatch.setattr(user_agents, "parse", lambda ua: parsed.append(ua) or real_parse(ua))
    monkeypatch.setattr(enrich, "_geo_lookup", lambda ip: located.append(ip) or real_lookup(ip))
    ips = [f"81.2.69.{n}" for n in range(40)]
    enriched = enrich.enricher()
    for round_ in range(5):
        for n, ip in enumerate(ips):
            enriched(ip, AGENTS[(n + round_) % 4])
    assert sorted(parsed) == sorted(AGENTS[:4])
    assert sorted(located) == sorted(ips)


def test_changed_settings_are_never_served_from_the_cache(settings):
    before = enrich.enricher()("81.2.69.160", CHROME_MAC)
    settings.ANONYMIZE_IP = True
    settings.GEOIP_LANGUAGE = "zh-CN"
    after = enrich.enricher()("81.2.69.160", CHROME_MAC)
    assert after[1] == "81.2.69.0" and before[1] == "81.2.69.160"
    assert after[0] != before[0]  # keyed hash instead of plain SHA-1
    assert (before[2], after[2]) == ("United Kingdom", "英国")


def test_rows_hold_every_column_of_the_model_and_enrich_feeds_their_tail():
    columns = {f.attname for f in VisitRecord._meta.concrete_fields if not f.primary_key}
    assert set(inserts._VisitRow._fields) == columns
    assert inserts._VisitRow._fields[inserts._VISITOR_FIELDS] == "user_agent"
    assert inserts._VisitRow._fields[-len(enrich.ENRICHED_FIELDS) :] == enrich.ENRICHED_FIELDS


@pytest.mark.django_db
@pytest.mark.parametrize("statement_bytes", [1 << 20, 1500])
def test_stored_visits_are_exactly_the_message_plus_enrich(make_link, monkeypatch, statement_bytes):
    # On MySQL/MariaDB the INSERT text is written by analytics.services.inserts (escaped by the
    # driver) and cut into statements of at most _MAX_STATEMENT_BYTES; elsewhere an executemany.
    monkeypatch.setattr(inserts, "_MAX_STATEMENT_BYTES", statement_bytes)
    links = [make_link(f"https://example.com/{n}") for n in range(3)]
    rnd = random.Random(5)
    ips = addresses(30)
    referrers = ["", "https://t.co/x?a=1&b='2'", 'https://例え.jp/\\path"%s', "x" * 1024]
    messages = [
        visit_message(
            rnd.choice(links),
            ip=rnd.choice(ips),
            ua=rnd.choice(AGENTS),
            referrer=rnd.choice(referrers),
        )
        for _ in range(120)
    ]
    visits = [decode_visit(message) for message in messages]
    stored, _ = inserts._store(visits)
    assert stored == len(visits) == VisitRecord.objects.count()
    names = ["link_id", "code", "event_id", "visit_time", "user_agent", "referrer"]
    for visit in visits:
        record = VisitRecord.objects.get(event_id=visit["event_id"])
        expected = {name: visit[name] for name in names} | enrich.enrich(
            client_ip=visit["client_ip"], user_agent=visit["user_agent"]
        )
        assert {name: getattr(record, name) for name in expected} == expected
