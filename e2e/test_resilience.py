"""Bad input refused with a clear answer, production headers, and a database outage met with 503,
checked over HTTP against `make serve` (issue #12 rows 6, 7, 9, 10, 12).

The outage case starts its own embedded server (never the shared deployments): its SQLite file
lives in a directory that the test swaps for a plain file, so every new connection fails with
"unable to open database file" the way a lost volume would, then puts it back.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import harness
import pytest
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers


def test_oversized_and_deeply_nested_api_bodies_are_refused_with_json(deployment):
    with deployment.api() as api:
        big = api.post(
            deployment.url("/api/v1/links/"),
            data=json.dumps({"long_url": "https://example.com/" + "a" * 3_000_000}),
            headers={"Content-Type": "application/json"},
            timeout=HTTP_TIMEOUT,
        )
        nested = api.post(
            deployment.url("/api/v1/links/bulk/"),
            data="[" * 100_000,
            headers={"Content-Type": "application/json"},
            timeout=HTTP_TIMEOUT,
        )
    assert big.status_code == 413, f"3 MB body → {big.status_code}: {big.text[:300]}"
    assert "bytes" in big.json()["detail"]
    assert nested.status_code == 400, f"[ × 100,000 → {nested.status_code}: {nested.text[:300]}"
    assert "nested too deeply" in nested.json()["detail"]


@pytest.mark.parametrize("method", ["POST", "PATCH", "DELETE"])
def test_unknown_api_paths_answer_json_404_to_a_signed_in_browser(deployment, method):
    sess = harness.login(deployment, "demo", "demo")
    response = sess.request(
        method, deployment.url("/api/v1/no-such-thing/"), json={}, timeout=HTTP_TIMEOUT
    )
    assert response.status_code == 404, f"{method} → {response.status_code}: {response.text[:300]}"
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


def test_pages_and_swagger_ui_carry_the_content_security_policy(deployment):
    with deployment.session() as sess:
        login = sess.get(deployment.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
        docs = sess.get(deployment.url("/api/v1/docs/"), timeout=HTTP_TIMEOUT)
        script_url = re.search(r'<script src="([^"]*\?[^"]*script=[^"]*)"', docs.text)
        assert script_url, f"Swagger UI's start-up script is not a separate file: {docs.text}"
        script = sess.get(
            deployment.url(script_url.group(1).replace("&amp;", "&")), timeout=HTTP_TIMEOUT
        )
    for response in (login, docs):
        policy = response.headers.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy, f"{response.url}: {policy!r}"
    assert script.status_code == 200 and "SwaggerUIBundle" in script.text
    assert script.headers["Content-Type"].startswith("application/javascript")


# --- a database outage -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lone_server(production_venv):
    """An embedded `make serve` of its own, its SQLite file in <workdir>/db/."""
    log_dir = harness.ARTIFACTS / "outage"
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)
    workdir = Path(tempfile.mkdtemp(prefix="shorturl-e2e-outage-"))
    port = harness.free_port()
    pidfile = workdir / "server.pid"
    dep = harness.Deployment(
        mode="embedded",
        port=port,
        env=harness.base_env(port, pidfile),
        workdir=workdir,
        log_dir=log_dir,
        pidfile=pidfile,
    )
    (workdir / "db").mkdir()
    dep.env.update(
        DATABASE_URL=f"sqlite:///{workdir / 'db' / 'db.sqlite3'}",
        NODE_STATE_DIR=str(workdir / "node-state"),  # not beside the file the test takes away
        STATIC_ROOT=str(workdir / "static"),
    )
    try:
        harness.start_web(dep)
        dep.manage("ensure_demo_users")
        out = dep.manage("drf_create_token", "demo")
        dep.token = re.search(r"\b([0-9a-f]{40})\b", out).group(1)
    except BaseException:
        dep.stop()
        raise
    yield dep
    dep.stop()


def test_database_down_answers_503_with_retry_after_and_logs_each_once(lone_server):
    dep = lone_server
    long_url = harness.unique_url("outage")
    code = harness.create_link(dep, long_url)["code"]  # never visited: not cached anywhere

    db_dir = dep.workdir / "db"
    away = dep.workdir / "db.away"
    web_log = dep.procs["web"].log_path
    log_start = web_log.stat().st_size
    db_dir.rename(away)
    db_dir.write_text("the database's volume is gone\n")
    try:
        redirect = get_fresh(dep.port, f"/{code}", visitor_headers(0))
        with dep.api() as api:
            listing = api.get(dep.url("/api/v1/links/"), timeout=HTTP_TIMEOUT)
            created = api.post(
                dep.url("/api/v1/links/"), json={"long_url": long_url + "&2"}, timeout=HTTP_TIMEOUT
            )
        with dep.session() as sess:
            health = sess.get(dep.url("/healthz"), timeout=HTTP_TIMEOUT)
            page = sess.get(dep.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
    finally:
        db_dir.unlink()
        away.rename(db_dir)

    assert redirect.status == 503, f"GET /{code} → {redirect.status}: {redirect.body[:300]!r}"
    assert b"try again" in redirect.body.lower()
    assert redirect.content_type.startswith("text/html")
    for response in (listing, created):
        assert response.status_code == 503, f"{response.url} → {response.status_code}"
        assert int(response.headers["Retry-After"]) > 0
        assert "database" in response.json()["detail"].lower()
    assert health.status_code == 503 and health.json()["db"] == "down"
    assert str(dep.workdir) not in health.text and "Error" not in health.text
    assert page.status_code in (200, 503), f"/accounts/login/ → {page.status_code}"

    log = web_log.read_bytes()[log_start:].decode(errors="replace")
    assert "Internal Server Error" not in log, log[-3000:]
    assert "handing it to Django" not in log, "the fast path's failure is logged by Django alone"
    # One line per failed request: the redirect and the two API calls (and the page if it
    # needed the database).
    unavailable = log.count("Database unavailable:")
    assert unavailable == 3 + (page.status_code == 503), log[-3000:]

    # The volume is back: the same link redirects.
    again = get_fresh(dep.port, f"/{code}", visitor_headers(1))
    assert (again.status, again.location) == (302, long_url)


def test_healthz_answer_is_only_ok_or_down(deployment):
    with deployment.session() as sess:
        body = sess.get(deployment.url("/healthz"), timeout=HTTP_TIMEOUT).json()
    assert {body[key] for key in ("db", "cache", "broker")} <= {"ok", "down"}
