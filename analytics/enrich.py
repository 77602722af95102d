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
from collections.abc import Callable
from typing import NamedTuple, cast

from django.conf import settings

from analytics.bots import detect_bot
from analytics.messages import MAX_USER_AGENT
from core import geodata
from core.client_ip import canonical_ip

logger = logging.getLogger(__name__)

PRIVATE_NETWORK = "Private network"
# The privacy "mode" of a visit whose browser sent Sec-GPC: 1 (or DNT: 1, when honoured).
PRIVATE = "private"
LOOPBACK = "Loopback"

# WeChat's in-app browser looks like Chrome WebView to ua-parser; its own token says who it is.
_WECHAT_RE = re.compile(r"MicroMessenger/(\d+(?:\.\d+){0,2})")
# An Android browser's own words for its device, where the device model list knows no model.
_SAYS_TABLET = re.compile(r"Android[\d. ]*; Tablet;")
_SAYS_MOBILE = re.compile(r"\bMobile\b")


class UserAgentInfo(NamedTuple):
    browser_type: str
    browser_version: str
    os_type: str
    os_version: str
    device_type: str  # analytics.models.DeviceType value
    is_bot: bool
    bot_name: str  # for bots: analytics.bots.Bot's name and kind; "" for people
    bot_kind: str


class GeoInfo(NamedTuple):
    country: str = ""
    country_code: str = ""
    province: str = ""
    city: str = ""
    isp: str = ""


# --- User-Agent ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def parse_user_agent(ua: str) -> UserAgentInfo:
    """Browser, OS and device of a User-Agent string, and which bot sent it, if one did
    (analytics.bots: maintained crawler lists; link-preview fetchers and HTTP libraries count)."""
    from user_agents import parse  # imported here: loading the regex tables takes ~0.1 s

    from analytics.devices import device_type_from_model

    parsed = parse(ua or "")
    browser, browser_version = parsed.browser.family, parsed.browser.version_string
    wechat = _WECHAT_RE.search(ua or "")
    if wechat:
        browser, browser_version = "WeChat", wechat.group(1)
    # Capped like the stored User-Agent, which bounds the detector's cost (linear in length).
    bot = detect_bot(ua[:MAX_USER_AGENT]) if ua else None
    is_bot = bot is not None
    # Android User-Agents of many tablets say "Mobile", and some phones' say nothing: the model
    # they name decides where Matomo's device list knows it (analytics.devices). Other systems'
    # User-Agents name the device class themselves (iPhone, iPad, a desktop OS).
    android = not is_bot and parsed.os.family == "Android"
    by_model = device_type_from_model(ua[:MAX_USER_AGENT]) if android else None
    if is_bot:
        device = "Bot"
    elif by_model:
        device = by_model
    elif android and _SAYS_TABLET.search(ua):
        device = "Tablet"  # a model the list lacks, or none (Firefox): the browser's own words
    elif android and parsed.is_tablet and _SAYS_MOBILE.search(ua):
        # Android phones' browsers say "Mobile"; ua-parser looks for "Mobile Safari" only, so
        # "Mobile DuckDuckGo/5 Safari" was a tablet.
        device = "Mobile"
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
        bot_name=bot.name if bot else "",
        bot_kind=bot.kind if bot else "",
    )


# --- IP address ------------------------------------------------------------------------------


def normalize_ip(value: str) -> str:
    """The canonical text of an IP address (without a zone id), or "" when `value` is not one."""
    return canonical_ip(value)


