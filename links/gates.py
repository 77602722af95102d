"""The redirect of a gated link: one with a password, a visit cap, rules or variants.

Plain links never come here: their redirect is the fused read-and-count of links/redirect.py.
A gated link's cache entry carries everything needed (LinkEntry: the password's hash, the cap,
the rules and variants with their locations), so deciding costs no database query; its visit
is recorded here, once the click is known to go through and where it goes.

The order, for a GET (HEAD is answered the same way and never counted):
1. a password the visitor has not given → the unlock page (UNLOCK: Django's view answers it
   with its form; nothing is counted);
2. a visit cap reached → 410 (people's clicks use it up; bots never count);
3. the destination: the first rule whose every condition matches, else a variant picked for
   this visitor, else the long URL;
4. the visit, with the destination it got.
"""

from __future__ import annotations

from collections.abc import Mapping

from analytics.capture import record_visit

from .cache import LinkEntry

UNLOCK = 200  # the password form, answered by Django's view (CSRF, templates), not counted


def needs_password(entry: LinkEntry, meta: Mapping[str, str]) -> bool:
    """The link has a password and this request does not carry it."""
    raise NotImplementedError("passwords: see issue #15")


def cap_reached(entry: LinkEntry, meta: Mapping[str, str], *, counted: bool) -> bool:
    """The link's visit cap is used up (taking one of its visits when this click counts)."""
    raise NotImplementedError("visit caps: see issue #15")


def destination(entry: LinkEntry, meta: Mapping[str, str]) -> LinkEntry:
    """`entry` with the location this visitor goes to (a rule's, a variant's, or its own)."""
    if not entry.rules and not entry.variants:
        return entry
    raise NotImplementedError("rules and variants: see issue #15")


def decide(
    entry: LinkEntry, meta: Mapping[str, str], *, event_id: str, counted: bool
) -> tuple[int, LinkEntry | None]:
    """(status, entry to redirect to) for an active gated link, as links.redirect.resolve."""
    if entry.password_hash and needs_password(entry, meta):
        return UNLOCK, entry
    if entry.max_visits and cap_reached(entry, meta, counted=counted):
        return 410, None
    chosen = destination(entry, meta)
    if counted:
        record_visit(meta, chosen, event_id=event_id)
    return chosen.redirect_type, chosen
