"""Rules and variants: which visitor goes where. What may be stored (validated here, so the API,
the forms, the admin, the bulk path and the Shlink layer agree) and the vocabulary the redirect
matches against (serving/gates.py).

A rule is {"device"?, "os"?, "country"?, "city"?, "language"?, "query"?, "ip"?, "after"?,
"before"?, "url"}: every condition it gives must match, and the first rule that matches sends
the visitor to its url. Variants are 2–4 {"url", "weight"} whose weights sum to 100: the people
no rule took are split between them, each visitor always to the same one. Values are stored in
one spelling so the redirect compares without thinking: device and language in lowercase,
country in uppercase, the OS as OS_NAMES spells it, a city trimmed (compared in any case), the
query as {name: value} (a value; "" for a parameter without one; null for any value), the
address as a network's canonical text ("203.0.113.0/24"; one address without "/32"), the two
moments in UTC ("2026-05-01T07:00:00Z").

Errors name the item and the field, counting from 0 as JSON paths do:
{"rules": ["rules[1].country: “XX” is not an ISO 3166 country code."]}.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import UTC, date, datetime, time
from urllib.parse import quote, unquote_plus

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from links.services.policy import LongUrlRules, years_a_moment_may_have

# The rule's device → analytics' device type (analytics.models.DeviceType) of the visitor.
DEVICES = {"mobile": "Mobile", "tablet": "Tablet", "desktop": "PC"}
OS_NAMES = ("iOS", "Android", "Windows", "macOS", "Linux", "ChromeOS")
_OS_BY_FOLDED = {name.lower(): name for name in OS_NAMES}
# ua-parser's OS families (UserAgentInfo.os_type) that are one of OS_NAMES by another name.
_OS_FAMILIES = {
    "Mac OS X": "macOS",
    "Mac OS": "macOS",
    "iPadOS": "iOS",
    "Chrome OS": "ChromeOS",
    **dict.fromkeys(
        (
            "Ubuntu",
            "Debian",
            "Fedora",
            "Arch Linux",
            "Red Hat",
            "SUSE",
            "openSUSE",
            "Gentoo",
            "Linux Mint",
            "Mint",
            "Kubuntu",
            "Slackware",
            "CentOS",
        ),
        "Linux",
    ),
}
# In the order forms, answers and descriptions list them.
CONDITIONS = ("device", "os", "country", "city", "language", "query", "ip", "after", "before")
MAX_RULES = 20
MIN_VARIANTS, MAX_VARIANTS = 2, 4
MAX_CITY = 64  # VisitRecord.city: the longest name the GeoIP lookup gives
MAX_QUERY_PARAMS = 10
MAX_QUERY_NAME, MAX_QUERY_VALUE = 100, 500
# The query text's stand-in for "any value" (query_text and the forms): `ref=*`.
ANY_VALUE = "*"
_LANGUAGE = re.compile(r"[a-z]{2,3}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_IPV4_PART = re.compile(r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\Z")
# What stays as it is when query_text writes a name or value: the readable query characters.
_QUERY_TEXT_SAFE = "/:@!$'(),;-._~"


def os_name(os_type: str) -> str:
    """A User-Agent's OS family (analytics.enrich.parse_user_agent's os_type) as a rule names it
    ("Mac OS X" → "macOS", "Windows 10" → "Windows"); other families as they are."""
    if os_type.startswith("Windows"):
        return "Windows"
    return _OS_FAMILIES.get(os_type, os_type)


def accept_language(header: str) -> str:
    """The primary subtag of an Accept-Language header's first tag, lowercased ("zh" for
    "zh-CN,zh;q=0.9,en;q=0.8"): the language the browser is set to. "" for none or "*"."""
    first = header.split(",", 1)[0].split(";", 1)[0].strip()
    primary = first.split("-", 1)[0].split("_", 1)[0].lower()
    return "" if primary == "*" else primary


def _country_codes() -> frozenset[str]:
    # ISO 3166 codes, as GeoIP data gives them; loaded when a rule names a country.
    from core.geodata import country_codes

    return country_codes()


def _text(value, where: str) -> tuple[str, list[str]]:
    """A condition's value as trimmed text, or a problem."""
    if not isinstance(value, str) or not value.strip():
        return "", [f"{where}: give a text value, or leave the condition out."]
    return value.strip(), []


