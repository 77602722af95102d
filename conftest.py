"""Fixtures shared by every test: backend detection, a clean cache, users, a real Celery worker;
the `backends` marker that picks the services pass's tests."""

import os

import pytest
from django.conf import settings

from core.redis_conn import reset_redis_state, uses_redis

# One Playwright and one Chromium per test process, for tests/ and compat/ alike (a second
# Playwright in the same process is refused while the first runs).
from tests.browser_support import (  # noqa: F401 - pytest finds them here
    _chromium,
    browser,
    playwright_session,
)


def uses_mysql() -> bool:
    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.mysql"


# What puts a test in the services pass (make test-services): the database (pytest-django lets
# no other test reach it), or a fixture that needs Redis, MariaDB or a broker. Found from each
# test's whole fixture closure, so a fixture that asks for `db` carries its tests along.
BACKEND_FIXTURES = {
    "_django_db_helper",  # db, transactional_db, live_server, django_user_model, ...
    "requires_redis",
    "requires_mysql",
    "celery_worker_real",
    "redis_buffer",
}
BACKEND_MARKERS = ("django_db", "services", "worker", "backends")


def touches_backends(item: pytest.Item) -> bool:
    return bool(BACKEND_FIXTURES.intersection(getattr(item, "fixturenames", ()))) or any(
        item.get_closest_marker(name) for name in BACKEND_MARKERS
    )


def counts_redis_server_commands(item: pytest.Item) -> bool:
    """A test that reads the Redis server's own command totals (links.tests.helpers.redis_calls:
    INFO commandstats, one count for every client of the server) to count its round trips."""
    function = getattr(item, "function", None)
    return function is not None and "redis_calls" in function.__code__.co_names


def pytest_collection_modifyitems(config, items):
    for item in items:
        if touches_backends(item):
            item.add_marker(pytest.mark.backends)
        if counts_redis_server_commands(item):
            item.add_marker(pytest.mark.redis_alone)


_current = {"item": None, "touched": None}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """In the embedded run, a test without the `backends` marker that reads or writes the cache
    or queues a Celery task fails: the services pass would skip it, so it would never meet Redis
    or a broker. Mark it `@pytest.mark.backends` (or give it `db`) and it runs in both."""
    _current["item"] = None if item.get_closest_marker("backends") else item
    _current["touched"] = None
    try:
        result = yield
    finally:
        _current["item"] = None
    if _current["touched"]:
        pytest.fail(
            f"{_current['touched']} in a test the services pass does not run: mark it "
            "@pytest.mark.backends (conftest.py) so it also runs against Redis and Celery",
            pytrace=False,
        )
    return result


def _watch(owner, names, what):
    for name in names:
        original = getattr(owner, name)

        def watched(*args, _original=original, _what=f"{what}.{name}()", **kwargs):
            if _current["item"] is not None and _current["touched"] is None:
                _current["touched"] = _what
            return _original(*args, **kwargs)

        setattr(owner, name, watched)


def pytest_sessionstart(session):
    if uses_redis() or not settings.CELERY_TASK_ALWAYS_EAGER:
        return  # the services pass: every test it runs is marked already
    from celery.app.task import Task
    from django.core.cache.backends.locmem import LocMemCache

    # get_many, set_many, decr, get_or_set and the rest go through these.
    _watch(
        LocMemCache,
        ("add", "get", "set", "touch", "incr", "delete", "has_key", "clear"),
        "the cache",
    )
    _watch(Task, ("apply_async",), "a Celery task")


def pytest_report_header(config):
    db = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    cache = f"redis ({settings.CACHES['default']['LOCATION']})" if uses_redis() else "locmem"
    celery = "eager" if settings.CELERY_TASK_ALWAYS_EAGER else settings.CELERY_BROKER_URL
    return f"shorturl backends: database={db} cache={cache} celery={celery}"


