"""UTM parameters: merged into a long URL's query by one function for the API, forms and bulk."""

from __future__ import annotations

from urllib.parse import quote, unquote_plus

from django.core.exceptions import ValidationError

from links.services.policy import is_storable_text

UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
UTM_MAX_LENGTH = 200


def clean_utm(utm: dict | None) -> dict[str, str]:
    """The UTM values to merge, trimmed, empty ones left out (an empty field means "not given",
    as a blank form field does). ValidationError({"utm_…": [reason]}) per refused value."""
    values: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    for name in UTM_FIELDS:
        value = (utm or {}).get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            errors[name] = ["Enter text."]
            continue
        value = value.strip()
        if not value:
            continue
        if len(value) > UTM_MAX_LENGTH:
            errors[name] = [f"Keep it to {UTM_MAX_LENGTH} characters or fewer."]
        elif not is_storable_text(value) or "\x00" in value:
            errors[name] = ["This value holds characters that are not text."]
        else:
            values[name] = value
    if errors:
        raise ValidationError(errors)
    return values


def merge_utm(long_url: str, utm: dict[str, str]) -> str:
    """`long_url` with the UTM values (clean_utm's) in its query.

    The existing query is kept as written (its order and its encoding); a given key replaces
    the same key where it first stands (later repeats of it are dropped); new keys follow, in
    UTM_FIELDS order; the #fragment stays last.
    """
    if not utm:
        return long_url
    url, hash_mark, fragment = long_url.partition("#")
    base, _, query = url.partition("?")
    segments: list[str] = []
    placed: set[str] = set()
    for segment in query.split("&") if query else []:
        key = unquote_plus(segment.partition("=")[0])
        if key in utm:
            if key not in placed:
                segments.append(f"{key}={quote(utm[key], safe='')}")
                placed.add(key)
            continue
        segments.append(segment)
    for key in UTM_FIELDS:
        if key in utm and key not in placed:
            segments.append(f"{key}={quote(utm[key], safe='')}")
    return f"{base}?{'&'.join(segments)}{hash_mark}{fragment}"


def utm_in_url(long_url: str) -> dict[str, str]:
    """The UTM values `long_url`'s query holds (merge_utm's reading of it: a key's first
    occurrence counts; `+` and %-escapes decoded), e.g. for the edit form's builder."""
    query = long_url.partition("#")[0].partition("?")[2]
    values: dict[str, str] = {}
    for segment in query.split("&") if query else []:
        key, _, value = segment.partition("=")
        key = unquote_plus(key)
        if key in UTM_FIELDS and key not in values:
            values[key] = unquote_plus(value)
    return values
