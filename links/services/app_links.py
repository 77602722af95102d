"""App deep links (issue #28): a link's iOS and Android destinations, and a short domain's
app-association files. The one place that says what may be stored in them, for the API, the
forms, the admin, the bulk paths, the domains command and the Bitly layer.

A link's `ios_url` / `android_url` is one of
- a web address (a universal link or an Android app link: https, or http), checked by the
  long-URL rules as the long URL is (no loop, no local address, the domain lists);
- `mailto:`, `tel:`, `sms:`, or an app's own scheme (`myapp://item/7`, `fb://profile/42`,
  Android's `intent://…#Intent;…;end`), with something after the colon.
Refused whatever the OS: schemes that run or read something in the browser instead of opening
an app (`javascript:`, `data:`, `file:`, `vbscript:`, `blob:`, `about:`, `filesystem:`,
`view-source:`, `jar:`), text with spaces or control characters, and anything longer than the
long URL may be.

A domain's `apple_app_site_association` must be a JSON object (Apple's file: `applinks`,
`webcredentials`, `appclips`), its `assetlinks` a JSON array of Digital Asset Links statements
(each with a `relation` list and a `target` object), each at most 128 KB, Apple's limit.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from links.cache import app_location
from links.domains import WELL_KNOWN_PATHS
from links.services.policy import LongUrlRules, is_storable_text, validate_optional_url

APP_FIELDS = ("ios_url", "android_url")
# An RFC 3986 scheme, then its colon.
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
WEB_SCHEMES = frozenset({"http", "https"})
# Schemes whose URL does something in the browser itself (runs script, shows inline content,
# reads the visitor's files) rather than opening an app: a short link must never lead there.
REFUSED_SCHEMES = frozenset(
    {
        "javascript",
        "vbscript",
        "data",
        "file",
        "blob",
        "about",
        "filesystem",
        "view-source",
        "jar",
    }
)
# What the docs and the forms name as allowed besides web addresses.
NAMED_SCHEMES = ("mailto", "tel", "sms")
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
# Apple reads at most 128 KB of apple-app-site-association; the same bound for assetlinks.json.
ASSOCIATION_MAX_BYTES = 128 * 1024
ASSOCIATION_FIELDS = tuple(WELL_KNOWN_PATHS)


def scheme_of(url: str) -> str:
    """The scheme a URL starts with, lowercase ("" for none: `example.com/page`)."""
    match = _SCHEME.match(url)
    return match[1].lower() if match else ""


def validate_app_url(value: str | None, *, field: str, url_rules: LongUrlRules) -> str:
    """The `ios_url` or `android_url` to store ("" for none), or ValidationError({field:
    [reason]}) (see the module's docstring for what passes)."""
    url = (value or "").strip() if isinstance(value, str) or value is None else value
    if not isinstance(url, str):
        raise ValidationError({field: ["Give the URL as text."]})
    if not url:
        return ""

    def refuse(message: str) -> ValidationError:
        return ValidationError({field: [message]})

    if not is_storable_text(url) or _SPACE_OR_CONTROL.search(url):
        raise refuse("An app URL has no spaces or control characters; percent-encode them.")
    match = _SCHEME.match(url)
    scheme = match[1].lower() if match else ""
    if not scheme or scheme in WEB_SCHEMES:
        # A universal link (or a bare host, which gets https:// as a long URL does).
        return validate_optional_url(url, field=field, url_rules=url_rules)
    if scheme in REFUSED_SCHEMES:
        raise refuse(
            f"{scheme}: URLs are refused: they run or show something in the browser instead "
            f"of opening an app. Use an app's own scheme (myapp://…), a universal link "
            f"(https://…), or {', '.join(f'{name}:' for name in NAMED_SCHEMES)}."
        )
    if not url[match.end() :].strip("/"):
        raise refuse(f"Say what the {scheme}: URL opens, e.g. {scheme}://item/7.")
    if len(url) > url_rules.max_length or len(app_location(url)) > url_rules.max_length:
        raise refuse(f"URLs can be at most {url_rules.max_length} characters.")
    try:
        urlsplit(url)
    except ValueError:
        raise refuse("This is not a valid URL.") from None
    return match[1].lower() + url[len(scheme) :]


def validate_app_urls(
    *, url_rules: LongUrlRules, given: tuple[str, ...] = APP_FIELDS, **values: str | None
) -> dict[str, str]:
    """{field: value to store} for the app fields `given`, or ValidationError naming each
    field's problem."""
    cleaned: dict[str, str] = {}
    errors: dict[str, list] = {}
    for field in given:
        try:
            cleaned[field] = validate_app_url(values.get(field), field=field, url_rules=url_rules)
        except ValidationError as exc:
            errors.update(exc.error_dict)
    if errors:
        raise ValidationError(errors)
    return cleaned


def _statement_problem(index: int, statement) -> str | None:
    where = f"statement {index}"
    if not isinstance(statement, dict):
        return f"{where} is not an object."
    relation = statement.get("relation")
    if (
        not isinstance(relation, list)
        or not relation
        or not all(isinstance(item, str) for item in relation)
    ):
        return (
            f'{where} needs a "relation" list, e.g. ["delegate_permission/common.handle_all_urls"].'
        )
    target = statement.get("target")
    if not isinstance(target, dict) or not isinstance(target.get("namespace"), str):
        return f'{where} needs a "target" object with a "namespace", e.g. "android_app".'
    return None


def validate_association(value: str | None, *, field: str) -> str:
    """A domain's app-association file as stored ("" for none: the path answers 404), or
    ValidationError({field: [reason]}): JSON of the shape its platform reads, within the size
    Apple fetches. Kept as the owner wrote it (its spacing too), with the newlines a JSON file
    has (a textarea sends CRLF, HTML's form encoding; so may a file from Windows); served byte for
    byte."""
    text = (value or "").replace("\r\n", "\n").strip()
    if not text:
        return ""

    def refuse(message: str) -> ValidationError:
        return ValidationError({field: [message]})

    if not is_storable_text(text):
        raise refuse("This is not valid JSON.")
    size = len(text.encode())
    if size > ASSOCIATION_MAX_BYTES:
        raise refuse(
            f"The file can be at most {ASSOCIATION_MAX_BYTES // 1024} KB (this one has "
            f"{size:,} bytes)."
        )
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise refuse(f"This is not valid JSON: {exc}.") from None
    if field == "apple_app_site_association":
        if not isinstance(document, dict):
            raise refuse('apple-app-site-association is a JSON object, e.g. {"applinks": {…}}.')
        for section in ("applinks", "webcredentials", "appclips", "activitycontinuation"):
            if section in document and not isinstance(document[section], dict):
                raise refuse(f'Its "{section}" must be an object.')
    else:
        if not isinstance(document, list):
            raise refuse("assetlinks.json is a JSON array of statements, e.g. [{…}].")
        for index, statement in enumerate(document):
            problem = _statement_problem(index, statement)
            if problem:
                raise refuse(f"In assetlinks.json, {problem}")
    return text
