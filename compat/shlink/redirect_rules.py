"""Shlink's redirect rules ⇄ our rules (links.services.targeting), for
GET/POST /rest/v3/short-urls/{shortCode}/redirect-rules.

A Shlink rule is {longUrl, priority, conditions: [{type, matchKey, matchValue}]}; ours is one
object of conditions and a url. Both say "every condition must match, the first rule that
matches wins", and Shlink's priority is our order. Each Shlink condition type is one of our
conditions:

| Shlink `type` | ours |
|---|---|
| `device` `mobile`, `desktop` (and our `tablet`) | `device` |
| `device` `android`, `ios`, `windows`, `macos`, `linux`, `chromeos` | `os` (iOS, Android, …) |
| `language` | `language` |
| `query-param` (matchKey, matchValue) | `query` {key: value} |
| `any-value-query-param` (matchKey) | `query` {key: null} |
| `valueless-query-param` (matchKey) | `query` {key: ""} |
| `ip-address` | `ip` (a wildcard such as `1.2.3.*` comes back as `1.2.3.0/24`) |
| `geolocation-country-code`, `geolocation-city-name` | `country`, `city` |
| `after-date`, `before-date` | `after`, `before` |

so what both express goes both ways unchanged (but for that one spelling of each value), and a
GET's rules posted back store the same rules. What ours cannot hold is refused with Shlink's
invalid-data problem, never dropped: a `browser` condition, two conditions that would fill the
same one of ours (two countries; `android` and `ios`), and what the service refuses (an
`en-US` language: ours match the language only; a wildcard in the middle of an address). This
module only translates: links.services.targeting checks every value, through link_update.

A link's app deep links (ios_url, android_url; issue #28) have no field in Shlink 5, whose
per-link `deviceLongUrls` went with 4.0 in favour of device rules. A GET shows them as what they
are to a visitor: device-only rules (`ios`, `android`) after the link's own rules, lowest
priority, as our redirect tries rules first, then the app link for the visitor's OS, then the
long URL. A POST of rules recognises them again, so that a client posting back what it read
neither duplicates them nor has them refused (an app's own scheme is no URL a rule may hold):
trailing rules with one `device` condition, `ios` or `android`, whose longUrl is that OS's app
link as stored, are the app links and are not stored as rules. A POST never changes the app
links themselves (the native API, the Bitly layer, the forms do): one left out stays, and an
edited trailing rule is stored as a rule of ours, which comes first for that OS's visitors.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.core.exceptions import ValidationError

from compat.shlink.problems import InvalidArgument
from compat.shlink.shapes import atom
from links.models import UrlLink
from links.services.targeting import CONDITIONS, MAX_RULES, OS_NAMES

FIELD = "redirectRules"
# Shlink's device names → (our condition, its value). `tablet` is ours alone: listed so that a
# rule made here comes back unchanged when a client posts what it read.
DEVICES = {
    **{name.lower(): ("os", name) for name in OS_NAMES},
    "mobile": ("device", "mobile"),
    "desktop": ("device", "desktop"),
    "tablet": ("device", "tablet"),
}
_SHLINK_DEVICE = {ours: shlink for shlink, ours in DEVICES.items()}
# Condition types whose value is one of ours as it is.
_PLAIN = {
    "language": "language",
    "ip-address": "ip",
    "geolocation-country-code": "country",
    "geolocation-city-name": "city",
    "after-date": "after",
    "before-date": "before",
}
_SHLINK_PLAIN = {ours: shlink for shlink, ours in _PLAIN.items()}
# The query types: what each wants of the parameter's value.
_QUERY = ("query-param", "any-value-query-param", "valueless-query-param")
# In Shlink's order (its RedirectConditionType).
SUPPORTED = (
    "device",
    "language",
    *_QUERY,
    "ip-address",
    "geolocation-country-code",
    "geolocation-city-name",
    "before-date",
    "after-date",
)
# Shlink's types that no condition of ours can match yet.
UNSUPPORTED = {"browser": "the visitor's browser"}
_OUR_ITEM = re.compile(r"rules\[(?P<index>\d+)\](?:\.(?P<key>\w+))?: (?P<text>.*)", re.S)


def _condition(type_: str, value, key=None) -> dict:
    return {"type": type_, "matchKey": key, "matchValue": value}


def _conditions(rule: dict) -> list[dict]:
    """A stored rule's conditions as Shlink's, in our order of conditions."""
    conditions = []
    for name in CONDITIONS:
        value = rule.get(name)
        if value is None:
            continue
        if name in ("device", "os"):
            conditions.append(_condition("device", _SHLINK_DEVICE[(name, value)]))
        elif name == "query":
            # By name: the same order whatever the database did to the object's keys (MySQL
            # sorts a JSON object's keys its own way).
            for key, wanted in sorted(value.items()):
                if wanted is None:
                    conditions.append(_condition("any-value-query-param", None, key))
                elif wanted == "":
                    conditions.append(_condition("valueless-query-param", None, key))
                else:
                    conditions.append(_condition("query-param", wanted, key))
        elif name in ("after", "before"):
            conditions.append(_condition(_SHLINK_PLAIN[name], _atom(value)))
        else:
            conditions.append(_condition(_SHLINK_PLAIN[name], value))
    return conditions


def _atom(stored: str) -> str:
    """A stored moment ("2026-05-01T07:00:00Z") as Shlink writes dates (`+00:00`)."""
    return atom(datetime.fromisoformat(stored)) or ""


# The app-link fields as Shlink's device names, in the order a GET lists them.
APP_DEVICES = (("ios", "ios_url"), ("android", "android_url"))


def _app_rules(link: UrlLink) -> list[dict]:
    """The link's app deep links as our rules would hold them (see the module's docstring)."""
    return [
        {"os": DEVICES[device][1], "url": getattr(link, field)}
        for device, field in APP_DEVICES
        if getattr(link, field)
    ]


def answer(link: UrlLink) -> dict:
    """The body of both routes: the link's long URL and its rules, by priority, its app links
    last."""
    rules = [*(link.rules or ()), *_app_rules(link)]
    return {
        "defaultLongUrl": link.long_url,
        FIELD: [
            {"longUrl": rule["url"], "priority": index + 1, "conditions": _conditions(rule)}
            for index, rule in enumerate(rules)
        ],
    }


def without_app_links(rules: list[dict], link: UrlLink) -> list[dict]:
    """`rules` (from_shlink's) less the trailing ones that are `link`'s app links as a GET shows
    them: an `ios` or `android` condition alone, each OS's once, its URL as stored."""
    app_urls = {rule["os"]: rule["url"] for rule in _app_rules(link)}
    kept = list(rules)
    while kept and set(kept[-1]) == {"os", "url"}:
        last = kept[-1]
        if app_urls.get(last["os"]) != last["url"].strip():
            break
        del app_urls[last["os"]]
        kept.pop()
    return kept


class _Places:
    """Where each of our rule's conditions came from in the Shlink body, so that the service's
    "rules[1].ip: …" is told as "redirectRules[1].conditions[0].matchValue: …"."""

    def __init__(self) -> None:
        self.conditions: dict[tuple[int, str], int] = {}

    def path(self, index: int, key: str | None) -> str:
        where = f"{FIELD}[{index}]"
        if key == "url":
            return f"{where}.longUrl"
        if key is None:
            return f"{where}.conditions"
        position = self.conditions.get((index, key))
        return f"{where}.conditions" if position is None else f"{where}.conditions[{position}]"


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def _rule(index: int, item, places: _Places, problems: list[str]) -> dict:
    """One Shlink rule as ours (its values unchecked: the service's job), noting any problem."""
    where = f"{FIELD}[{index}]"
    if not isinstance(item, dict):
        problems.append(f"{where}: give each rule as an object with longUrl and conditions.")
        return {}
    rule: dict = {}
    long_url = item.get("longUrl")
    if not isinstance(long_url, str) or not long_url.strip():
        problems.append(f"{where}.longUrl: give the URL this rule sends visitors to.")
    else:
        rule["url"] = long_url
    conditions = item.get("conditions")
    if not isinstance(conditions, list):
        problems.append(f"{where}.conditions: give the conditions as a list.")
        return rule
    for position, condition in enumerate(conditions):
        here = f"{where}.conditions[{position}]"
        if not isinstance(condition, dict):
            problems.append(f"{here}: give each condition as {{type, matchKey, matchValue}}.")
            continue
        type_ = condition.get("type")
        key, value = condition.get("matchKey"), condition.get("matchValue")
        if type_ in UNSUPPORTED:
            problems.append(
                f"{here}.type: conditions on {UNSUPPORTED[type_]} (“{type_}”) are not "
                f"supported here; use {', '.join(SUPPORTED)}."
            )
            continue
        if type_ not in SUPPORTED:
            problems.append(
                f"{here}.type: “{type_}” is not a condition type; use one of "
                f"{', '.join(SUPPORTED)}."
            )
            continue
        if type_ in _QUERY:
            # Shlink keeps the parameter in matchKey; its importer once read matchValue.
            name = _text(key) if type_ == "query-param" else _text(key) or _text(value)
            if not name:
                problems.append(f"{here}.matchKey: give the query parameter's name.")
                continue
            if type_ == "query-param":
                if not _text(value):
                    problems.append(f"{here}.matchValue: give the value “{name}” must have.")
                    continue
                wanted = value
            else:
                wanted = None if type_ == "any-value-query-param" else ""
            query = rule.setdefault("query", {})
            if name in query:
                problems.append(f"{here}.matchKey: “{name}” has a condition already in this rule.")
                continue
            query[name] = wanted
            places.conditions.setdefault((index, "query"), position)
            continue
        if value is None:
            problems.append(f"{here}.matchValue: give the value to match.")
            continue
        if type_ == "device":
            if not isinstance(value, str) or value.lower() not in DEVICES:
                problems.append(
                    f"{here}.matchValue: “{value}” is not a device; use one of "
                    f"{', '.join(DEVICES)}."
                )
                continue
            ours, value = DEVICES[value.lower()]
        else:
            ours = _PLAIN[type_]
        if ours in rule:
            kind = "device or OS" if type_ == "device" else type_
            problems.append(
                f"{here}: this rule has a {kind} condition already; here a rule holds one "
                f"(give another rule for another value)."
            )
            continue
        rule[ours] = value
        places.conditions[(index, ours)] = position
    return rule


def from_shlink(body) -> tuple[list[dict], _Places]:
    """Our rules from a Shlink body ({"redirectRules": [...]}), in priority order (the order
    given, as Shlink numbers them; a `priority` sent is ignored, as Shlink ignores it), and where
    each came from. InvalidArgument for what we cannot hold or read."""
    rules = body.get(FIELD) if isinstance(body, dict) else None
    if not isinstance(rules, list):
        raise InvalidArgument({FIELD: [f"{FIELD}: give the rules as a list ([] for none)."]})
    if len(rules) > MAX_RULES:
        raise InvalidArgument({FIELD: [f"{FIELD}: a short URL has at most {MAX_RULES} rules."]})
    places, problems = _Places(), []
    ours = [_rule(index, item, places, problems) for index, item in enumerate(rules)]
    if problems:
        raise InvalidArgument({FIELD: problems})
    return ours, places


def shlink_problems(error: ValidationError, places: _Places) -> dict[str, list[str]]:
    """The service's refusal of our rules in Shlink's terms: {"redirectRules": [messages]}, each
    naming the Shlink rule and condition ("redirectRules[1].conditions[0]: …")."""
    if not hasattr(error, "error_dict"):
        return {FIELD: list(error.messages)}
    problems = []
    for field, messages in error.message_dict.items():
        for message in messages:
            found = _OUR_ITEM.fullmatch(message) if field == "rules" else None
            if found is None:
                problems.append(message.replace("rules: ", f"{FIELD}: ", 1))
                continue
            path, text = places.path(int(found["index"]), found["key"]), found["text"]
            if found["key"] is None and text.startswith("give at least one of"):
                # Our names for the conditions would mean nothing to a Shlink client.
                text = f"give at least one condition, of {', '.join(SUPPORTED)}."
            problems.append(f"{path}: {text}")
    return {FIELD: problems}
