"""The rules of a link's gates that every entry point shares (API, forms, admin, bulk): its
password and its visit cap. The redirect side of them is serving/gates.py."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError

from links.models import UrlLink
from links.visit_caps import live_counts

PASSWORD_MIN_LENGTH = 4
PASSWORD_MAX_LENGTH = 128
# A cap stored in an unsigned 32-bit column (PositiveIntegerField on MariaDB).
MAX_VISITS_LIMIT = 2_000_000_000


def check_password_rules(password: str | None) -> str:
    """`password` as given ("" for None: no password), or ValidationError({"password":
    [reason]}). Not trimmed: a space is as much a part of a password as any character."""
    if password is None or password == "":
        return ""
    if not isinstance(password, str):
        raise ValidationError({"password": ["Enter the password as text."]})
    if len(password) < PASSWORD_MIN_LENGTH:
        raise ValidationError(
            {"password": [f"Passwords need at least {PASSWORD_MIN_LENGTH} characters."]}
        )
    if len(password) > PASSWORD_MAX_LENGTH:
        raise ValidationError(
            {"password": [f"Passwords can be at most {PASSWORD_MAX_LENGTH} characters."]}
        )
    if "\x00" in password:
        raise ValidationError({"password": ["Passwords cannot hold a NUL character."]})
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            {"password": ["This password holds characters that are not text."]}
        ) from None
    return password


def hash_password(password: str, *, hashed: dict[str, str] | None = None) -> str:
    """What is stored and cached for a checked password: Django's hash ("" for none), never
    the password itself. Costs ~0.3 s of CPU (PBKDF2 at Django's iterations).

    `hashed`: the hashes one call has made so far, by password. A bulk call giving its links
    one password then pays for one hash, not one per link (1,000 links: 0.3 s, not 5 min).
    Those links share a salt, which tells only that they share the password their owner gave
    them; the hash is as hard to reverse as ever.
    """
    if not password:
        return ""
    if hashed is None:
        return make_password(password)
    if password not in hashed:
        hashed[password] = make_password(password)
    return hashed[password]


def validate_password(password: str | None) -> str:
    """The hash to store for `password` ("" for None or "": no password), or ValidationError."""
    return hash_password(check_password_rules(password))


def validate_max_visits(max_visits: int | None) -> int | None:
    """The cap to store (None: uncapped), or ValidationError({"max_visits": [reason]})."""
    if max_visits is None or max_visits == "":
        return None
    if isinstance(max_visits, bool) or not isinstance(max_visits, int):
        raise ValidationError({"max_visits": ["Enter a whole number of visits, 1 or more."]})
    if max_visits < 1:
        raise ValidationError(
            {"max_visits": ["A visit cap must be at least 1 (leave it empty for no cap)."]}
        )
    if max_visits > MAX_VISITS_LIMIT:
        raise ValidationError({"max_visits": [f"A visit cap can be at most {MAX_VISITS_LIMIT:,}."]})
    return max_visits


def visits_used(link: UrlLink) -> int:
    """How many of its visits people have taken: the live counter (links.visit_caps), which
    the link row's `visits_used` follows a few seconds behind."""
    if link.max_visits is None:
        return link.visits_used
    return live_counts({link.pk: link.visits_used})[link.pk]


def capped_visits_used(links: Iterable[UrlLink]) -> dict[int, int]:
    """visits_used of each capped link of `links`, {link id: used}, read together (one MGET, or
    the node's files), for a page that shows many."""
    return live_counts({link.pk: link.visits_used for link in links if link.max_visits is not None})


def visits_left(link: UrlLink, *, used: int | None = None) -> int | None:
    """How many more people the link lets through; None when it has no cap. `used`: its
    visits_used when already read (capped_visits_used)."""
    if link.max_visits is None:
        return None
    return max(0, link.max_visits - (visits_used(link) if used is None else used))