def _device(value: str, where: str) -> tuple[str, list[str]]:
    folded = value.lower()
    if folded not in DEVICES:
        return "", [f"{where}: “{value}” is not a device; use mobile, tablet or desktop."]
    return folded, []


def _os(value: str, where: str) -> tuple[str, list[str]]:
    name = _OS_BY_FOLDED.get(value.lower()) or _OS_BY_FOLDED.get(os_name(value).lower())
    if name is None:
        return "", [f"{where}: “{value}” is not a known OS; use one of {', '.join(OS_NAMES)}."]
    return name, []


def _country(value: str, where: str) -> tuple[str, list[str]]:
    code = value.upper()
    if code not in _country_codes():
        return "", [
            f"{where}: “{value}” is not an ISO 3166 country code; use two letters, e.g. CN."
        ]
    return code, []


def _city(value: str, where: str) -> tuple[str, list[str]]:
    """A city as the stats name it (the GeoIP data's name, in GEOIP_LANGUAGE): compared in any
    case, so stored as typed, blanks trimmed and runs of them made one."""
    name = " ".join(value.split())
    if _CONTROL.search(name):
        return "", [f"{where}: give the city's name as plain text."]
    if len(name) > MAX_CITY:
        return "", [f"{where}: a city's name has at most {MAX_CITY} characters."]
    return name, []


def _language(value: str, where: str) -> tuple[str, list[str]]:
    folded = value.lower().replace("_", "-")
    if _LANGUAGE.match(folded):
        return folded, []
    primary = folded.split("-", 1)[0]
    if "-" in folded and _LANGUAGE.match(primary):
        return "", [f"{where}: rules match the language only, not the region: use “{primary}”."]
    return "", [f"{where}: “{value}” is not a language tag; use two or three letters, e.g. zh."]


def _ip(value: str, where: str) -> tuple[str, list[str]]:
    """One address, a network (CIDR, IPv4 or IPv6), or an IPv4 wildcard whose stars end it
    (`203.0.113.*`, Shlink's form), stored as the network's canonical text."""
    text = value.replace(" ", "")
    example = "203.0.113.7, 203.0.113.0/24 or 203.0.113.*"
    if "*" in text:
        parts = text.split(".")
        given = [part for part in parts if part != "*"]
        if (
            len(parts) != 4
            or parts[: len(given)] != given
            or not all(_IPV4_PART.match(part) for part in given)
        ):
            return "", [
                f"{where}: “{value}” is not an address pattern this service can match: stars "
                f"stand for the last parts only (203.0.113.*, 10.1.*.*); else give a network "
                f"(10.0.0.0/8)."
            ]
        text = ".".join(given + ["0"] * (4 - len(given))) + f"/{8 * len(given)}"
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        return "", [f"{where}: “{value}” is not an IP address or network; give e.g. {example}."]
    mapped = getattr(network.network_address, "ipv4_mapped", None)
    if mapped is not None and network.prefixlen >= 96:
        # The redirect compares an IPv4-mapped visitor (::ffff:203.0.113.7) as IPv4, so the
        # rule is kept in that form too, or it could never match.
        network = ipaddress.ip_network(f"{mapped}/{network.prefixlen - 96}", strict=False)
    if network.prefixlen == network.max_prefixlen:
        return str(network.network_address), []
    return str(network), []


def _query_piece(piece: str) -> tuple[str, str | None]:
    """`name=value` → (name, value); `name=*` → (name, None), any value; `name` or `name=` →
    (name, ""), no value; each part decoded as a query string is (`%20` or `+` for a space)."""
    name, equals, raw = piece.partition("=")
    if equals and raw == ANY_VALUE:
        return unquote_plus(name).strip(), None
    return unquote_plus(name).strip(), unquote_plus(raw)


