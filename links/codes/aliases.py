"""Custom aliases chosen by marketers: allowed characters, lengths and reserved words. Pure."""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

from links.codes.shape import code_length, is_generated_shape

ALIAS_MAX_LENGTH = 32
ALIAS_RE = re.compile(rf"^[A-Za-z0-9_-]{{3,{ALIAS_MAX_LENGTH}}}$")
RESERVED_ALIASES = frozenset(
    {
        "admin",
        "api",
        "static",
        "media",
        "dashboard",
        "accounts",
        "account",
        "login",
        "logout",
        "healthz",
        "health",
        "robots",
        "favicon",
        "docs",
        "schema",
        "links",
        "link",
        "new",
        "help",
        "about",
        "settings",
        "bulk",  # /api/v1/links/bulk/ would hide a link with this alias from the API
        "rest",  # the Shlink-compatible API lives under /rest/ (compat.shlink)
        "workspaces",  # the workspace pages (workspaces.urls)
        "workspace",
    }
)


def validate_alias(alias: str) -> None:
    if not ALIAS_RE.match(alias):
        raise ValidationError({"alias": ["Use 3 to 32 characters: letters, digits, '-' and '_'."]})
    if alias.lower() in RESERVED_ALIASES:
        raise ValidationError({"alias": [f"“{alias}” is reserved; please choose another."]})
    if is_generated_shape(alias):
        # Generated codes own this shape, so the redirect can refuse a mistyped one on its
        # check character alone, without asking the database.
        raise ValidationError(
            {
                "alias": [
                    f"Aliases of exactly {code_length()} letters and digits are kept for "
                    "generated codes; use another length or add '-' or '_'."
                ]
            }
        )
