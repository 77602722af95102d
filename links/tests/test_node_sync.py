"""Services mode with SHORTURL_LOCAL_REDIRECTS (the default): redirects answered from the web
process's own memory, visits spooled and forwarded, other nodes' changes applied by the runner.

"Another node" is a separate process with its own NODE_STATE_DIR, as in production: it shares
only the database and Redis with the node under test.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from analytics import buffer, capture, services, spool
from analytics.models import VisitRecord
from core.node_state import generations, node_lock
from core.redis_conn import redis_client, reset_redis_state
from links import cache as link_cache
from links.services.create import link_create
from links.tests.helpers import database_url, redis_calls

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _local_redirects(requires_redis, settings):
    settings.SHORTURL_LOCAL_REDIRECTS = True
    settings.NODE_SYNC_MAX_LAG = 60.0  # the test decides when the node syncs
    link_cache.forget_sync_position()
    redis_client().delete(link_cache.CHANGES_KEY, link_cache.CHANGES_EPOCH_KEY, buffer.VISITS_KEY)
    link_cache.apply_remote_changes()
    yield
    link_cache.forget_sync_position()


def run_on_another_node(tmp_path, script: str) -> str:
    """Run `script` (Django shell code) in a separate process with its own node state: only the
    database and Redis are shared, as between two servers. Returns what it printed."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "NODE_STATE_DIR": str(tmp_path / "other-node"),
        "SHOW_DEV_WARNING": "0",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def _on_another_node(tmp_path, code: str) -> None:
    """Revoke `code` through another node."""
    run_on_another_node(
        tmp_path,
        "from links.models import UrlLink\n"
        "from links.services.change import link_revoke\n"
        f"link = UrlLink.objects.get(code={code!r})\n"
        "link_revoke(code=link.code, user=link.owner)\n",
    )


def test_a_cached_redirect_asks_redis_nothing_and_its_visit_is_forwarded_then_stored(user):
    link = link_create(user=user, long_url="https://example.com/local").link
    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 302  # fills this process's entry
    calls_before = redis_calls("evalsha") + redis_calls("rpush")
    for _ in range(5):
        response = browser.get(f"/{link.code}")
        assert response.status_code == 302
        assert response["Location"] == "https://example.com/local"
    assert redis_calls("evalsha") + redis_calls("rpush") == calls_before
    # The first click read the link from the database (nothing was cached), so its visit was
    # spooled like the others rather than pushed by the Lua call.
    assert spool.pending_visits() == 6

    assert capture.forward_spooled_visits() == 6
    assert spool.pending_visits() == 0
    while services.flush_pending():
        pass
    assert VisitRecord.objects.filter(link=link).count() == 6


def test_a_revoke_on_another_node_is_seen_once_this_node_syncs(user, tmp_path):
    link = link_create(user=user, long_url="https://example.com/revoked-elsewhere").link
    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 302
    _on_another_node(tmp_path, link.code)
    # This node has not read the change yet: within NODE_SYNC_MAX_LAG it may still redirect.
    assert browser.get(f"/{link.code}").status_code == 302
    assert link_cache.apply_remote_changes() >= 1
    assert browser.get(f"/{link.code}").status_code == 410


def test_a_node_that_has_not_synced_lately_asks_redis_on_every_redirect(user, tmp_path, settings):
    link = link_create(user=user, long_url="https://example.com/stale-node").link
    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 302
    _on_another_node(tmp_path, link.code)
    settings.NODE_SYNC_MAX_LAG = 0.0  # the runner is late (or dead): its entries are not trusted
    assert browser.get(f"/{link.code}").status_code == 410


def test_a_sync_time_from_before_a_reboot_is_not_trusted(user, tmp_path):
    """The state dir outlives a reboot, and the monotonic clock starts again near zero: a sync
    time ahead of the clock was written in the last boot, so the node asks Redis on every
    redirect until its sync has run in this one."""
    link = link_create(user=user, long_url="https://example.com/before-the-reboot").link
    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 302  # kept in this process
    _on_another_node(tmp_path, link.code)  # revoked elsewhere while this node was down
    generations().mark_synced(time.monotonic() + 3600)  # the last boot's clock ran further
    assert browser.get(f"/{link.code}").status_code == 410


