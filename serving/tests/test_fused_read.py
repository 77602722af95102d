"""The redirect's cache read and visit push in one Redis call (serving/fused_read.py)."""

import pytest

from analytics.capture import VISITS_KEY
from core.redis_conn import live_redis_client
from links.cache import LinkEntry, entry_key
from links.tests.helpers import GATED_ENTRY
from serving.fused_read import fetch_and_record

pytestmark = pytest.mark.django_db


def test_an_active_gated_link_is_never_counted_by_the_fused_push(requires_redis):
    """With Redis, the cache read and the visit push are one Lua call; it must leave a gated link's
    click alone (the gate decides whether it counts), yet still count a plain one."""
    client = live_redis_client()
    meta = {"REQUEST_METHOD": "GET", "REMOTE_ADDR": "203.0.113.9", "HTTP_USER_AGENT": "x"}
    plain = LinkEntry("Plain12", 8, "https://example.com/", 302, None, False)
    pushed = []
    for entry in (GATED_ENTRY, plain):
        client.set(entry_key(entry.code), entry.serialize())
        before = client.llen(VISITS_KEY)
        read, recorded = fetch_and_record(entry.code, meta, "event-" + entry.code)
        client.delete(entry_key(entry.code))
        if client.llen(VISITS_KEY) > before:
            pushed.append(client.rpop(VISITS_KEY).decode())  # links 7 and 8 exist nowhere else
        assert read == entry
        assert recorded is (entry is plain)
    assert len(pushed) == 1
    assert pushed[0].startswith('{"l":8,')