def anonymize_ip(ip: str) -> str:
    """Zero the last IPv4 octet or the last 80 bits of an IPv6 address (a /24 or /48 network)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ""
    prefix = 24 if address.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False).network_address)


def client_id(ip: str, ua: str, *, anonymize: bool, key: str) -> str:
    """SHA-1 of ip + "&" + user agent: the same person on the same device in the stats.

    With ANONYMIZE_IP on (`anonymize`), the hash is keyed with SECRET_KEY (`key`) so that the
    stored id cannot be turned back into the address by hashing all 2³² IPv4 addresses.
    """
    message = f"{ip}&{ua}".encode()
    if anonymize:
        return hmac.new(key.encode(), message, hashlib.sha1).hexdigest()
    return hashlib.sha1(message, usedforsecurity=False).hexdigest()


def windowed_client_id(ip: str, ua: str, *, secret: str) -> str:
    """The visitor id of the "truncated" and "none" privacy modes: HMAC-SHA-256 of ip + "&" +
    user agent under the current window's secret (analytics.services.privacy), cut to the
    column's 40 hex digits. The same person within one window; once the secret is deleted, not
    computable from the address by anyone, the operator included."""
    message = f"{ip}&{ua}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:40]


# The visitor id of every visit whose browser asked not to be tracked (Sec-GPC, DNT): the click
# counts, as one person among all such visits of the hour, and nothing tells them apart.
PRIVATE_VISITOR = "private"


# --- GeoIP -----------------------------------------------------------------------------------
# The default databases are those `make` installs (core/geodata.py: DB-IP City Lite and an
# IP-to-ASN file), else the 2018 GeoLite2 City file; GEOIP_CITY_DB / GEOIP_ASN_DB override them
# with MaxMind's formats (or the same kinds of files).


def city_db_path() -> str:
    return settings.GEOIP_CITY_DB or geodata.default_city_db()


def asn_db_path() -> str:
    return settings.GEOIP_ASN_DB or geodata.default_asn_db()


@functools.cache
def _open_reader(path: str, kind: str) -> geodata.CityDb | geodata.NetworkDb | None:
    """One reader per file per process: geodata's reader of a City database (kind "city") or of
    a network database ("asn"), of either schema; None (logged once) when it cannot be opened."""
    import maxminddb

    try:
        db = geodata.open_network_db(path) if kind == "asn" else geodata.open_city_db(path)
    except (OSError, ValueError, maxminddb.InvalidDatabaseError) as exc:
        logger.warning("GeoIP database %s cannot be opened (%s): no %s data", path, exc, kind)
        return None
    if db is None:
        logger.warning("GeoIP database %s is not a City database: no places", path)
    return db


def city_reader() -> geodata.CityDb | None:
    return cast("geodata.CityDb | None", _open_reader(city_db_path(), "city"))


def asn_reader() -> geodata.NetworkDb | None:
    path = asn_db_path()
    return cast("geodata.NetworkDb | None", _open_reader(path, "asn")) if path else None


def _geo_lookup(ip: str) -> GeoInfo:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return GeoInfo()
    # A dual-stack socket reports an IPv4 client as ::ffff:a.b.c.d. Looked up as IPv4: DB-IP's
    # IPv6 file and the ASN data do not alias ::ffff:0:0/96 as MaxMind's files do, and as IPv6
    # the address is "reserved" (::/8), which labelled every such visitor a private network.
    mapped = address.ipv4_mapped if address.version == 6 else None
    if mapped is not None:
        address = mapped
    if address.is_loopback:
        return GeoInfo(country=LOOPBACK, province=LOOPBACK, city=LOOPBACK, isp=LOOPBACK)
    if address.is_private or address.is_link_local or address.is_reserved:
        label = PRIVATE_NETWORK
        return GeoInfo(country=label, province=label, city=label, isp=label)
    # Readers are opened once per process, a failure logged once. (DB-IP's names are English
    # only: there GEOIP_LANGUAGE names the country alone.)
    places = city_reader()
    country, country_code, province, city = (
        places.places(address, settings.GEOIP_LANGUAGE) if places else ("", "", "", "")
    )
    networks = asn_reader()
    isp = networks.network(address) if networks else ""
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

# What enrich() derives, in the order enricher()'s tuples hold them (services builds rows from it).
ENRICHED_FIELDS = ("client_id", "client_ip", *GeoInfo._fields, *UserAgentInfo._fields)


class _Settings(NamedTuple):
    """The settings an enriched visit depends on: part of every cache key, so a changed database,
    language, anonymisation or key never serves values computed under the old ones."""

    city_db: str
    asn_db: str
    language: str
    anonymize: bool
    secret_key: str
    privacy: str  # the visit's privacy mode (workspaces.models.Privacy), or "private"
    visitor_secret: str  # the window's secret for "truncated" and "none"; "" otherwise


def _current_settings(privacy: str = "full", visitor_secret: str = "") -> _Settings:
    return _Settings(
        city_db=city_db_path(),
        asn_db=settings.GEOIP_ASN_DB,
        language=settings.GEOIP_LANGUAGE,
        anonymize=settings.ANONYMIZE_IP,
        secret_key=settings.SECRET_KEY,
        privacy=privacy,
        visitor_secret=visitor_secret,
    )


@functools.lru_cache(maxsize=32768)
def _address_fields(client_ip: str, conf: _Settings) -> tuple[str, str, GeoInfo]:
    """(canonical address, address as stored, place) of a raw client IP, once per address: the
    ipaddress parsing costs more than the GeoIP lookup it leads to."""
    ip = normalize_ip(client_ip) if client_ip else ""
    if conf.privacy == PRIVATE:
        return ip, "", GeoInfo()
    # Places are looked up from the full address in every mode, before it is cut or dropped.
    geo = _cached_geo(ip, conf.city_db, conf.asn_db, conf.language) if ip else GeoInfo()
    if conf.privacy == "none":
        stored_ip = ""
    elif ip and (conf.anonymize or conf.privacy == "truncated"):
        stored_ip = anonymize_ip(ip)
    else:
        stored_ip = ip
    return ip, stored_ip, geo


# Keyed by the visitor (address, User-Agent): most visits come from people who clicked before, so
# a visit costs one lookup (~2 µs instead of ~6). 100,000 visits of the ingest benchmark's mix come
# from ~25,000 visitors, which thrashed a cache of 16,384; 32,768 visitors take ~25 MB (measured).
@functools.lru_cache(maxsize=32768)
def _enriched(client_ip: str, user_agent: str, conf: _Settings) -> tuple:
    ip, stored_ip, geo = _address_fields(client_ip, conf)
    agent = parse_user_agent(user_agent)
    if conf.privacy == PRIVATE:
        # Counted apart from bots still (the User-Agent is read, not kept); nothing else.
        bot = agent.is_bot
        agent = UserAgentInfo(
            "", "", "", "", "Bot" if bot else "Other", bot, agent.bot_name, agent.bot_kind
        )
        return (PRIVATE_VISITOR, "", *geo, *agent)
    if conf.visitor_secret:
        visitor = windowed_client_id(ip, user_agent, secret=conf.visitor_secret)
    else:
        visitor = client_id(ip, user_agent, anonymize=conf.anonymize, key=conf.secret_key)
    return (visitor, stored_ip, *geo, *agent)


def enricher(privacy: str = "full", visitor_secret: str = "") -> Callable[[str, str], tuple]:
    """enrich() for a batch: `(client_ip, user_agent) -> values in ENRICHED_FIELDS order`.

    `privacy` is the visits' mode ("full", "truncated", "none", or PRIVATE for a visitor who
    asked not to be tracked) and `visitor_secret` their window's secret in "truncated" and
    "none" (analytics.services.privacy decides both). The settings are read once, when it is made
    (reading them per visit measured ~3 µs of the ~60 µs a visit may cost at 15,000 visits/s);
    make a new one per batch so that changed settings are picked up.
    """
    conf = _current_settings(privacy, visitor_secret)

    def enrich_one(client_ip: str, user_agent: str) -> tuple:
        return _enriched(client_ip or "", user_agent or "", conf)

    return enrich_one


def enrich(*, client_ip: str, user_agent: str) -> dict:
    """The VisitRecord fields derived from one visit's address and User-Agent."""
    values = _enriched(client_ip or "", user_agent or "", _current_settings())
    return dict(zip(ENRICHED_FIELDS, values, strict=True))


def clear_caches() -> None:
    """Forget readers and parsed values (tests that swap databases, a reloaded GeoIP file)."""
    _enriched.cache_clear()
    _address_fields.cache_clear()
    parse_user_agent.cache_clear()
    _cached_geo.cache_clear()
    _open_reader.cache_clear()
