"""The link cache (links/cache/) as the redirect's users notice it: what a cached entry says,
where the redirect sends a browser, when a change is seen, and what happens when Redis is gone.

Runs in both suites: embedded (per-process entries tagged with the node's shared generations)
and services (entries in Redis); the Redis-only cases skip in the embedded run.
"""

import contextlib

import pytest
from django.core.management import call_command

from analytics.models import VisitRecord
from core import node_state
from core.redis_conn import redis_client, reset_redis_state, uses_redis
from links import cache as link_cache
from links.cache import LinkEntry, ProcessCache, codesets, redirect_location
from links.cache import changes as cache_changes
from links.cache import local as cache_local
from links.codes import shape
from links.models import UrlLink
from links.services.change import link_update
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import GATED_ENTRY

pytestmark = pytest.mark.django_db

# A Redis that refuses connections at once: nothing listens on port 1.
DEAD_REDIS = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {
            "CLIENT_CLASS": "django_redis.client.DefaultClient",
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": 1,
            "SOCKET_TIMEOUT": 1,
        },
    }
}


@pytest.fixture
def embedded_only():
    if uses_redis():
        pytest.skip("embedded mode only: with Redis every process reads the same entries")


# --- What an entry says ------------------------------------------------------------------------


@pytest.mark.parametrize("redirect_type", [301, 302, 307, 308])
@pytest.mark.parametrize("expires_at", [None, 1_893_456_000.123456], ids=["no-expiry", "expiry"])
@pytest.mark.parametrize("revoked", [False, True], ids=["active", "revoked"])
def test_an_entry_reads_back_exactly_as_it_was_written(redirect_type, expires_at, revoked):
    """Every redirect type, expiry (to the microsecond) and revoked flag survives the text form
    Redis stores, and a Location with a query and a fragment comes back whole."""
    entry = LinkEntry(
        code="aB3xY9k",
        link_id=12345,
        location="https://example.com/a?b=c&d=%C3%BC#frag",
        redirect_type=redirect_type,
        expires_at=expires_at,
        revoked=revoked,
    )
    assert LinkEntry.parse("aB3xY9k", entry.serialize()) == entry


def test_a_gated_entry_reads_back_exactly_and_older_forms_still_read():
    """A link with a password, a cap, rules and variants keeps them all through Redis's text form
    (a tab in a rule's URL cannot split it); entries written before gates existed (five fields,
    or six with the "noquery" flag) read as ungated links."""
    assert GATED_ENTRY.gated
    assert LinkEntry.parse("Gated12", GATED_ENTRY.serialize()) == GATED_ENTRY
    old = LinkEntry.parse("Old1234", "42\t301\t\t0\thttps://example.com/")
    assert (old.link_id, old.redirect_type, old.pass_query, old.gated) == (42, 301, True, False)
    assert not LinkEntry.parse("Old1234", "42\t302\t\t0\tnoquery\thttps://e.com/").pass_query


