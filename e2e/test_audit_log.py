"""Issue #30's audit log over HTTP against both deployments: one link changed through the
native API (a token), the Shlink layer (the same token as `X-Api-Key`) and the Django admin (a
staff session's form POST with its CSRF token) leaves one entry per change with the right
channel, who made it and the fields before and after; its owner reads them at
`GET /api/v1/audit/` and as CSV, and nobody can change or delete them there."""

from __future__ import annotations

import csv
import io
import secrets

import harness
from harness import HTTP_TIMEOUT


def _audit(dep: harness.Deployment, **params) -> list[dict]:
    return harness.api_get(dep, "/api/v1/audit/", **params)["results"]


def _admin_session(dep: harness.Deployment) -> harness.requests.Session:
    """Staff signed in through the admin's own login form, from an address of their own (the
    sign-in guard counts failures per address)."""
    sess = dep.session()
    sess.headers["X-Forwarded-For"] = f"198.51.100.{secrets.randbelow(200) + 1}"
    page = sess.get(dep.url("/admin/login/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, page.text[:300]
    response = harness.post_form(
        dep,
        sess,
        "/admin/login/",
        page.text,
        {"username": "admin", "password": "admin", "next": "/admin/"},
    )
    assert response.status_code == 302, f"admin sign-in → {response.status_code}"
    return sess


def test_api_shlink_and_admin_changes_leave_three_entries(deployment):
    dep = deployment
    link = harness.create_link(dep, harness.unique_url("audit"), title="Start")
    code = link["code"]

    patched = harness.call_as(
        dep, dep.token, "PATCH", f"/api/v1/links/{code}/", json={"title": "From the API"}
    )
    assert patched.status_code == 200, patched.text[:300]
    with dep.session() as sess:
        shlink = sess.patch(
            dep.url(f"/rest/v3/short-urls/{code}"),
            json={"title": "From Shlink"},
            headers={"X-Api-Key": dep.token},
            timeout=HTTP_TIMEOUT,
        )
    assert shlink.status_code == 200, shlink.text[:300]

    (created,) = _audit(dep, object=code, action="link.create")
    assert (created["channel"], created["actor"]) == ("api", "demo"), created
    assert created["changes"]["title"] == [None, "Start"]
    link_id = created["object"]["id"]

    admin = _admin_session(dep)
    change_page = admin.get(
        dep.url(f"/admin/links/urllink/{link_id}/change/"), timeout=HTTP_TIMEOUT
    )
    assert change_page.status_code == 200, change_page.text[:300]
    gates = harness.post_form(
        dep, admin, f"/admin/links/urllink/{link_id}/gates/", change_page.text, {"max_visits": "25"}
    )
    assert gates.status_code == 302, f"admin gates → {gates.status_code}: {gates.text[:300]}"

    updates = _audit(dep, object=code, action="link.update")
    assert [(e["channel"], e["actor"], e["changes"]) for e in reversed(updates)] == [
        ("api", "demo", {"title": ["Start", "From the API"]}),
        ("compat", "demo", {"title": ["From the API", "From Shlink"]}),
        ("admin", "admin", {"max_visits": [None, 25]}),
    ], updates
    assert all(e["object"] == {"type": "link", "id": link_id, "name": code} for e in updates)
    times = [e["at"] for e in updates]
    assert times == sorted(times, reverse=True), "newest first"

    # The same entries as CSV, and no way to change or delete them through the API.
    with dep.api() as api:
        download = api.get(
            dep.url("/api/v1/audit/"),
            params={"object": code, "download": "csv"},
            timeout=HTTP_TIMEOUT,
        )
        assert download.status_code == 200 and download.headers["Content-Type"].startswith(
            "text/csv"
        )
        rows = list(csv.DictReader(io.StringIO(download.text)))
        assert [row["channel"] for row in rows] == ["admin", "compat", "api", "api"], rows
        for method in ("post", "put", "patch", "delete"):
            refused = getattr(api, method)(dep.url("/api/v1/audit/"), timeout=HTTP_TIMEOUT)
            assert refused.status_code == 405, f"{method} → {refused.status_code}"
    assert len(_audit(dep, object=code)) == 4
