"""API keys, time zones and the staff admin, as a deployment serves them (both modes), over
HTTP only."""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import secrets
from zoneinfo import ZoneInfo

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

NEW_KEY = re.compile(r'data-testid="new-key">([^<]+)<')


def _make_key(dep: harness.Deployment, sess, name: str) -> str:
    page = sess.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, f"GET /accounts/api-keys/ → {page.status_code}"
    # Every scope ticked, as the form starts (e2e/test_keys_and_yourls.py makes narrower keys).
    scopes = ["links:read", "links:write", "stats:read", "webhooks:write"]
    posted = harness.post_form(
        dep, sess, "/accounts/api-keys/", page.text, {"name": name, "scopes": scopes}
    )
    assert posted.status_code == 302, f"making a key answered {posted.status_code}"
    shown = sess.get(dep.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT).text
    match = NEW_KEY.search(shown)
    assert match, "the new key is not shown after making it"
    return match.group(1).strip()


def _api(dep: harness.Deployment, key: str):
    sess = dep.session()
    sess.headers["Authorization"] = f"Token {key}"
    return sess


def test_a_key_made_on_the_page_works_on_every_worker_until_revoked(deployment):
    sess = harness.login(deployment, "demo", "demo")
    # Other cases make keys for demo too: this one is found by its own name on the page.
    name = f"e2e script {secrets.token_hex(3)}"
    key = _make_key(deployment, sess, name)

    created = _api(deployment, key).post(
        deployment.url("/api/v1/links/"),
        json={"long_url": harness.unique_url("api-key")},
        timeout=HTTP_TIMEOUT,
    )
    assert created.status_code == 201, f"create with the key → {created.status_code}"
    page = sess.get(deployment.url("/accounts/api-keys/"), timeout=HTTP_TIMEOUT).text
    row = re.search(rf'<tr data-key-name="{re.escape(name)}">(.*?)</tr>', page, re.S)
    assert row, f"the key {name!r} is not listed"
    assert "Never used" not in row.group(1), "the keys page does not show that the key was used"
    assert key not in page, "the key is shown again after its first page"

    key_id = re.search(r'action="/accounts/api-keys/(\d+)/revoke/"', row.group(1)).group(1)
    revoked = harness.post_form(deployment, sess, f"/accounts/api-keys/{key_id}/revoke/", page, {})
    assert revoked.status_code == 302, f"revoking answered {revoked.status_code}"
    # A new connection each time, so that several worker processes answer.
    answers = [
        _api(deployment, key).get(deployment.url("/api/v1/links/"), timeout=HTTP_TIMEOUT)
        for _ in range(12)
    ]
    assert {a.status_code for a in answers} == {401}, [a.status_code for a in answers]


def test_an_expiry_is_read_in_the_zone_the_form_names(deployment):
    """Tokyo chosen: the form reads the expiry in Tokyo time. On a MySQL/MariaDB without its
    time zone tables the pages say times stay in the server's zone, and the form reads it in
    that zone instead: either way, the zone the page names is the zone it uses."""
    sess = harness.login(deployment, "demo", "demo")
    prefs = sess.get(deployment.url("/accounts/preferences/"), timeout=HTTP_TIMEOUT)
    saved = harness.post_form(
        deployment, sess, "/accounts/preferences/", prefs.text, {"time_zone": "Asia/Tokyo"}
    )
    assert saved.status_code == 302, f"saving the time zone answered {saved.status_code}"
    prefs = sess.get(deployment.url("/accounts/preferences/"), timeout=HTTP_TIMEOUT)
    home = sess.get(deployment.url("/"), timeout=HTTP_TIMEOUT)
    named = re.search(r"Times are in ([\w/+-]+)\.", home.text).group(1)
    if 'data-testid="zones-unavailable"' in prefs.text:
        harness.note(deployment, "time zones", "database without time zone tables: UTC kept")
        assert named == "UTC", named
    else:
        assert named == "Asia/Tokyo", named
    long_url = harness.unique_url("zone-expiry")
    posted = harness.post_create_form(
        deployment, sess, home.text, long_url, expires_at="2030-07-01T12:00"
    )
    assert posted.status_code == 302, f"creating answered {posted.status_code}"
    links = deployment.api().get(
        deployment.url("/api/v1/links/"), params={"search": long_url}, timeout=HTTP_TIMEOUT
    )
    [link] = links.json()["results"]
    typed = dt.datetime(2030, 7, 1, 12, 0, tzinfo=ZoneInfo(named))
    expected = typed.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert link["expires_at"] == expected, (link["expires_at"], named)
    harness.post_form(deployment, sess, "/accounts/preferences/", prefs.text, {"time_zone": ""})


