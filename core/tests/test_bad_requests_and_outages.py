"""Bad input refused with a clear answer, and a database outage met with 503, never a traceback.

Issue #12 rows 6 (oversized / deeply nested API bodies), 7 (unknown API paths with write
methods), 9 (/healthz tells nobody the exception text) and 12 (database down).
"""

from __future__ import annotations

import json
import logging
import socket
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connections
from django.utils import timezone
from rest_framework.test import APIClient

from links.codes.shape import with_check
from links.services.bulk import BULK_MAX_ITEMS
from links.tests.helpers import call_wsgi, client_for

# Imported now: loading the WSGI module sets logging up again, which would drop the handler a
# test's caplog installs.

# --- Row 6: oversized and deeply nested API bodies ------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("size", [3_000_000, 30_000_000])
@pytest.mark.parametrize("path", ["/api/v1/links/", "/api/v1/links/bulk/"])
def test_an_oversized_api_body_is_413_json_not_a_traceback(user, caplog, path, size):
    api = client_for(user)
    body = json.dumps({"long_url": "https://example.com/" + "a" * size})
    with caplog.at_level(logging.WARNING):
        response = api.post(path, body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    limit = f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}"
    assert limit in response.json()["detail"]
    assert not [r for r in caplog.records if r.exc_info], "no traceback for a client's mistake"


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/links/", "/api/v1/links/bulk/"])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_deeply_nested_json_is_400_with_the_reason(user, caplog, path, opener):
    api = client_for(user)
    with caplog.at_level(logging.WARNING):
        response = api.post(path, opener * 100_000, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.django_db
def test_the_largest_bulk_call_still_fits_under_the_body_limit(user):
    """BULK_MAX_ITEMS items with every field at its longest, indented as people send it."""
    expires = (timezone.now() + timedelta(days=30)).isoformat()
    padding = settings.SHORTURL_MAX_URL_LENGTH - len("https://example.com/0000/")
    items = [
        {
            "long_url": f"https://example.com/{i:04d}/" + "p" * padding,
            "alias": f"bulk-{i:04d}-" + "x" * 22,
            "title": "t" * 200,
            "expires_at": expires,
            "redirect_type": 302,
        }
        for i in range(BULK_MAX_ITEMS)
    ]
    assert all(len(item["long_url"]) == settings.SHORTURL_MAX_URL_LENGTH for item in items)
    body = json.dumps({"items": items}, indent=2)
    response = client_for(user).post("/api/v1/links/bulk/", body, content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    assert response.json()["created"] == BULK_MAX_ITEMS


# --- Row 7: unknown API paths with POST / PATCH / DELETE --------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", ["/api/v1/no-such-thing/", "/api/v2/links/", "/api/v1/links"])
@pytest.mark.parametrize("signed_in", [False, True])
def test_unknown_api_paths_answer_json_404_for_every_method(user, method, path, signed_in):
    client = APIClient(enforce_csrf_checks=True)
    if signed_in:
        client.force_login(user)  # a session cookie, no CSRF token: what the audit sent
    response = getattr(client, method)(path, {"long_url": "https://example.com/"}, format="json")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"].startswith("Not found.")


@pytest.mark.django_db
def test_known_api_paths_still_need_csrf_for_session_writes(user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/api/v1/links/", {"long_url": "https://example.com/"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


# --- A database that is down ------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again when the block ends: nothing listens


@pytest.fixture
def database_down(django_db_blocker, tmp_path):
    """The default connection pointed at a database that cannot be reached (a SQLite file in a
    directory that does not exist; a MySQL port nobody listens on), restored afterwards."""
    conn = connections["default"]
    saved_settings = dict(conn.settings_dict)
    with django_db_blocker.unblock():
        saved_connection, conn.connection = conn.connection, None
        if conn.vendor == "sqlite":
            conn.settings_dict["NAME"] = str(tmp_path / "gone" / "db.sqlite3")
        else:
            conn.settings_dict.update(HOST="127.0.0.1", PORT=str(_closed_port()))
        try:
            yield
        finally:
            conn.connection = None
            conn.settings_dict.clear()
            conn.settings_dict.update(saved_settings)
            conn.connection = saved_connection


def _errors_logged(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR]


def _uncached_code() -> str:
    return with_check("aB3xY9kQ"[: settings.SHORTURL_CODE_LENGTH])


# Row 12


def test_an_uncached_link_answers_503_with_retry_after_while_the_database_is_down(
    database_down, caplog
):
    """Through the production WSGI entry point: the fast path, then Django."""
    with caplog.at_level(logging.INFO):
        status, headers, body = call_wsgi(f"/{_uncached_code()}")
    assert status.startswith("503")
    assert int(headers["Retry-After"]) > 0
    assert headers["Content-Type"].startswith("text/html")
    assert b"try again" in body.lower() and b"Traceback" not in body
    assert len(_errors_logged(caplog)) == 1, [r.getMessage() for r in caplog.records]


def test_the_redirect_view_answers_503_while_the_database_is_down(database_down, caplog):
    from django.test import Client

    with caplog.at_level(logging.INFO):
        response = Client(raise_request_exception=False).get(f"/{_uncached_code()}")
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert len(_errors_logged(caplog)) == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "/api/v1/links/"), ("post", "/api/v1/links/"), ("get", "/api/v1/links/aB3xY9k/")],
)
def test_the_api_answers_json_503_with_retry_after_while_the_database_is_down(
    database_down, caplog, method, path
):
    api = APIClient(raise_request_exception=False)
    api.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    with caplog.at_level(logging.INFO):
        response = getattr(api, method)(path, {"long_url": "https://example.com/"}, format="json")
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert response["Content-Type"] == "application/json"
    assert "database" in response.json()["detail"].lower()
    assert len(_errors_logged(caplog)) == 1, [r.getMessage() for r in caplog.records]