def test_redis_losing_the_change_stream_makes_every_process_read_again(user):
    link = link_create(user=user, long_url="https://example.com/before").link
    browser = Client()
    assert browser.get(f"/{link.code}")["Location"] == "https://example.com/before"
    # A Redis restart without persistence: the stream, its epoch and the entries are gone, and
    # the row changed meanwhile (its change notice died with the stream).
    redis_client().delete(
        link_cache.CHANGES_KEY,
        link_cache.CHANGES_EPOCH_KEY,
        link_cache.entry_key(link.code),
    )
    type(link).objects.filter(pk=link.pk).update(long_url="https://example.com/after")
    link_cache.apply_remote_changes()
    assert browser.get(f"/{link.code}")["Location"] == "https://example.com/after"


def test_unknown_aliases_are_answered_from_memory(user, django_assert_num_queries):
    link_create(user=user, long_url="https://example.com/a", alias="spring-sale")
    browser = Client()
    assert browser.get("/spring-sale").status_code == 302
    assert browser.get("/not-an-alias-0").status_code == 404  # loads this process's alias set
    calls_before = redis_calls("evalsha") + redis_calls("sismember")
    with django_assert_num_queries(0):
        for n in range(1, 20):
            assert browser.get(f"/not-an-alias-{n}").status_code == 404
    assert redis_calls("evalsha") + redis_calls("sismember") == calls_before
    # An alias created afterwards is found (its creation bumps this node's alias counter).
    link_create(user=user, long_url="https://example.com/b", alias="not-an-alias-7")
    assert browser.get("/not-an-alias-7").status_code == 302


def test_visits_wait_in_the_spool_while_redis_is_down(user, settings):
    link = link_create(user=user, long_url="https://example.com/down").link
    browser = Client()
    browser.get(f"/{link.code}")
    browser.get(f"/{link.code}")
    live = settings.CACHES
    settings.CACHES = {
        "default": {**live["default"], "LOCATION": "redis://127.0.0.1:1/0"},
    }
    try:
        assert capture.forward_spooled_visits() == 0  # refused: kept
    finally:
        settings.CACHES = live
    assert spool.pending_visits() == 2
    reset_redis_state()
    assert capture.forward_spooled_visits() == 2
    while services.flush_pending():
        pass
    assert VisitRecord.objects.filter(link=link).count() == 2


def test_a_batch_no_replica_confirmed_stays_in_the_spool_and_is_stored_once(user, settings):
    # This Redis has no replica: with one required, every push is pushed (the master holds it)
    # but not confirmed, so the node keeps the batch; once confirmation is not asked for, the
    # batch goes again and the two copies on the buffer make one stored visit each.
    link = link_create(user=user, long_url="https://example.com/unreplicated").link
    browser = Client()
    browser.get(f"/{link.code}")
    browser.get(f"/{link.code}")
    settings.REDIS_WAIT_REPLICAS, settings.REDIS_WAIT_MS = 1, 50
    assert capture.forward_spooled_visits() == 0
    assert spool.pending_visits() == 2
    settings.REDIS_WAIT_REPLICAS = 0
    reset_redis_state()
    assert capture.forward_spooled_visits() == 2
    assert spool.pending_visits() == 0
    while services.flush_pending():
        pass
    assert VisitRecord.objects.filter(link=link).count() == 2


def test_a_caller_with_a_deadline_does_not_wait_out_the_runners_forwarding(user):
    # A conversion report forwards the spool itself when its click is not stored yet; while
    # the node's runner holds the spool, the report gives up at its deadline instead of
    # waiting for as long as the runner takes.
    link = link_create(user=user, long_url="https://example.com/busy").link
    Client().get(f"/{link.code}")
    with node_lock(spool.SPOOL_LOCK):  # the runner, forwarding
        asked = time.monotonic()
        assert capture.forward_spooled_visits(deadline=asked + 0.2) == 0
        assert time.monotonic() - asked < 1.0
    assert spool.pending_visits() == 1  # left for the runner, nothing lost
    assert capture.forward_spooled_visits() == 1


def test_a_waiting_sync_applies_a_change_as_soon_as_another_node_writes_it(user):
    """The sync thread's read waits on the stream: a change made elsewhere while it waits is
    applied when it is written, not at the end of the wait."""
    link = link_create(user=user, long_url="https://example.com/waiting").link
    before = generations().read(link.code)
    result: dict[str, int] = {}
    sync = threading.Thread(
        target=lambda: result.update(read=link_cache.apply_remote_changes(wait=60.0))
    )
    sync.start()
    time.sleep(0.2)  # let it block on the stream
    redis_client().xadd(link_cache.CHANGES_KEY, {"c": link.code})  # another node's notice
    sync.join(30)
    assert not sync.is_alive(), "the sync kept waiting after a change was written"
    assert result["read"] == 1
    assert generations().read(link.code) > before
