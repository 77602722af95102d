"""Enrichment: where a visit came from and what made it, as the stats pages will show it."""

import hashlib

import pytest

from analytics import enrich
from analytics.tests.visits import (
    CHROME_MAC,
    FIREFOX_WINDOWS,
    GOOGLEBOT,
    SAFARI_IPAD,
    SAFARI_IPHONE,
    SLACKBOT,
    WECHAT_ANDROID,
)


@pytest.fixture(autouse=True)
def _fresh_caches():
    enrich.clear_caches()
    yield
    enrich.clear_caches()


def test_hangzhou_address_is_placed_in_zhejiang_china_on_the_shipped_database():
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.country_code, geo.province, geo.city) == (
        "China",
        "CN",
        "Zhejiang",
        "Hangzhou",
    )


def test_names_follow_geoip_language_with_english_fallback(settings):
    settings.GEOIP_LANGUAGE = "zh-CN"
    geo = enrich.geo_lookup("115.236.0.1")
    assert (geo.country, geo.province, geo.city) == ("中国", "浙江省", "杭州")
    # A language the database does not have falls back to English.
    settings.GEOIP_LANGUAGE = "xx"
    assert enrich.geo_lookup("81.2.69.160").country == "United Kingdom"


def test_ipv6_addresses_are_located():
    assert enrich.geo_lookup("2001:4860:4860::8888").country_code == "US"


@pytest.mark.parametrize(
    ("ip", "label"),
    [
        ("127.0.0.1", "Loopback"),
        ("::1", "Loopback"),
        ("10.1.2.3", "Private network"),
        ("192.168.0.7", "Private network"),
        ("fd00::1", "Private network"),
    ],
)
def test_private_and_loopback_addresses_are_labelled(ip, label):
    geo = enrich.geo_lookup(ip)
    assert geo.country == label
    assert geo.country_code == ""


def test_unknown_address_and_missing_database_leave_places_empty(settings):
    assert enrich.geo_lookup("not-an-ip") == enrich.GeoInfo()
    settings.GEOIP_CITY_DB = "/nonexistent/GeoLite2-City.mmdb"
    assert enrich.geo_lookup("115.236.0.1").country == ""


@pytest.mark.parametrize(
    ("ua", "browser", "os", "device", "is_bot"),
    [
        (CHROME_MAC, "Chrome", "Mac OS X", "PC", False),
        (SAFARI_IPHONE, "Mobile Safari", "iOS", "Mobile", False),
        (WECHAT_ANDROID, "WeChat", "Android", "Mobile", False),
        (GOOGLEBOT, "Googlebot", "Other", "Bot", True),
        (FIREFOX_WINDOWS, "Firefox", "Windows", "PC", False),
        (SAFARI_IPAD, "Mobile Safari", "iOS", "Tablet", False),
        ("", "Other", "Other", "Other", False),
    ],
)
def test_user_agents_are_parsed_to_browser_os_and_device(ua, browser, os, device, is_bot):
    info = enrich.parse_user_agent(ua)
    assert (info.browser_type, info.os_type, info.device_type, info.is_bot) == (
        browser,
        os,
        device,
        is_bot,
    )


def test_versions_are_kept():
    assert enrich.parse_user_agent(CHROME_MAC).browser_version == "120.0.0"
    assert enrich.parse_user_agent(SAFARI_IPHONE).os_version == "17.1"
    assert enrich.parse_user_agent(WECHAT_ANDROID).browser_version == "8.0.28"
    assert enrich.parse_user_agent(WECHAT_ANDROID).os_version == "10"


@pytest.mark.parametrize(
    "ua",
    [
        SLACKBOT,
        "Twitterbot/1.0",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        "WhatsApp/2.23.20.0 A",
        "TelegramBot (like TwitterBot)",
        "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
        "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
        "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5",
        "Pinterest/0.2 (+https://www.pinterest.com/bot.html)",
        "Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        "curl/8.4.0",
        "python-requests/2.31.0",
    ],
)
def test_link_preview_fetchers_and_scripts_are_bots(ua):
    info = enrich.parse_user_agent(ua)
    assert info.is_bot
    assert info.device_type == "Bot"


def test_a_phone_named_cubot_is_a_person():
    ua = (
        "Mozilla/5.0 (Linux; Android 9; CUBOT X19 Build/PPR1.180610.011) AppleWebKit/537.36 "
        "(KHTML, like Gecko) Chrome/88.0.4324.181 Mobile Safari/537.36"
    )
    assert not enrich.parse_user_agent(ua).is_bot


def test_client_id_is_sha1_of_ip_and_user_agent():
    fields = enrich.enrich(client_ip="198.51.100.4", user_agent=CHROME_MAC)
    expected = hashlib.sha1(
        f"198.51.100.4&{CHROME_MAC}".encode(), usedforsecurity=False
    ).hexdigest()
    assert fields["client_id"] == expected
    assert fields["client_ip"] == "198.51.100.4"


def test_anonymize_ip_masks_stored_address_after_the_lookup(settings):
    settings.ANONYMIZE_IP = True
    fields = enrich.enrich(client_ip="115.236.0.77", user_agent=CHROME_MAC)
    assert fields["client_ip"] == "115.236.0.0"
    assert fields["city"] == "Hangzhou"  # looked up on the full address
    # Still one id per (ip, ua), but not the plain SHA-1 anyone could recompute.
    plain = hashlib.sha1(f"115.236.0.77&{CHROME_MAC}".encode(), usedforsecurity=False).hexdigest()
    assert fields["client_id"] != plain
    assert (
        fields["client_id"]
        == enrich.enrich(client_ip="115.236.0.77", user_agent=CHROME_MAC)["client_id"]
    )
    assert (
        fields["client_id"]
        != enrich.enrich(client_ip="115.236.0.78", user_agent=CHROME_MAC)["client_id"]
    )


def test_anonymize_ipv6_keeps_the_first_48_bits():
    assert enrich.anonymize_ip("2001:db8:abcd:1234:5678:9abc:def0:1234") == "2001:db8:abcd::"
    assert enrich.anonymize_ip("203.0.113.200") == "203.0.113.0"
