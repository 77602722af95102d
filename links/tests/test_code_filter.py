"""The node's code filter (links/cache/code_filter.py): a made-up code of the generated shape is a
404 with no lookup at all, and no link is ever refused by it.

The filter-level cases need no database. The redirect cases run in both suites: the embedded
node builds its filter from its runner, a services node from its sync (SHORTURL_LOCAL_REDIRECTS,
as in production; the test decides when the node syncs). "Another node" is a separate process
with its own NODE_STATE_DIR, or this process with another state dir, sharing only the database
and Redis.
"""

import os

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from redis.connection import AbstractConnection

from core.redis_conn import redis_client, reset_redis_state, uses_redis
from links import cache as link_cache
from links.cache import changes as cache_changes
from links.cache import code_filter, codesets
from links.codes import pool, shape
from links.services.create import link_create
from links.tests.factories import UrlLinkFactory
from links.tests.test_node_sync import _on_another_node, run_on_another_node

# Made-up codes no test creates: bodies starting "zz" (random codes could, once in 62^2 draws,
# but no filter built here holds more than a few hundred codes).
MADE_UP = [shape.with_check(f"zz{n:04d}") for n in range(2000)]


def _run_in_another_process(work) -> None:
    """Run `work()` in a forked child (another worker of this node) and wait for it."""
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        status = 1
        try:
            work()
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# --- The filter itself -------------------------------------------------------------------------


generated_codes = st.lists(
    st.text(alphabet=shape.BASE62, min_size=6, max_size=6).map(shape.with_check),
    max_size=300,
)


@hypothesis_settings(max_examples=30, deadline=None)
@given(codes=generated_codes)
def test_a_filter_holds_every_code_it_was_built_from_and_few_others(codes):
    code_filter.build(lambda: codes, expected=len(codes))
    built = code_filter.CodeFilter(code_filter.filter_path())
    assert all(built.may_contain(code) for code in codes)
    assert not any(code_filter.certainly_absent(code) for code in codes)
    others = [code for code in MADE_UP if code not in set(codes)]
    # Sized for 100,000 codes, a filter of at most 300 says "maybe" to almost nothing else.
    assert sum(built.may_contain(code) for code in others) <= len(others) // 100
    assert sum(code_filter.certainly_absent(code) for code in others) >= len(others) * 99 // 100


def test_only_generated_shapes_are_ever_called_absent():
    """Aliases are the alias set's business: the filter never answers for them."""
    code_filter.build(lambda: [], expected=0)
    assert code_filter.certainly_absent(MADE_UP[0])
    assert not code_filter.certainly_absent("spring-sale")
    assert not code_filter.certainly_absent(MADE_UP[0][:-1])  # one character short


def test_no_filter_or_an_incomplete_one_calls_nothing_absent():
    assert not code_filter.certainly_absent(MADE_UP[0])  # none built yet
    code_filter.build(lambda: [], expected=0)
    code_filter.mark_incomplete()
    assert not code_filter.certainly_absent(MADE_UP[0])


def test_codes_added_by_another_process_during_a_build_are_in_the_new_filter():
    """A build reads the database for a while; a create elsewhere meanwhile lands in the old
    file and in the build's journal, which the build replays before it puts the new file in
    place: the new code is not lost with the old file."""
    early, late = MADE_UP[0], MADE_UP[1]
    code_filter.build(lambda: [], expected=0)

    def read_codes():
        yield early
        _run_in_another_process(lambda: code_filter.add([late]))
        yield MADE_UP[2]

    code_filter.build(read_codes, expected=2)
    assert not code_filter.certainly_absent(late)
    assert not code_filter.certainly_absent(early)
    assert code_filter.certainly_absent(MADE_UP[3])
    assert not (code_filter.state_dir() / code_filter.JOURNAL_FILE).exists()


def test_a_build_that_an_add_could_not_note_in_its_journal_is_not_trusted(monkeypatch):
    """With the disk full, an add during a build cannot note its code: the new filter would
    lack it, so it is put in place marked incomplete (and lookups go on as without it)."""
    late = MADE_UP[1]
    code_filter.build(lambda: [], expected=0)

    def add_on_a_full_disk():
        def full(fd, data):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", full)
        code_filter.add([late])

    def read_codes():
        yield MADE_UP[0]
        _run_in_another_process(add_on_a_full_disk)

    assert code_filter.build(read_codes, expected=1).complete is False
    assert not code_filter.certainly_absent(late)
    assert not code_filter.certainly_absent(MADE_UP[2])  # nothing is refused by it


