"""Bitly's `deeplinks` on a bitlink, mapped onto a link's app deep links (ios_url, android_url;
issue #28).

Bitly keeps a registry of apps: a deeplink names one by `app_id` and gives `app_uri_path`, a
path inside it, whose scheme comes from the registered app; `install_url` / `install_type` say
what to do without the app. There is no app registry here, so:

- each item must say its `os` ("ios" or "android"), as Bitly's own answers do. An `app_id` is
  not read to guess it: a reverse-DNS bundle id and a package name look alike
  (com.example.shop is either);
- `app_uri_path` must be the whole URL to send that OS's visitors to: an app's own scheme
  (`exampleshop://product/7`) or a universal / App Link (`https://…`). A bare path has no
  knowable scheme and is refused (INVALID_ARG_DEEPLINKS), never guessed;
- `install_url` and `install_type` are accepted and ignored: the redirect cannot tell whether
  the app is installed (a universal link already opens the web page without it).

What the URL may be is links.services.app_links' call: its refusals come back as
INVALID_ARG_DEEPLINKS naming the item.
"""

from __future__ import annotations

from datetime import UTC

from django.core.exceptions import ValidationError

from links.models import UrlLink
from links.services.app_links import scheme_of

# Bitly's `os` values and the link field each one sets.
OS_FIELDS = {"ios": "ios_url", "android": "android_url"}
FIELD = "deeplinks"


def _refuse(message: str) -> ValidationError:
    return ValidationError({FIELD: [message]})


def deeplink_changes(value: object) -> dict[str, str]:
    """{ios_url, android_url} that a bitlink body's `deeplinks` list sets: each OS it names gets
    its item's app_uri_path, each it leaves out none (""). ValidationError({"deeplinks": …})
    for a list Bitly's shape does not allow or that says too little to map."""
    if not isinstance(value, list):
        raise _refuse("`deeplinks` is a list of {os, app_uri_path, …} objects.")
    changes = dict.fromkeys(OS_FIELDS.values(), "")
    seen: set[str] = set()
    for index, item in enumerate(value):
        where = f"deeplinks[{index}]"
        if not isinstance(item, dict):
            raise _refuse(f"{where} is not an object.")
        os_name = item.get("os")
        if os_name not in OS_FIELDS:
            raise _refuse(
                f'{where}.os: say "ios" or "android" (there is no app registry here to tell '
                "it from app_id)."
            )
        if os_name in seen:
            raise _refuse(f"{where}.os: one deeplink per OS ({os_name} is given twice).")
        seen.add(os_name)
        uri = item.get("app_uri_path")
        if not isinstance(uri, str) or not scheme_of(uri.strip()):
            raise _refuse(
                f"{where}.app_uri_path: give the whole URL with its scheme "
                "(exampleshop://product/7 or https://…): an app's scheme is not known here."
            )
        changes[OS_FIELDS[os_name]] = uri.strip()
    return changes


def as_deeplinks_refusal(error: ValidationError) -> ValidationError:
    """The services' refusal of ios_url / android_url under Bitly's field, naming the OS; other
    fields' refusals as they are."""
    if not hasattr(error, "error_dict"):
        return error
    renamed: dict[str, list[str]] = {}
    by_field = {field: os_name for os_name, field in OS_FIELDS.items()}
    for field, messages in error.message_dict.items():
        if field in by_field:
            renamed.setdefault(FIELD, []).extend(
                f"{by_field[field]} app_uri_path: {message}" for message in messages
            )
        else:
            renamed[field] = messages
    return ValidationError(renamed)


def deeplinks_of(link: UrlLink, bitlink_id: str, stamp) -> list[dict[str, str]]:
    """A link's app deep links as Bitly's bitlink shows `deeplinks` (no install fallback, no
    app registry ids: see the module's docstring)."""
    return [
        {
            "bitlink": bitlink_id,
            "os": os_name,
            "app_uri_path": url,
            "install_url": "",
            "install_type": "no_install",
            "created": stamp(link.created_at.astimezone(UTC)),
            "modified": stamp(link.updated_at.astimezone(UTC)),
        }
        for os_name, url in ((name, getattr(link, field)) for name, field in OS_FIELDS.items())
        if url
    ]