def query_text(query: dict) -> str:
    """A stored query condition as the forms show it (and take it): `utm_source=mail&ref=*`
    (`ref` with any value) `&debug` (`debug` without a value)."""
    pieces = []
    for name, value in query.items():
        key = quote(name, safe=_QUERY_TEXT_SAFE)
        if value is None:
            pieces.append(f"{key}={ANY_VALUE}")
        elif value == "":
            pieces.append(key)
        elif value == ANY_VALUE:  # the value "*" itself, not any value
            pieces.append(f"{key}=%2A")
        else:
            pieces.append(f"{key}={quote(value, safe=_QUERY_TEXT_SAFE + ANY_VALUE)}")
    return "&".join(pieces)


def _query(value, where: str) -> tuple[dict, list[str]]:
    """{name: value, …}: the value the parameter must have, "" for none (`?debug`, `?debug=`),
    null for any. Text is read as query_text writes it (`utm_source=mail&ref=*&debug`)."""
    if isinstance(value, str):
        pieces = [piece for piece in value.strip().lstrip("?").split("&") if piece.strip()]
        wanted: dict = {}
        for piece in pieces:
            name, given = _query_piece(piece)
            if name in wanted:
                return {}, [f"{where}: “{name}” is named twice; give each parameter once."]
            wanted[name] = given
    elif isinstance(value, dict):
        wanted = {name.strip() if isinstance(name, str) else name: v for name, v in value.items()}
    else:
        return {}, [
            f'{where}: give the parameters as an object ({{"utm_source": "mail"}}) or as '
            f"text (utm_source=mail)."
        ]
    if not wanted:
        return {}, [f"{where}: name at least one query parameter, or leave the condition out."]
    if len(wanted) > MAX_QUERY_PARAMS:
        return {}, [f"{where}: a rule checks at most {MAX_QUERY_PARAMS} query parameters."]
    problems = []
    for name, given in wanted.items():
        if not isinstance(name, str) or not name or len(name) > MAX_QUERY_NAME:
            problems.append(
                f"{where}: a parameter's name is 1 to {MAX_QUERY_NAME} characters of text."
            )
        elif given is not None and (not isinstance(given, str) or len(given) > MAX_QUERY_VALUE):
            problems.append(
                f"{where}: give “{name}” a text value of at most {MAX_QUERY_VALUE} characters "
                f'("" for none, null for any).'
            )
        elif _CONTROL.search(name + (given or "")):
            problems.append(f"{where}: “{name}” holds a control character.")
    return ({}, problems) if problems else (wanted, [])