def test_a_process_holding_a_replaced_filter_reads_and_adds_to_the_new_one():
    """Another worker rebuilds the filter: this process, which has the old file mapped, reads
    the new one on its next lookup and adds to the new one, not to the replaced file."""
    in_new_build, added_after = MADE_UP[0], MADE_UP[1]
    code_filter.build(lambda: [], expected=0)
    assert code_filter.certainly_absent(in_new_build)  # the old file is mapped here now

    _run_in_another_process(lambda: code_filter.build(lambda: [in_new_build], expected=1))

    code_filter.add([added_after])  # before any lookup here: the add finds the new file itself
    assert code_filter.CodeFilter(code_filter.filter_path()).may_contain(added_after)
    assert not code_filter.certainly_absent(in_new_build)
    assert not code_filter.certainly_absent(added_after)


# --- The redirect, in the mode of the suite ----------------------------------------------------

# On-commit hooks run as in production: a create adds its code once committed.
database = pytest.mark.django_db(transaction=True)


@pytest.fixture
def node(settings):
    """This node with its filter built the way its mode builds it. Yields the node's background
    step that keeps the filter (the sync with Redis, the runner's filter job without)."""
    link_cache.forget_sync_position()
    if uses_redis():
        settings.SHORTURL_LOCAL_REDIRECTS = True
        settings.NODE_SYNC_MAX_LAG = 60.0  # the test decides when the node syncs
        redis_client().delete(link_cache.CHANGES_KEY, link_cache.CHANGES_EPOCH_KEY)
        step = link_cache.apply_remote_changes
    else:
        step = link_cache.ensure_code_filter
    step()
    assert code_filter.header().complete
    yield step
    link_cache.forget_sync_position()


@pytest.fixture
def redis_commands(monkeypatch):
    """Every command (or pipeline) this process sends to any Redis from here on."""
    sent = []
    send = AbstractConnection.send_packed_command

    def counted(self, command, check_health=True):
        sent.append(command)
        return send(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)
    return sent


def _lookups(redis_commands, code: str, *, head: bool = False) -> tuple[int, int, int]:
    """(status, database queries, Redis commands) of one redirect of `code`."""
    browser = Client()
    sent_before = len(redis_commands)
    with CaptureQueriesContext(connection) as queries:
        response = browser.head(f"/{code}") if head else browser.get(f"/{code}")
    return response.status_code, len(queries), len(redis_commands) - sent_before


@database
def test_a_made_up_code_is_404_with_no_query_and_no_redis_call(node, user, redis_commands):
    links = [link_create(user=user, long_url=f"https://example.com/{n}").link for n in range(3)]
    for code in MADE_UP[:20]:
        assert _lookups(redis_commands, code) == (404, 0, 0)
        assert _lookups(redis_commands, code, head=True) == (404, 0, 0)
    for link in links:
        assert Client().get(f"/{link.code}").status_code == 302

    # Without a complete filter the same kind of code is looked up as before (in Redis, or in
    # the database): the counts above would see it.
    code_filter.mark_incomplete()
    status, queries, commands = _lookups(redis_commands, MADE_UP[20])
    assert status == 404
    assert queries + commands > 0


@database
def test_a_code_asked_before_it_was_created_redirects_on_the_very_next_request(
    node, user, monkeypatch
):
    """Someone asks for a code the filter lacks (404), then a create on this node is handed
    that very code: the next click follows the new link."""
    code = MADE_UP[0]
    browser = Client()
    assert browser.get(f"/{code}").status_code == 404
    monkeypatch.setattr(pool, "pool_claim", lambda count: [code])
    created = link_create(user=user, long_url="https://example.com/fresh").link
    assert created.code == code
    response = browser.get(f"/{code}")
    assert (response.status_code, response["Location"]) == (302, "https://example.com/fresh")


