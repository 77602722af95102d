"""Clicks just stored, for whoever listens (the webhooks app subscribes): announced once the
batch has committed, from the store path (a worker, the embedded runner), never from a redirect
that answers normally.

analytics knows no listener: this module is the whole of its side. A listener that fails is
logged and never undoes or fails the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction
from django.dispatch import Signal

logger = logging.getLogger("analytics.events")

# Sent with clicks=a callable returning [{"link_id", "code", "visit_time", "country",
# "country_code", "device_type", "referrer", "is_bot", "event_id"}, …]: built only when asked, so a
# store with nobody interested pays nothing for it.
visits_stored = Signal()


def _send(clicks: Callable[[], list[dict]]) -> None:
    for receiver, error in visits_stored.send_robust(sender=None, clicks=clicks):
        if isinstance(error, Exception):
            logger.error(
                "A listener of stored visits (%r) failed",
                receiver,
                exc_info=error,
            )


def announce_after_commit(clicks: Callable[[], list[dict]]) -> None:
    if visits_stored.has_listeners():
        transaction.on_commit(lambda: _send(clicks))