def _moment(value, where: str) -> tuple[str, list[str]]:
    """A date and time (ISO 8601 text, or a datetime from a form) in UTC, to the second; one
    without an offset is in the current time zone (the person's on the pages), a bare date is
    its midnight there."""
    moment = value
    if isinstance(value, str):
        text = value.strip()
        try:
            moment = parse_datetime(text) if "T" in text or " " in text else None
            if moment is None and text:
                day = parse_date(text)
                moment = None if day is None else datetime.combine(day, time())
        except ValueError:  # well formed, but no such day or hour (2026-02-30)
            moment = None
    elif isinstance(value, date) and not isinstance(value, datetime):
        moment = datetime.combine(value, time())
    if not isinstance(moment, datetime):
        return "", [
            f"{where}: “{value}” is not a date and time; use ISO 8601, e.g. "
            f"2026-05-01T09:00:00+02:00."
        ]
    earliest, latest = years_a_moment_may_have()
    if not earliest <= moment.year <= latest:
        return "", [f"{where}: choose a date between {earliest} and {latest}."]
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, timezone.get_current_timezone())
    moment = moment.astimezone(UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z"), []


_TEXT_CONDITIONS = {
    "device": _device,
    "os": _os,
    "country": _country,
    "city": _city,
    "language": _language,
    "ip": _ip,
}


def _condition(key: str, value, where: str) -> tuple[object, list[str]]:
    """(the value to store, [problems]) of one condition."""
    if key == "query":
        return _query(value, where)
    if key in ("after", "before"):
        if isinstance(value, str | date) and (not isinstance(value, str) or value.strip()):
            return _moment(value, where)
        return "", [f"{where}: give a date and time, or leave the condition out."]
    text, problems = _text(value, where)
    if problems:
        return "", problems
    return _TEXT_CONDITIONS[key](text, where)


def _url(value, where: str, url_rules: LongUrlRules) -> tuple[str, list[str]]:
    if not isinstance(value, str):
        return "", [f"{where}: give the URL as text."]
    try:
        return url_rules.check(value), []
    except ValidationError as exc:
        return "", [f"{where}: {message}" for message in exc.message_dict["long_url"]]


def validate_rules(rules, *, url_rules: LongUrlRules) -> list[dict]:
    """The rules to store, or ValidationError({"rules": [every problem, each naming its item]})."""
    if rules is None:
        return []
    if not isinstance(rules, list | tuple):
        raise ValidationError({"rules": ["Give the rules as a list."]})
    if len(rules) > MAX_RULES:
        raise ValidationError({"rules": [f"A link can have at most {MAX_RULES} rules."]})
    problems: list[str] = []
    cleaned: list[dict] = []
    for index, rule in enumerate(rules):
        where = f"rules[{index}]"
        if not isinstance(rule, dict):
            problems.append(f"{where}: give each rule as an object with a url and conditions.")
            continue
        unknown = sorted(str(key) for key in rule if key not in (*CONDITIONS, "url"))
        if unknown:
            problems.append(
                f"{where}.{unknown[0]}: not a condition; use {', '.join(CONDITIONS)} and url."
            )
        stored: dict = {}
        for key in CONDITIONS:
            if key in rule and rule[key] is not None:
                value, found = _condition(key, rule[key], f"{where}.{key}")
                problems += found
                stored[key] = value
        if stored.get("after") and stored.get("before") and stored["after"] >= stored["before"]:
            problems.append(
                f"{where}.before: {stored['before']} is not later than after "
                f"({stored['after']}): this rule could never match."
            )
        if not stored and not unknown:
            problems.append(f"{where}: give at least one of {', '.join(CONDITIONS)}.")
        if rule.get("url") in (None, ""):
            problems.append(f"{where}.url: give the URL this rule sends visitors to.")
        else:
            stored["url"], found = _url(rule["url"], f"{where}.url", url_rules)
            problems += found
        cleaned.append(stored)
    if problems:
        raise ValidationError({"rules": problems})
    return cleaned


def describe_rule(rule: dict) -> str:
    """A stored rule's conditions in one line, as the admin lists them: "device mobile, query
    utm_source=mail, ip 10.0.0.0/8"."""
    return ", ".join(
        f"{key} {query_text(rule[key]) if key == 'query' else rule[key]}"
        for key in CONDITIONS
        if rule.get(key) is not None
    )


def validate_variants(variants, *, url_rules: LongUrlRules) -> list[dict]:
    """The variants to store ([] for none), or ValidationError({"variants": [problems]}).

    Weights must sum to exactly 100 rather than being scaled: what the marketer reads back is
    what was asked for, and 33/33/33 is refused instead of quietly becoming 33/33/34.
    """
    if not variants:
        return []
    if not isinstance(variants, list | tuple):
        raise ValidationError({"variants": ["Give the variants as a list."]})
    if not MIN_VARIANTS <= len(variants) <= MAX_VARIANTS:
        raise ValidationError(
            {"variants": [f"Give {MIN_VARIANTS} to {MAX_VARIANTS} variants (or none)."]}
        )
    problems: list[str] = []
    cleaned: list[dict] = []
    total = 0
    for index, variant in enumerate(variants):
        where = f"variants[{index}]"
        if not isinstance(variant, dict):
            problems.append(f"{where}: give each variant as an object with a url and a weight.")
            continue
        unknown = sorted(str(key) for key in variant if key not in ("url", "weight"))
        if unknown:
            problems.append(f"{where}.{unknown[0]}: not a variant field; use url and weight.")
        url, found = (
            _url(variant["url"], f"{where}.url", url_rules)
            if variant.get("url") not in (None, "")
            else ("", [f"{where}.url: give the URL of this variant."])
        )
        problems += found
        weight = variant.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 100:
            problems.append(f"{where}.weight: give a whole number from 1 to 100.")
            weight = 0
        total += weight
        cleaned.append({"url": url, "weight": weight})
    if not problems and total != 100:
        problems.append(f"variants: the weights must add up to 100 (these add up to {total}).")
    if problems:
        raise ValidationError({"variants": problems})
    return cleaned