# --- Row 9: /healthz says ok or down, and keeps the why for the log -------------------------


@pytest.mark.backends  # /healthz also asks the cache: Redis in the services pass
def test_healthz_says_down_without_the_exception_text_when_the_database_is_down(
    database_down, client, caplog
):
    with caplog.at_level(logging.WARNING):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["db"] == "down"
    text = response.content.decode()
    for secret in ("Error", "gone", "127.0.0.1", settings.DATABASES["default"].get("USER") or "@"):
        assert secret not in text, f"/healthz tells anyone {secret!r}: {text}"
    assert any("db" in r.getMessage() and r.levelno >= logging.WARNING for r in caplog.records)


@pytest.mark.backends
def test_the_node_check_stays_ok_while_the_shared_database_is_down(database_down, client):
    # What a load balancer asks: the database is every node's, so its outage is no reason to
    # take this node out (its cached redirects still answer); /healthz still says it is down.
    assert client.get("/healthz").status_code == 503
    response = client.get("/healthz/node")
    assert response.status_code == 200
    assert response.json()["node_state"] == "ok"


def test_the_node_check_says_down_when_the_node_cannot_keep_visits(client, settings, tmp_path):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the node's state directory should be")
    settings.NODE_STATE_DIR = str(blocked)
    response = client.get("/healthz/node")
    assert response.status_code == 503
    assert response.json()["node_state"] == "down"
    assert "not-a-directory" not in response.content.decode()


@pytest.mark.django_db
def test_healthz_says_down_without_the_exception_text_when_the_cache_is_down(
    client, settings, caplog
):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.5, "IGNORE_EXCEPTIONS": True},
        }
    }
    with caplog.at_level(logging.WARNING):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["cache"] == "down"
    assert "127.0.0.1" not in response.content.decode()
    assert "Error" not in response.content.decode()
    assert any("cache" in r.getMessage() for r in caplog.records), "the why goes to the log"


@pytest.mark.django_db
def test_an_error_in_what_was_asked_is_no_outage():
    """A missing table (a skipped migrate) is a bug to fix, not a reason to tell people to try
    again later: it stays a 500, and only failures to reach the database are a 503."""
    from django.db import DatabaseError, connection

    from core.outages import is_database_unavailable

    with pytest.raises(DatabaseError) as caught, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table_here")
    assert not is_database_unavailable(caught.value)


@pytest.fixture
def signed_in(user):
    from django.test import Client

    browser = Client(raise_request_exception=False)  # as a server answers, not re-raised
    browser.force_login(user)
    return browser


@pytest.mark.django_db(transaction=True)  # the outage swaps the connection the test runs on
def test_a_signed_in_page_answers_the_friendly_503_while_the_database_is_down(
    signed_in, database_down
):
    """The session and the user live in the database too: an outage met in a middleware that
    reads them (the person's time zone), before any view runs, is a 503 as well (handler500)."""
    response = signed_in.get("/dashboard/")
    assert response.status_code == 503
    assert response["Retry-After"]
    assert b"<title>" in response.content and b"Traceback" not in response.content