@database
def test_a_restarted_node_builds_again_and_finds_links_that_came_another_way(
    node, user, monkeypatch
):
    """A row this node was never told about (a database restored from a backup while the node
    was down) is refused by a complete filter until the node starts again: its runner (or its
    sync, starting afresh) sets the old filter aside at once and builds a new one from the
    database."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/restored")
    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 404  # unknown to this node's filter

    during_the_build = []
    read_codes = codesets._generated_codes

    def read_codes_after_a_redirect():
        during_the_build.append(browser.get(f"/{link.code}").status_code)
        yield from read_codes()

    monkeypatch.setattr(codesets, "_generated_codes", read_codes_after_a_redirect)
    link_cache.forget_sync_position()  # the node's processes start again
    node()

    assert during_the_build == [302]  # looked up as without a filter, not refused by the old one
    assert browser.get(f"/{link.code}").status_code == 302
    assert browser.get(f"/{MADE_UP[0]}").status_code == 404


@database
def test_a_filter_deleted_under_a_running_node_stops_counting_and_is_built_again(node, user):
    browser = Client()
    assert browser.get(f"/{MADE_UP[0]}").status_code == 404  # this process maps the filter
    code_filter.filter_path().unlink()
    link = link_create(user=user, long_url="https://example.com/after-the-delete").link
    assert browser.get(f"/{link.code}").status_code == 302  # not refused by the unlinked copy
    node()
    assert code_filter.header().complete
    assert browser.get(f"/{link.code}").status_code == 302
    assert browser.get(f"/{MADE_UP[1]}").status_code == 404


@database
def test_a_filter_past_its_capacity_is_built_again_larger(node, user, monkeypatch, redis_commands):
    monkeypatch.setattr(code_filter, "MIN_CAPACITY", 4)
    link_cache.forget_sync_position()
    node()  # built again, sized for 4 codes
    assert code_filter.header().capacity == 4
    codes = iter(MADE_UP[100:])  # fixed codes: how many bits they share is no matter of luck
    monkeypatch.setattr(pool, "pool_claim", lambda count: [next(codes) for _ in range(count)])
    links = [link_create(user=user, long_url=f"https://example.com/{n}").link for n in range(8)]
    full = code_filter.header()
    assert full.added > full.capacity  # false positives climb past ~1 %

    node()

    rebuilt = code_filter.header()
    assert rebuilt.complete
    assert rebuilt.capacity == 2 * len(links)
    for link in links:
        assert Client().get(f"/{link.code}").status_code == 302
    assert _lookups(redis_commands, MADE_UP[0]) == (404, 0, 0)


# --- Services mode: other nodes ----------------------------------------------------------------


@database
def test_a_link_created_on_another_node_is_found_once_this_node_syncs(
    requires_redis, node, user, tmp_path, settings
):
    out = run_on_another_node(
        tmp_path,
        "from django.contrib.auth import get_user_model\n"
        "from links.services.create import link_create\n"
        f"user = get_user_model().objects.get(pk={user.pk})\n"
        "print(link_create(user=user, long_url='https://example.com/elsewhere').link.code)\n",
    )
    code = out.strip().splitlines()[-1]
    browser = Client()
    # Not read from the stream yet: refused, as any change is unseen until the next sync.
    assert browser.get(f"/{code}").status_code == 404
    link_cache.apply_remote_changes()
    assert browser.get(f"/{code}").status_code == 302


@database
def test_a_code_whose_notice_waited_for_redis_reaches_the_other_nodes_filters(
    requires_redis, node, user, tmp_path, settings, monkeypatch
):
    """A create on a node that could not reach Redis: its notice waits in that node's state
    until its sync sends it on the change stream, where this node's sync reads it."""
    here = settings.NODE_STATE_DIR
    settings.NODE_STATE_DIR = str(tmp_path / "creating-node")
    with monkeypatch.context() as paused:
        paused.setattr(cache_changes, "live_redis_client", lambda: None)
        link = link_create(user=user, long_url="https://example.com/waited").link
    reset_redis_state()
    assert link_cache.send_pending_changes(redis_client()) == 1  # that node's sync, Redis back
    settings.NODE_STATE_DIR = here

    browser = Client()
    assert browser.get(f"/{link.code}").status_code == 404  # this node has not synced yet
    link_cache.apply_remote_changes()
    assert browser.get(f"/{link.code}").status_code == 302


@database
def test_a_node_whose_sync_is_late_does_not_trust_its_filter(
    requires_redis, node, settings, redis_commands
):
    """The filter is as fresh as the node's last sync: past NODE_SYNC_MAX_LAG a made-up code
    is asked of Redis again, as every other lookup is."""
    settings.NODE_SYNC_MAX_LAG = 0.0
    status, _, commands = _lookups(redis_commands, MADE_UP[0])
    assert status == 404
    assert commands > 0


@database
def test_the_node_keeps_applying_other_nodes_changes_while_it_builds(
    requires_redis, node, user, settings, monkeypatch, tmp_path
):
    """A build reads every link from the database, which takes seconds at millions of links:
    the sync goes on reading the change stream meanwhile, so a revoke made elsewhere during the
    build is answered here as soon as the sync would have read it."""
    links = [link_create(user=user, long_url=f"https://example.com/{n}").link for n in range(3)]
    link_cache.apply_remote_changes()  # the creates' own notices, read back
    browser = Client()
    assert browser.get(f"/{links[0].code}").status_code == 302  # kept in this process
    settings.NODE_SYNC_SECONDS = 0.0  # the sync reads the stream after every chunk of the build
    monkeypatch.setattr(code_filter, "BUILD_CHUNK", 1)
    during_the_build = []
    read_codes = codesets._generated_codes

    def read_codes_while_a_revoke_happens():
        codes = iter(read_codes())
        yield next(codes)
        _on_another_node(tmp_path, links[0].code)  # revoked elsewhere
        yield next(codes)  # after this chunk the sync reads the stream
        during_the_build.append(browser.get(f"/{links[0].code}").status_code)
        yield from codes

    monkeypatch.setattr(codesets, "_generated_codes", read_codes_while_a_revoke_happens)
    code_filter.mark_incomplete()  # the next sync builds it again
    link_cache.apply_remote_changes()

    assert during_the_build == [410]
    assert code_filter.header().complete