@pytest.mark.parametrize(
    "traits",
    [{}, {"revoked": True}, {"expired": True}, {"redirect_type": 308, "title": "Spring"}],
    ids=["active", "revoked", "expired", "308"],
)
def test_a_cached_link_is_read_back_as_the_link_says(user, traits):
    """What the cache hands the redirect for a link is what the database row says."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/cached?x=1", **traits)
    entry = link_cache.load_entry(link.code)
    assert link_cache.get_entry(link.code) == entry
    assert entry.link_id == link.pk
    assert entry.location == "https://example.com/cached?x=1"
    assert entry.redirect_type == traits.get("redirect_type", 302)
    assert entry.is_gone() is (link.status != "active")


@pytest.mark.parametrize(
    "traits, status", [({}, 302), ({"revoked": True}, 410), ({"expired": True}, 410)]
)
def test_a_click_counts_only_while_the_cached_link_is_active(client, user, traits, status):
    """Served from the cache (with Redis, the read and the visit push are one Lua call that
    reads the stored entry itself): a revoked or expired link answers 410 and its click is not
    counted."""
    link = UrlLinkFactory(owner=user, **traits)
    link_cache.load_entry(link.code)
    assert client.get(f"/{link.code}").status_code == status
    call_command("drain_visits", verbosity=0)
    assert VisitRecord.objects.filter(link=link).count() == (1 if status == 302 else 0)


# --- Where the browser is sent -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("long_url", "location"),
    [
        # UTS #46 without transitional mapping: ß stays, so faß.de is not turned into fass.de.
        ("https://faß.de/straße", "https://xn--fa-hia.de/stra%C3%9Fe"),
        (
            "https://例え.テスト/パス?q=値",
            "https://xn--r8jz45g.xn--zckzah/%E3%83%91%E3%82%B9?q=%E5%80%A4",
        ),
        ("https://example.com/#übersicht", "https://example.com/#%C3%BCbersicht"),
        # Already percent-encoded stays as it is (no %25 double encoding).
        ("https://example.com/a%20b?q=%C3%BC", "https://example.com/a%20b?q=%C3%BC"),
        ("https://[2001:db8::1]:8080/ü", "https://[2001:db8::1]:8080/%C3%BC"),
        # Not a valid IDNA name (underscore): the host is kept rather than refused.
        ("https://my_host.example/ü", "https://my_host.example/%C3%BC"),
    ],
)
def test_the_location_header_is_ascii_with_the_host_in_punycode(long_url, location):
    assert redirect_location(long_url) == location


# --- Unknown codes -----------------------------------------------------------------------------


def test_a_cached_unknown_code_is_404_without_a_query(
    client, django_assert_num_queries, domain_table
):
    """Once a code is known not to exist, asking again costs no database query."""
    code = shape.random_code()
    link_cache.store_missing(code, generation=link_cache.generation_before_read(code))
    assert link_cache.get_entry(code) is False
    with django_assert_num_queries(0):
        response = client.get(f"/{code}")
    assert response.status_code == 404
    assert b"does not exist" in response.content


@pytest.mark.django_db(transaction=True)
def test_a_code_tried_before_it_was_handed_out_redirects_once_it_is(client, user, monkeypatch):
    """Someone asked for a code (cached as unknown), then the pool handed that very code to a
    new link: the next click follows the new link instead of answering 404 for a minute."""
    from links.codes import pool
    from links.services.create import link_create

    code = shape.random_code()
    assert client.get(f"/{code}").status_code == 404  # now cached as "no such code"
    monkeypatch.setattr(pool, "pool_claim", lambda count: [code])
    created = link_create(user=user, long_url="https://example.com/fresh").link
    assert created.code == code
    response = client.get(f"/{code}")
    assert (response.status_code, response["Location"]) == (302, "https://example.com/fresh")


# --- Changes -----------------------------------------------------------------------------------


def test_drop_makes_the_next_redirect_read_the_database(client, user):
    """While cached, the redirect ignores the database; after drop it follows the row again."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/old")
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/old"  # cached
    UrlLink.objects.filter(pk=link.pk).update(long_url="https://example.com/new")
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/old"

    link_cache.drop(link.code)

    assert link_cache.get_entry(link.code) is None
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/new"


@contextlib.contextmanager
def _as_another_process(monkeypatch):
    """Read the node's generation table through a mapping of its own, like another worker."""
    table = node_state.GenerationTable(node_state.state_dir() / "generations")
    with monkeypatch.context() as patched:
        patched.setattr(cache_local, "generations", lambda: table)
        yield


