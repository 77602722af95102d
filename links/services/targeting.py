"""Rules and variants: which visitor goes where. What may be stored (validated here, so the API,
the forms, the admin and the bulk path agree) and the vocabulary the redirect matches against
(serving/gates.py).

A rule is {"device"?, "os"?, "country"?, "language"?, "url"}: every condition it gives must
match, and the first rule that matches sends the visitor to its url. Variants are 2–4
{"url", "weight"} whose weights sum to 100: the people no rule took are split between them,
each visitor always to the same one. Values are stored in one spelling (device and language in
lowercase, country in uppercase, the OS as OS_NAMES spells it) so the redirect compares strings.

Errors name the item and the field, counting from 0 as JSON paths do:
{"rules": ["rules[1].country: “XX” is not an ISO 3166 country code."]}.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from links.services.policy import LongUrlRules

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
CONDITIONS = ("device", "os", "country", "language")
MAX_RULES = 20
MIN_VARIANTS, MAX_VARIANTS = 2, 4
_LANGUAGE = re.compile(r"[a-z]{2,3}\Z")


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


def _condition(key: str, value, where: str) -> tuple[str, list[str]]:
    """(the value to store, [problems]) of one condition."""
    if not isinstance(value, str) or not value.strip():
        return "", [f"{where}: give a text value, or leave the condition out."]
    value = value.strip()
    if key == "device":
        folded = value.lower()
        if folded not in DEVICES:
            return "", [f"{where}: “{value}” is not a device; use mobile, tablet or desktop."]
        return folded, []
    if key == "os":
        name = _OS_BY_FOLDED.get(value.lower()) or _OS_BY_FOLDED.get(os_name(value).lower())
        if name is None:
            return "", [f"{where}: “{value}” is not a known OS; use one of {', '.join(OS_NAMES)}."]
        return name, []
    if key == "country":
        code = value.upper()
        if code not in _country_codes():
            return "", [
                f"{where}: “{value}” is not an ISO 3166 country code; use two letters, e.g. CN."
            ]
        return code, []
    # language
    folded = value.lower().replace("_", "-")
    if _LANGUAGE.match(folded):
        return folded, []
    primary = folded.split("-", 1)[0]
    if "-" in folded and _LANGUAGE.match(primary):
        return "", [f"{where}: rules match the language only, not the region: use “{primary}”."]
    return "", [f"{where}: “{value}” is not a language tag; use two or three letters, e.g. zh."]


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
