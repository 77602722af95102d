"""Security round 3's policy edges over HTTP against both deployments (`make serve`: embedded,
several worker processes on one SQLite file; services: MariaDB, Redis and a Celery worker):

- finding 10: a capped link's destination goes to people only: curl, a crawler and a HEAD get a
  403 page without a Location, use no visit, and meet the 410 once people have used them up;
- 12c: a short domain kept for one workspace is listed (native API and Shlink's
  `GET /rest/v3/domains`) only to its members, and its redirects only to staff who manage
  domains;
- 12d: a visitor's query string never takes the `Location` past the 2,048-byte URL cap: over it,
  the visitor still arrives, without the query;
- 12e: the fast path's 404, 410, 403 and 429 pages carry the site's Content-Security-Policy.
"""

from __future__ import annotations

import http.client
import json
import secrets
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import HOST, HTTP_TIMEOUT

MAX_URL_LENGTH = 2048  # SHORTURL_MAX_URL_LENGTH's default
CURL = "curl/8.5.0"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
REPEATS = 8  # fresh connections per check: each worker process answers some


def _fresh(
    dep: harness.Deployment, path: str, headers: dict[str, str], method: str = "GET"
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request on a new connection (any worker may take it): status, headers (looked up in
    any case), body."""
    conn = http.client.HTTPConnection(HOST, dep.port, timeout=HTTP_TIMEOUT)
    try:
        conn.request(method, path, headers={"Connection": "close", **headers})
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


def _directives(policy: str | None) -> set[str]:
    """A Content-Security-Policy's directives: django-csp builds the header from a set, so each
    process may order them its own way."""
    return {part.strip() for part in (policy or "").split(";") if part.strip()}


def _visits_left(dep: harness.Deployment, code: str) -> int:
    return harness.api_get(dep, f"/api/v1/links/{code}/")["visits_left"]


def test_a_capped_link_sends_only_people_on(deployment):
    long_url = harness.unique_url("policy-cap")
    code = harness.create_link(deployment, long_url, max_visits=2)["code"]
    programs = [
        ({"User-Agent": CURL}, "GET"),
        ({"User-Agent": GOOGLEBOT, "X-Forwarded-For": "66.249.66.1"}, "GET"),
        (harness.visitor_headers(0), "HEAD"),  # a browser's User-Agent, but a HEAD
    ]
    for headers, method in programs:
        for _ in range(REPEATS):
            status, got, body = _fresh(deployment, f"/{code}", headers, method)
            assert (status, got.get("Location")) == (403, None), (headers, method, status, got)
            assert long_url.encode() not in body
            if method == "GET":
                assert b"opens in a web browser" in body
    assert _visits_left(deployment, code) == 2, "a program used up a visit"

    people = [_fresh(deployment, f"/{code}", harness.visitor_headers(i)) for i in (1, 2, 3)]
    assert [(s, h.get("Location")) for s, h, _ in people] == [
        (302, long_url),
        (302, long_url),
        (410, None),
    ]
    assert _fresh(deployment, f"/{code}", {"User-Agent": CURL})[0] == 410

    # A link without a cap is followed by anyone, as before.
    plain = harness.create_link(deployment, harness.unique_url("policy-plain"))
    status, got, _ = _fresh(deployment, f"/{plain['code']}", {"User-Agent": CURL}, "HEAD")
    assert (status, got.get("Location")) == (302, plain["long_url"])


def test_a_visitor_query_never_takes_the_location_past_the_cap(deployment):
    long_url = harness.unique_url("policy-query")  # it has its own ?run=…
    code = harness.create_link(deployment, long_url)["code"]
    small = _fresh(deployment, f"/{code}?utm_source=mail", harness.visitor_headers(4))
    assert (small[0], small[1]["Location"]) == (302, f"{long_url}&utm_source=mail")

    room = MAX_URL_LENGTH - len(f"{long_url}&q=")
    for query, expected in (
        ("q=" + "a" * room, f"{long_url}&q={'a' * room}"),  # exactly at the cap: passed on
        ("q=" + "a" * (room + 1), long_url),  # one byte over: dropped
        ("q=" + "%C3%A9" * 1000, long_url),  # 6 KB of escapes
        ("q=" + "a" * 7000, long_url),
    ):
        for i in range(REPEATS // 2):
            status, got, _ = _fresh(deployment, f"/{code}?{query}", harness.visitor_headers(i))
            assert (status, got.get("Location")) == (302, expected), (len(query), status)
            assert len(got["Location"]) <= MAX_URL_LENGTH


# Run by `manage.py shell -c`: a user with a workspace of her own, and a staff member; a DRF
# token each (the Shlink layer takes one as its X-Api-Key).
MAKE_PEOPLE = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from workspaces.services import workspace_create
names = json.loads({names!r})
users = get_user_model().objects
rival = users.create_user(names["rival"], email=names["rival"] + "@example.com")
staff = users.create_user(
    names["staff"], email=names["staff"] + "@example.com", is_staff=True, is_superuser=True
)
workspace = workspace_create(user=rival, name="Rival " + names["run"])
print("E2E-PEOPLE " + json.dumps({{
    "slug": workspace.slug,
    "rival": Token.objects.create(user=rival).key,
    "staff": Token.objects.create(user=staff).key,
}}))
"""


def _get(dep: harness.Deployment, path: str, headers: dict[str, str]):
    with dep.session() as sess:
        response = sess.get(dep.url(path), headers=headers, timeout=HTTP_TIMEOUT)
    assert response.status_code == 200, f"GET {path} → {response.status_code}: {response.text}"
    return response.json()


def test_a_workspaces_own_domain_is_listed_to_its_members_and_redirects_to_managers(deployment):
    run = secrets.token_hex(3)
    names = {"rival": f"rival-{run}", "staff": f"staffer-{run}", "run": run}
    out = deployment.manage("shell", "-c", MAKE_PEOPLE.format(names=json.dumps(names)))
    made = json.loads(out.split("E2E-PEOPLE ", 1)[1].strip().splitlines()[0])
    host = f"kept-{deployment.mode}-{run}.e2e.test"
    secret_root = f"https://rival.example.com/launch-{run}"
    added = deployment.manage(
        "domains", "add", host, "--workspace", made["slug"], "--root-redirect", secret_root
    )
    assert f"Added {host}" in added, added

    def native(token: str) -> list[str]:
        listed = _get(deployment, "/api/v1/domains/", {"Authorization": f"Token {token}"})
        return [item["host"] for item in listed]

    def shlink(token: str) -> dict[str, dict]:
        body = _get(deployment, "/rest/v3/domains", {"X-Api-Key": token})["domains"]
        return {item["domain"]: item["redirects"] for item in body["data"]}

    # The demo user is in no workspace of the rival's: the domain is not theirs to see.
    assert host not in native(deployment.token)
    assert host not in shlink(deployment.token)
    # Its workspace's owner may use it, but does not manage domains: no redirects.
    assert host in native(made["rival"])
    assert shlink(made["rival"])[host]["baseUrlRedirect"] is None
    # Staff who manage domains see it with where it sends people.
    assert host in native(made["staff"])
    assert shlink(made["staff"])[host]["baseUrlRedirect"] == secret_root


def test_the_fast_paths_pages_carry_the_sites_content_security_policy(deployment):
    with deployment.session() as sess:
        site = sess.get(deployment.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
    policy = _directives(site.headers["Content-Security-Policy"])
    assert {"script-src 'self'", "frame-ancestors 'none'"} <= policy

    gone = harness.create_link(deployment, harness.unique_url("policy-csp-gone"))
    with deployment.api() as api:
        assert api.delete(deployment.url(f"/api/v1/links/{gone['code']}/")).status_code == 204
    capped = harness.create_link(deployment, harness.unique_url("policy-csp-cap"), max_visits=1)
    client = {"X-Forwarded-For": f"198.51.100.{secrets.randbelow(250) + 1}"}
    for path, expected, headers in (
        ("/zzzzzzz", 404, client),
        (f"/{gone['code']}", 410, client),
        (f"/{capped['code']}", 403, {"User-Agent": CURL}),
    ):
        for method in ("GET", "HEAD"):
            status, got, _ = _fresh(deployment, path, headers, method)
            assert status == expected, (path, method, status)
            assert _directives(got.get("Content-Security-Policy")) == policy, (path, method)

    # A flood of made-up codes from one address until the 429 (300 a minute per worker).
    flooder = {"X-Forwarded-For": f"198.18.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"}
    throttled = None
    with ThreadPoolExecutor(8) as pool:
        for batch in range(10):
            paths = [f"/nope-{run}-{batch}-{n}" for run in ("csp",) for n in range(200)]
            for status, got, _ in pool.map(lambda p: _fresh(deployment, p, flooder), paths):
                if status == 429:
                    throttled = got
            if throttled is not None:
                break
    assert throttled is not None, "no 429 after 2,000 made-up codes from one address"
    assert _directives(throttled.get("Content-Security-Policy")) == policy