def test_an_edit_reaches_every_embedded_process_on_its_next_redirect(
    embedded_only, client, user, monkeypatch
):
    """Embedded mode: each process keeps its own copy; an edit in one process bumps the code's
    shared generation, so another process's copy stops counting at once."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/old")
    stale = LinkEntry.from_link(link)
    elsewhere = ProcessCache()
    with _as_another_process(monkeypatch):
        generation = cache_local.generations().read(link.code)
        elsewhere.put(link.code, stale, ttl=3600, generation=generation)
        assert elsewhere.get(link.code) == stale
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/old"  # here too

    link_update(code=link.code, user=user, long_url="https://example.com/new")

    with _as_another_process(monkeypatch):
        assert elsewhere.get(link.code) is None
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/new"


def test_with_redis_every_process_sees_the_same_entry_and_its_drop(requires_redis, user):
    """Services mode: one entry in Redis for all processes (another connection reads it), a
    negative entry lives at most SHORTURL_NEGATIVE_CACHE_TTL, and a drop is seen by all."""
    import redis
    from django.conf import settings

    link = UrlLinkFactory(owner=user)
    entry = link_cache.cache_link(link)
    unknown = shape.random_code()
    link_cache.store_missing(unknown)
    other = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    try:
        raw = other.get(link_cache.entry_key(link.code))
        assert LinkEntry.parse(link.code, raw.decode()) == entry
        assert 0 < other.ttl(link_cache.entry_key(link.code)) <= settings.SHORTURL_CACHE_TTL
        ttl = other.ttl(link_cache.entry_key(unknown))
        assert 0 < ttl <= settings.SHORTURL_NEGATIVE_CACHE_TTL

        link_cache.drop(link.code)

        assert other.get(link_cache.entry_key(link.code)) is None
    finally:
        other.close()


def test_drop_refuses_to_pretend_when_redis_is_unreachable(settings, user):
    """A drop that cannot reach Redis raises CacheUnavailable, so an edit is not reported done
    (and is rolled back) while the old entry could keep redirecting."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/keep")
    settings.CACHES = DEAD_REDIS
    reset_redis_state()
    try:
        with pytest.raises(link_cache.CacheUnavailable, match="nothing was changed"):
            link_cache.drop(link.code)
        with pytest.raises(link_cache.CacheUnavailable):
            link_update(code=link.code, user=user, long_url="https://example.com/elsewhere")
    finally:
        reset_redis_state()
    link.refresh_from_db()
    assert link.long_url == "https://example.com/keep"


# --- Custom aliases ----------------------------------------------------------------------------


def test_forget_aliases_makes_a_new_alias_resolvable_at_once(client, user):
    """The redirect refuses unknown alias-shaped paths from its cached set of aliases; after
    forget_aliases an alias stored meanwhile redirects on the very next request."""
    assert client.get("/summer-sale").status_code == 404  # the set is loaded (without it)
    UrlLinkFactory.build(owner=user, alias="summer-sale", long_url="https://example.com/s").save()
    assert client.get("/summer-sale").status_code == 404  # still the cached set

    link_cache.forget_aliases()

    response = client.get("/summer-sale")
    assert response.status_code == 302
    assert response["Location"] == "https://example.com/s"


def test_a_new_alias_from_the_factory_redirects_at_once(client, user):
    """UrlLinkFactory(alias=…) drops the cached alias set, as link_create does."""
    assert client.get("/autumn-sale").status_code == 404
    UrlLinkFactory(owner=user, alias="autumn-sale")
    assert client.get("/autumn-sale").status_code == 302


def test_unknown_aliases_cost_no_query_however_many_aliases_exist(
    requires_redis, client, user, django_assert_num_queries, domain_table
):
    """Alias-shaped guesses are answered from the alias set in the redirect's one Redis call:
    after the set is loaded once, no query and no fetch of the whole set per guess."""
    for n in range(50):
        UrlLinkFactory(owner=user, alias=f"promo-{n}")
    with django_assert_num_queries(1):  # the set is loaded from the database once
        assert client.get("/no-such-alias").status_code == 404
    for guess in ("nope-1", "nope-2", "nope-3"):
        with django_assert_num_queries(0):
            assert client.get(f"/{guess}").status_code == 404
    assert client.get("/promo-7").status_code == 302
    assert not redis_client().exists("link-aliases"), "no pickled copy of the set any more"


def test_a_fill_that_read_the_row_before_a_revoke_cannot_cache_it_after(requires_redis, user):
    """A redirect on a cache miss reads the row, a revoke commits and drops the entry, then the
    redirect stores what it read: without the version check, the revoked link would redirect
    from Redis for a day."""
    from links.services.change import link_revoke

    link = UrlLinkFactory(owner=user, long_url="https://example.com/raced")
    version = link_cache.redis_version_before_read(link.code)  # the redirect, before its read
    read_before_the_revoke = LinkEntry.from_link(link)
    link_revoke(code=link.code, user=user)
    link_cache.store_entry(read_before_the_revoke, version=version)  # the redirect, late
    assert link_cache.get_entry(link.code) is None
    assert link_cache.load_entry(link.code).is_gone()


