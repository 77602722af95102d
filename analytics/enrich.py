"""Turn a raw visit (IP, User-Agent) into what the stats show: place, network, browser, OS, device.

Runs in the Celery worker (or in-process on the embedded default), never on the redirect path
while Redis is up. Readers are opened once per process and the parsers are cached, because real
traffic repeats the same addresses and User-Agents over and over.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import logging
import re
from typing import NamedTuple

from django.conf import settings

logger = logging.getLogger(__name__)

PRIVATE_NETWORK = "Private network"
LOOPBACK = "Loopback"

# Link-preview fetchers, crawlers and HTTP libraries that ua-parser does not (always) call spiders.
# Matched case-insensitively as substrings; none of them occurs in a browser's User-Agent.
BOT_TOKENS = (
    "slackbot",
    "slack-imgproxy",
    "twitterbot",
    "facebookexternalhit",
    "facebookcatalog",
    "meta-externalagent",
    "whatsapp",
    "telegrambot",
    "discordbot",
    "linkedinbot",
    "skypeuripreview",
    "pinterestbot",
    "redditbot",
    "applebot",
    "embedly",
    "iframely",
    "vkshare",
    "quora link preview",
    "bitlybot",
    "mattermost-bot",
    "zoominfobot",
    "google-pagerenderer",
    "google-inspectiontool",
    "googleother",
    "bingpreview",
    "microsoftpreview",
    "headlesschrome",
    "phantomjs",
    "lighthouse",
    "curl/",
    "wget/",
    "python-requests",
    "python-urllib",
    "python-httpx",
    "aiohttp",
    "go-http-client",
    "java/",
    "apache-httpclient",
    "okhttp/",
    "libwww-perl",
    "node-fetch",
    "axios/",
    "httpie",
    "postmanruntime",
)
# "…bot/1.0" and a contact URL ("+https://…") mark crawlers; a bare "bot" does not (CUBOT phones).
_GENERIC_BOT_RE = re.compile(r"crawler|spider|scraper|bot/|\+https?://", re.IGNORECASE)
# WeChat's in-app browser looks like Chrome WebView to ua-parser; its own token says who it is.
_WECHAT_RE = re.compile(r"MicroMessenger/(\d+(?:\.\d+){0,2})")


class UserAgentInfo(NamedTuple):
    browser_type: str
    browser_version: str
    os_type: str
    os_version: str
    device_type: str  # analytics.models.DeviceType value
    is_bot: bool


class GeoInfo(NamedTuple):
    country: str = ""
    country_code: str = ""
    province: str = ""
    city: str = ""
    isp: str = ""


# --- User-Agent ------------------------------------------------------------------------------


def _looks_like_bot(ua: str) -> bool:
    lowered = ua.lower()
    return any(token in lowered for token in BOT_TOKENS) or bool(_GENERIC_BOT_RE.search(ua))


@functools.lru_cache(maxsize=4096)
def parse_user_agent(ua: str) -> UserAgentInfo:
    """Browser, OS and device of a User-Agent string; link-preview fetchers count as bots."""
    from user_agents import parse  # imported here: loading the regex tables takes ~0.1 s

    parsed = parse(ua or "")
    browser, browser_version = parsed.browser.family, parsed.browser.version_string
    wechat = _WECHAT_RE.search(ua or "")
    if wechat:
        browser, browser_version = "WeChat", wechat.group(1)
    is_bot = bool(ua) and (parsed.is_bot or _looks_like_bot(ua))
    if is_bot:
        device = "Bot"
    elif parsed.is_tablet:
        device = "Tablet"
    elif parsed.is_mobile:
        device = "Mobile"
    elif parsed.is_pc:
        device = "PC"
    else:
        device = "Other"
    return UserAgentInfo(
        browser_type=browser[:64],
        browser_version=browser_version[:32],
        os_type=parsed.os.family[:64],
        os_version=parsed.os.version_string[:32],
        device_type=device,
        is_bot=is_bot,
    )


# --- IP address ------------------------------------------------------------------------------


def normalize_ip(value: str) -> str:
    """The canonical text of an IP address, or "" when `value` is not one."""
    try:
        return str(ipaddress.ip_address(value.strip()))
    except ValueError:
        return ""


def anonymize_ip(ip: str) -> str:
    """Zero the last IPv4 octet or the last 80 bits of an IPv6 address (a /24 or /48 network)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ""
    prefix = 24 if address.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False).network_address)