def test_the_visits_csv_is_in_the_chosen_zone_and_names_it(deployment):
    """Tokyo chosen: the export's first column is `time (Asia/Tokyo)` with +09:00 offsets, the
    second the same moment in UTC (the zone the pages name, as above, when the database cannot
    convert zones)."""
    sess = harness.login(deployment, "demo", "demo")
    prefs = sess.get(deployment.url("/accounts/preferences/"), timeout=HTTP_TIMEOUT)
    saved = harness.post_form(
        deployment, sess, "/accounts/preferences/", prefs.text, {"time_zone": "Asia/Tokyo"}
    )
    assert saved.status_code == 302, f"saving the time zone answered {saved.status_code}"
    try:
        home = sess.get(deployment.url("/"), timeout=HTTP_TIMEOUT).text
        named = re.search(r"Times are in ([\w/+-]+)\.", home).group(1)
        link = harness.create_link(deployment, harness.unique_url("csv-zone"))
        assert get_fresh(deployment.port, f"/{link['code']}", visitor_headers(3)).status == 302
        count = harness.wait_for_visits(deployment, link["code"], 1, timeout=30)
        assert count.reached, f"the click was not stored: {count.history}"

        export = sess.get(
            deployment.url(f"/dashboard/links/{link['code']}/visits.csv"), timeout=HTTP_TIMEOUT
        )
        assert export.status_code == 200, f"the CSV answered {export.status_code}"
        header, row = list(csv.reader(io.StringIO(export.text)))[:2]
        assert header[:2] == [f"time ({named})", "time (UTC)"], header
        local, utc = dt.datetime.fromisoformat(row[0]), dt.datetime.fromisoformat(row[1])
        assert local == utc, row[:2]  # one moment, two zones
        assert local.utcoffset() == dt.datetime.now(ZoneInfo(named)).utcoffset(), row[0]
        assert utc.utcoffset() == dt.timedelta(0), row[1]
        assert abs(dt.datetime.now(dt.UTC) - utc) < dt.timedelta(minutes=5), row[1]
    finally:
        harness.post_form(deployment, sess, "/accounts/preferences/", prefs.text, {"time_zone": ""})


def test_staff_find_the_overview_and_revoke_from_the_link_page(deployment):
    link = harness.create_link(deployment, harness.unique_url("admin-revoke"))
    staff = harness.login(deployment, "admin", "admin")
    index = staff.get(deployment.url("/admin/"), timeout=HTTP_TIMEOUT).text
    assert 'href="/dashboard/overview/"' in index and "Short links" in index

    listing = staff.get(
        deployment.url("/admin/links/urllink/"), params={"q": link["code"]}, timeout=HTTP_TIMEOUT
    ).text
    pk = re.search(r'href="/admin/links/urllink/(\d+)/change/', listing).group(1)
    change_path = f"/admin/links/urllink/{pk}/change/"
    change = staff.get(deployment.url(change_path), timeout=HTTP_TIMEOUT).text
    assert "Revoke this link" in change
    revoked = harness.post_form(deployment, staff, f"/admin/links/urllink/{pk}/revoke/", change, {})
    assert revoked.status_code == 302 and revoked.headers["Location"] == change_path
    answer = get_fresh(deployment.port, f"/{link['code']}", visitor_headers(1))
    assert answer.status == 410, f"GET /{link['code']} after revoking → {answer.status}"