def test_made_up_generated_codes_cost_no_query_once_the_code_set_is_loaded(
    requires_redis,
    user,
    client,
    django_assert_num_queries,
    django_capture_on_commit_callbacks,
    domain_table,
):
    """Anyone can compute a valid check character, so a flood of made-up codes of the generated
    shape must not reach the database: once a runner has loaded the set of every generated code,
    they are answered 404 from Redis. A code created afterwards is found all the same."""
    existing = [UrlLinkFactory(owner=user) for _ in range(3)]
    made_up = [shape.with_check(f"zz{n:04d}") for n in range(5)]
    assert link_cache.ensure_code_set() is True
    assert link_cache.ensure_code_set() is False  # complete: nothing to do
    with django_assert_num_queries(0):
        for code in made_up:
            assert client.get(f"/{code}").status_code == 404
    for link in existing:
        assert client.get(f"/{link.code}").status_code == 302
    from links.services.create import link_create

    with django_capture_on_commit_callbacks(execute=True):
        later = link_create(user=user, long_url="https://example.com/created-after-the-load").link
    assert client.get(f"/{later.code}").status_code == 302


@pytest.mark.parametrize("outage", ["refused", "paused"])
def test_a_create_that_could_not_add_its_code_makes_the_set_load_again(
    requires_redis, user, client, monkeypatch, django_capture_on_commit_callbacks, outage
):
    """If a create's add to the code set fails, or is skipped while Redis is paused after an
    error, the set must not stay trusted (its code would be a false 404 for a day): the node's
    sync marks it incomplete once Redis answers, and it is loaded whole again."""
    import redis as redis_lib

    from links.services.create import link_create

    assert link_cache.ensure_code_set() is True
    unreachable = redis_lib.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)
    monkeypatch.setattr(
        cache_changes, "live_redis_client", lambda: unreachable if outage == "refused" else None
    )
    with django_capture_on_commit_callbacks(execute=True):
        link = link_create(user=user, long_url="https://example.com/add-lost").link
    monkeypatch.undo()
    reset_redis_state()
    assert not redis_client().sismember(link_cache.CODE_SET_KEY, link.code)
    assert link_cache.send_pending_changes(redis_client()) == 1
    assert link_cache.ensure_code_set() is True  # marked incomplete, loaded again
    assert redis_client().sismember(link_cache.CODE_SET_KEY, link.code)
    assert client.get(f"/{link.code}").status_code == 302


def test_an_alias_created_while_redis_is_paused_is_announced_once_it_answers(
    requires_redis, user, monkeypatch, django_capture_on_commit_callbacks
):
    """Other nodes hold the alias set in memory: an alias whose notice could not be sent would
    be a 404 there for a day. The notice waits in the node's state until Redis answers."""
    from links.services.create import link_create

    monkeypatch.setattr(cache_changes, "live_redis_client", lambda: None)
    with django_capture_on_commit_callbacks(execute=True):
        link_create(user=user, long_url="https://example.com/paused", alias="paused-sale")
    monkeypatch.undo()
    client = redis_client()
    client.delete(link_cache.CHANGES_KEY)
    assert link_cache.send_pending_changes(client) == 2  # the alias set, and the new code
    notices = [fields[b"c"] for _, fields in client.xrange(link_cache.CHANGES_KEY)]
    assert sorted(notices) == [b"*aliases*", b"paused-sale"]
    assert link_cache.send_pending_changes(client) == 0  # sent once


def test_a_load_that_began_before_the_set_was_marked_incomplete_does_not_complete_it(
    requires_redis,
):
    """Node A marks the code set incomplete (a create's add was lost) while node B is loading it
    from a database read that began before that create: B's set may lack the code, so B must
    not mark it complete."""
    client = redis_client()
    epoch_read_by_b = (client.get(link_cache.CODE_SET_EPOCH) or b"0").decode()
    codesets._mark_code_set_incomplete(client)  # node A
    assert codesets._mark_code_set_complete(client, epoch_read_by_b) is False  # node B
    assert not client.sismember(link_cache.CODE_SET_KEY, link_cache.ALIAS_SET_COMPLETE)
    assert link_cache.ensure_code_set() is True  # the next load, after it, completes it
    assert client.sismember(link_cache.CODE_SET_KEY, link_cache.ALIAS_SET_COMPLETE)