def client_id(ip: str, ua: str) -> str:
    """SHA-1 of ip + "&" + user agent: the same person on the same device in the stats.

    With ANONYMIZE_IP on, the hash is keyed with SECRET_KEY so that the stored id cannot be
    turned back into the address by hashing all 2³² IPv4 addresses.
    """
    message = f"{ip}&{ua}".encode()
    if settings.ANONYMIZE_IP:
        return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha1).hexdigest()
    return hashlib.sha1(message, usedforsecurity=False).hexdigest()


# --- GeoIP -----------------------------------------------------------------------------------


def city_db_path() -> str:
    if settings.GEOIP_CITY_DB:
        return settings.GEOIP_CITY_DB
    from geolite2 import geolite2  # the City database shipped by maxminddb-geolite2 (2018)

    return geolite2.filename


def _locales(language: str) -> list[str]:
    return [language, "en"] if language and language != "en" else ["en"]


@functools.cache
def _open_reader(path: str, language: str):
    """One reader per (file, language) per process; None (logged once) when it cannot be opened."""
    import geoip2.database

    try:
        return geoip2.database.Reader(path, locales=_locales(language))
    except (OSError, ValueError) as exc:
        logger.warning("GeoIP database %s cannot be opened (%s): no %s data", path, exc, path)
        return None


def city_reader():
    return _open_reader(city_db_path(), settings.GEOIP_LANGUAGE)


def asn_reader():
    return _open_reader(settings.GEOIP_ASN_DB, "en") if settings.GEOIP_ASN_DB else None


def _network_name(reader, ip: str) -> str:
    import geoip2.errors

    try:
        if "ISP" in reader.metadata().database_type:
            return reader.isp(ip).isp or ""
        return reader.asn(ip).autonomous_system_organization or ""
    except (geoip2.errors.AddressNotFoundError, ValueError, TypeError):
        return ""


def _geo_lookup(ip: str) -> GeoInfo:
    import geoip2.errors

    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return GeoInfo()
    if address.is_loopback:
        return GeoInfo(country=LOOPBACK, province=LOOPBACK, city=LOOPBACK, isp=LOOPBACK)
    if address.is_private or address.is_link_local or address.is_reserved:
        label = PRIVATE_NETWORK
        return GeoInfo(country=label, province=label, city=label, isp=label)
    country = country_code = province = city = ""
    reader = city_reader()
    if reader is not None:
        try:
            found = reader.city(ip)
        except (geoip2.errors.AddressNotFoundError, ValueError, TypeError):
            found = None  # TypeError: GEOIP_CITY_DB is not a City database
        if found is not None:
            # `.name` is the first of GEOIP_LANGUAGE, English that the database has.
            country = found.country.name or found.registered_country.name or ""
            country_code = found.country.iso_code or found.registered_country.iso_code or ""
            province = found.subdivisions.most_specific.name or ""
            city = found.city.name or ""
    isp_reader = asn_reader()
    isp = _network_name(isp_reader, ip) if isp_reader is not None else ""
    return GeoInfo(
        country=country[:64],
        country_code=country_code[:2],
        province=province[:64],
        city=city[:64],
        isp=isp[:128],
    )


@functools.lru_cache(maxsize=16384)
def _cached_geo(ip: str, city_path: str, asn_path: str, language: str) -> GeoInfo:
    # The settings are part of the key so that a changed database or language is never mixed in.
    return _geo_lookup(ip)


def geo_lookup(ip: str) -> GeoInfo:
    """Country, province, city (in GEOIP_LANGUAGE, else English) and network of an address."""
    return _cached_geo(ip, city_db_path(), settings.GEOIP_ASN_DB, settings.GEOIP_LANGUAGE)


# --- Whole visit -----------------------------------------------------------------------------


def enrich(*, client_ip: str, user_agent: str) -> dict:
    """The VisitRecord fields derived from one visit's address and User-Agent."""
    ip = normalize_ip(client_ip) if client_ip else ""
    geo = geo_lookup(ip) if ip else GeoInfo()
    agent = parse_user_agent(user_agent)
    stored_ip = anonymize_ip(ip) if ip and settings.ANONYMIZE_IP else ip
    return {
        "client_id": client_id(ip, user_agent),
        "client_ip": stored_ip,
        **geo._asdict(),
        **agent._asdict(),
    }


def clear_caches() -> None:
    """Forget readers and parsed values (tests that swap databases, a reloaded GeoIP file)."""
    parse_user_agent.cache_clear()
    _cached_geo.cache_clear()
    _open_reader.cache_clear()
