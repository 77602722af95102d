"""`--base`, the short URLs' base of a file that leaves this install (export_links' export,
import_links' report): one check for every command that writes such a file, so none of them
writes site-relative short URLs (`/abc123`) of no use elsewhere. The URLs themselves are
links.shortlinks.short_url_for's, given the base."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.management.base import CommandError


def add_base_argument(parser, *, needed_for: str) -> None:
    parser.add_argument(
        "--base",
        default="",
        help=f"the short URLs' base, e.g. https://s.example.com/ (default: SHORT_URL_BASE; "
        f"needed when that is not set, so that {needed_for} carries full short URLs)",
    )


def checked_base(base: str, *, needed_for: str) -> str:
    """--base as given, once it is an http(s) URL with a host; "" when it is not given and
    SHORT_URL_BASE is set (links.shortlinks reads it). Without either, CommandError: the file
    (`needed_for`: "the export", "the report") would hold paths, not short URLs."""
    if not base:
        if settings.SHORT_URL_BASE:
            return ""
        raise CommandError(
            "SHORT_URL_BASE is not set: give the short URLs' base with --base "
            f"(e.g. --base https://s.example.com/) so that {needed_for} carries full short URLs."
        )
    try:
        parts = urlsplit(base)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # an unclosed [IPv6 address
        usable = False
    if not usable:
        raise CommandError(
            f"--base must be an http or https URL with a host, e.g. https://s.example.com/ "
            f"(not “{base[:200]}”)."
        )
    return base
