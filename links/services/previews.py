"""The rules of a link's social preview (issue #28): what a link-preview fetcher is shown.

`og_title`, `og_description` and `og_image` go into the Open Graph and Twitter Card tags of
the page serving/gates.py answers a preview fetcher with (analytics.bots.is_link_preview);
people still get the redirect. Every channel (API, form, admin, bulk, imports) calls
`validate_preview`, so none of them can store what another would refuse.

- the title: at most 200 characters, the description at most 500 (what the columns hold;
  Facebook and X cut shorter anyway), trimmed, text only (no NUL, no lone surrogate);
- the image: an https URL (a preview fetched over http is refused by several apps, and the
  page that shows it is https), through the one long-URL policy (links/services/policy.py:
  LongUrlRules: no local address, not this service's own hosts, the blocked and allowed
  domains, the length limit, IDNA).

The destination's own tags are not fetched: a link with none of these set answers fetchers with
the redirect, as before, and they read the destination's page themselves.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from links.models import UrlLink
from links.services.policy import LongUrlRules, is_storable_text

PREVIEW_FIELDS = ("og_title", "og_description", "og_image")
OG_TITLE_MAX = UrlLink._meta.get_field("og_title").max_length
OG_DESCRIPTION_MAX = UrlLink._meta.get_field("og_description").max_length


def _text(field: str, value: str | None, limit: int, what: str) -> str:
    value = (value or "").strip()
    if len(value) > limit:
        raise ValidationError({field: [f"The preview {what} can be at most {limit} characters."]})
    if not is_storable_text(value):
        raise ValidationError({field: [f"This preview {what} holds characters that are not text."]})
    return value


def validate_og_title(value: str | None) -> str:
    return _text("og_title", value, OG_TITLE_MAX, "title")


def validate_og_description(value: str | None) -> str:
    return _text("og_description", value, OG_DESCRIPTION_MAX, "description")


def validate_og_image(value: str | None, *, url_rules: LongUrlRules) -> str:
    """The image URL to store ("" for none), or ValidationError({"og_image": [reason]})."""
    value = (value or "").strip()
    if not value:
        return ""
    if "://" in value and not value[:8].lower().startswith("https://"):
        raise ValidationError({"og_image": ["The preview image must be an https:// URL."]})
    try:
        # A bare host gets https:// from the policy (with_default_scheme), as a long URL does.
        return url_rules.check(value)
    except ValidationError as exc:
        raise ValidationError({"og_image": exc.message_dict["long_url"]}) from None


def validate_preview(
    *,
    url_rules: LongUrlRules,
    og_title=None,
    og_description=None,
    og_image=None,
    given: tuple[str, ...] = PREVIEW_FIELDS,
) -> dict[str, str]:
    """{field: value to store} for the preview fields in `given` (the others are left out), or
    ValidationError naming every field refused."""
    values = {"og_title": og_title, "og_description": og_description, "og_image": og_image}
    checks = {
        "og_title": validate_og_title,
        "og_description": validate_og_description,
        "og_image": lambda value: validate_og_image(value, url_rules=url_rules),
    }
    cleaned: dict[str, str] = {}
    errors: dict[str, list[str]] = {}
    for field in given:
        try:
            cleaned[field] = checks[field](values[field])
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    return cleaned