@pytest.fixture(autouse=True)
def _small_pool_and_clean_cache(settings, tmp_path):
    """Tests start with an empty cache, their own embedded state (generation table, visit
    spool) and a small code pool (quick refills)."""
    settings.NODE_STATE_DIR = str(tmp_path / "embedded-state")
    # With Redis, the suite checks the one-round-trip redirect (no node runner runs here to
    # forward spooled visits); links/tests/test_node_sync.py and the e2e layer check the
    # default, which answers cached redirects from the worker's memory.
    settings.SHORTURL_LOCAL_REDIRECTS = False
    settings.SHORTURL_POOL_MIN = 20
    # A second flush lane runs in its own thread on its own connection, which cannot see what a
    # test's transaction created; analytics/tests/test_flush_lanes.py tests lanes (committed
    # data), the e2e layer the default.
    settings.ANALYTICS_FLUSH_LANES = 1
    # The default hasher costs ~0.2 s per user on purpose; tests need none of that.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.SHORTURL_POOL_BATCH = 200
    # No orphan-visit thread per test process: tests write the counts with flush_orphans().
    settings.ORPHAN_VISITS_FLUSH_SECONDS = 0
    from django.core.cache import cache

    from analytics import orphans
    from links.cache import process_cache
    from links.codes import sequence
    from serving import not_found_limit

    cache.clear()
    not_found_limit.reset()  # 404s counted per client IP, and every test client is 127.0.0.1
    orphans.forget_counts()
    process_cache.clear()  # Redis mode: the dedicated test database number is flushed
    sequence.sequence_resync()
    reset_redis_state()
    yield
    sequence.sequence_resync()


@pytest.fixture(autouse=True)
def _no_background_runner(monkeypatch):
    """The embedded WSGI app starts the node's background runner on its first request; in a
    test that thread would outlive the test and write to the test database while it is being
    flushed. Tests of the runner (shorturl_project/tests/test_embedded.py) start their own."""
    monkeypatch.setattr("shorturl_project.embedded.ensure_runner", lambda: None)


@pytest.fixture
def rates(settings):
    """`rates(anon="2/min")`: the API's throttle rates for this test, the others high enough not
    to interfere."""

    def apply(**overrides):
        rates = {"api_write": "1000/min", "api_read": "1000/min", "anon": "1000/min", **overrides}
        settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}

    return apply


@pytest.fixture
def sso_settings(settings):
    """Single sign-on switched on for a test, with a made-up provider (the rules', the pages'
    and the compat layers' tests; the protocol's tests start a real one: tests.oidc_provider)."""
    settings.SSO_ISSUER = "https://idp.example"
    settings.SSO_NAME = "Example ID"
    settings.SSO_CLIENT_ID = "shorturl"
    settings.SSO_CLIENT_SECRET = "s"  # noqa: S105 (a made-up provider's, for tests)
    settings.SSO_ALLOWED_DOMAINS = []
    settings.SSO_CREATE_USERS = True
    settings.SSO_DEFAULT_WORKSPACE = ""
    settings.SSO_DEFAULT_ROLE = "viewer"
    return settings


@pytest.fixture
def requires_redis():
    if not uses_redis():
        pytest.skip("needs Redis: set REDIS_URL (the embedded run has none)")


@pytest.fixture
def requires_mysql():
    if not uses_mysql():
        pytest.skip(
            "needs MariaDB/MySQL: set DATABASE_URL=mysql://… (the embedded run uses SQLite)"
        )


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("marketer", password="s3cret-pass-1")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("rival", password="s3cret-pass-2")


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user(
        "staffer", password="s3cret-pass-3", is_staff=True, is_superuser=True
    )


@pytest.fixture
def admin_client(client, staff_user):
    """The test client signed in as staff (pytest-django's own admin_client, with our user)."""
    client.force_login(staff_user)
    return client


@pytest.fixture
def celery_worker_real(transactional_db):
    """A real Celery worker (threads in this process) consuming from the real broker.

    In-process so it shares the test database; the tasks still travel through the broker.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a broker: set REDIS_URL or CELERY_BROKER_URL (embedded run is eager)")
    from celery.contrib.testing.worker import start_worker

    from shorturl_project.celery import app

    with start_worker(
        app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=30
    ) as worker:
        yield worker


@pytest.fixture
def artifacts_dir():
    path = os.path.join(settings.BASE_DIR, "test-artifacts")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture
def domain_table(db):
    """The short domains' table, already read: a process reads it once (and again after a
    domain changes), so tests that count a request's queries start after that read."""
    from links import domains

    return domains.current_table()
