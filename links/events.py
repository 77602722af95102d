"""What happened to links, for whoever listens (the webhooks app subscribes): announced once the
change has committed, so a listener never hears of a change that was rolled back.

links knows no listener: this module is the whole of its side. A listener that fails is logged
and never undoes or fails the change itself.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger("links.events")

LINK_CREATED = "link.created"
LINK_UPDATED = "link.updated"
LINK_REVOKED = "link.revoked"
# A link's destination health changed (links.services.health): broken, then recovered.
LINK_BROKEN = "link.broken"
LINK_RECOVERED = "link.recovered"

# Sent with event=<one of the above>, links=[UrlLink, …].
link_changed = Signal()


def _send(event: str, links: list) -> None:
    for receiver, error in link_changed.send_robust(sender=None, event=event, links=links):
        if isinstance(error, Exception):
            logger.error("A listener of %s (%r) failed", event, receiver, exc_info=error)


def announce_after_commit(event: str, links: Iterable) -> None:
    """Tell the listeners about `links` once the current transaction commits (at once outside
    one)."""
    links = list(links)
    if links:
        transaction.on_commit(lambda: _send(event, links))
