"""Issue #15's short domains over HTTP against both deployments (embedded: several worker
processes on one SQLite file; services: MariaDB, Redis and a separate Celery worker): domains
added, changed and removed with `manage.py domains` while the server runs, the same alias on
several domains redirecting each to its own destination from every worker process (picked by
the Host header), unknown hosts answering 404, a domain's root and not-found redirects, the API's
`domain` field and `?domain=`, and a revoke and visits that touch one domain's link only."""

from __future__ import annotations

import secrets
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

REPEATS = 20  # fresh connections per check, some at once, so that every worker process answers


def _host(dep: harness.Deployment, label: str) -> str:
    """A host name of this mode and run alone (`domains add` refuses one that exists)."""
    return f"{label}-{dep.mode}-{secrets.token_hex(3)}.e2e.test"


def _alias(label: str) -> str:
    """An alias no other run has used."""
    return f"{label}-{secrets.token_hex(4)}"


def _add_domain(dep: harness.Deployment, label: str, *options: str) -> str:
    """`manage.py domains add` on a fresh host, while the server runs; the host."""
    host = _host(dep, label)
    out = dep.manage("domains", "add", host, *options)
    assert f"Added {host}" in out, f"domains add {host} said: {out!r}"
    return host


def _answers(
    dep: harness.Deployment, path: str, host: str | None, extra: dict[str, str] | None = None
) -> list[harness.Answer]:
    """REPEATS GETs of `path` with `Host: host` (None: the harness's own) and `extra` headers,
    each on a fresh connection, eight at a time."""
    headers = {**(extra or {}), **({"Host": host} if host else {})}
    with ThreadPoolExecutor(8) as pool:
        return list(
            pool.map(
                lambda i: get_fresh(dep.port, path, {**visitor_headers(i), **headers}),
                range(REPEATS),
            )
        )


def _assert_all(answers: list[harness.Answer], status: int, location: str | None, what: str):
    """Every answer is `status` with `location`; the message counts what came back."""
    seen = Counter((a.status, a.location) for a in answers)
    assert seen == {(status, location): len(answers)}, f"{what}: {dict(seen)}"


def _api(dep: harness.Deployment, method: str, path: str, **kwargs):
    with dep.api() as api:
        return api.request(method, dep.url(path), timeout=HTTP_TIMEOUT, **kwargs)


def _clicks(dep: harness.Deployment, code: str, host: str, expected: int, timeout: float) -> int:
    """Poll the link's stats (`?domain=host`) until people's + bots' clicks reach `expected` or
    `timeout` passes; the last count."""
    deadline = time.monotonic() + timeout
    while True:
        response = _api(dep, "GET", f"/api/v1/links/{code}/stats/", params={"domain": host})
        assert response.status_code == 200, (
            f"stats of {code} on {host} → {response.status_code}: {response.text[:300]}"
        )
        data = response.json()
        seen = data["total_clicks"] + data["bot_clicks"]
        if seen >= expected or time.monotonic() >= deadline:
            return seen
        time.sleep(0.5)


def test_the_same_alias_on_three_domains_redirects_each_to_its_own_destination(deployment):
    alias = _alias("same")
    first, second = _add_domain(deployment, "go"), _add_domain(deployment, "to")
    urls = {name: harness.unique_url(f"domains-{name}") for name in ("default", "first", "second")}
    made = {
        "default": harness.create_link(deployment, urls["default"], alias=alias),
        "first": harness.create_link(deployment, urls["first"], alias=alias, domain=first),
        "second": harness.create_link(deployment, urls["second"], alias=alias, domain=second),
    }
    assert {link["code"] for link in made.values()} == {alias}, made

    for host in (None, "localhost", f"127.0.0.1:{deployment.port}"):
        answers = _answers(deployment, f"/{alias}", host)
        _assert_all(answers, 302, urls["default"], f"/{alias} on the default domain as {host}")
    for name, host in (("first", first), ("second", second)):
        _assert_all(_answers(deployment, f"/{alias}", host), 302, urls[name], f"/{alias} on {host}")
    # The Host header's case and port do not matter.
    answer = get_fresh(deployment.port, f"/{alias}/", {"Host": f"{first.upper()}:80"})
    assert (answer.status, answer.location) == (302, urls["first"]), answer


def test_an_unknown_host_and_another_domains_code_answer_404(deployment):
    domain = _add_domain(deployment, "only")
    on_default = harness.create_link(deployment, harness.unique_url("domains-default"))["code"]
    on_domain = harness.create_link(deployment, harness.unique_url("domains-extra"), domain=domain)
    stranger = _host(deployment, "stranger")

    _assert_all(_answers(deployment, f"/{on_default}", stranger), 404, None, "unknown host")
    _assert_all(_answers(deployment, f"/{on_domain['code']}", stranger), 404, None, "unknown host")
    for host in (None, "localhost"):
        answers = _answers(deployment, f"/{on_domain['code']}", host)
        _assert_all(answers, 404, None, f"{domain}'s code on the default domain as {host}")
    # The default domain's code on the extra domain is not there either.
    _assert_all(
        _answers(deployment, f"/{on_default}", domain), 404, None, f"{on_default} on {domain}"
    )


def test_a_domains_root_and_not_found_redirects_follow_domains_add_set_and_remove(deployment):
    root, missing = harness.unique_url("domains-root"), harness.unique_url("domains-missing")
    host = _host(deployment, "redir")
    unknown = f"/no-such-{secrets.token_hex(4)}"
    # Every worker process sees the host as nobody's before it is added...
    _assert_all(_answers(deployment, unknown, host), 404, None, "before domains add")
    added = deployment.manage(
        "domains", "add", host, "--root-redirect", root, "--not-found-redirect", missing
    )
    assert f"Added {host}" in added, added
    # ...and as the domain on the very next request, without a restart.
    _assert_all(_answers(deployment, "/", host), 302, root, f"GET / on {host} after add")
    _assert_all(_answers(deployment, unknown, host), 302, missing, f"{unknown} on {host}")
    listed = deployment.manage("domains", "list")
    assert f"{host}: 0 link(s); root → {root}; unknown codes → {missing}" in listed, listed

    deployment.manage("domains", "set", host, "--root-redirect", "", "--not-found-redirect", "")
    page = get_fresh(deployment.port, "/", {"Host": host})
    assert (page.status, page.location) == (404, None), page
    assert b"Short links live here" in page.body, page.body[:300]
    _assert_all(_answers(deployment, "/", host), 404, None, f"GET / on {host} without redirect")
    _assert_all(_answers(deployment, unknown, host), 404, None, f"{unknown} without redirect")

    moved = harness.unique_url("domains-root-moved")
    deployment.manage("domains", "set", host, "--root-redirect", moved)
    _assert_all(_answers(deployment, "/", host), 302, moved, f"GET / on {host} after set")
    _assert_all(_answers(deployment, unknown, host), 404, None, "set leaves the other one alone")

    # The default domain's root stays the site's home page.
    home = get_fresh(deployment.port, "/")
    assert (home.status, home.location) == (200, None), (home.status, home.body[:300])
    assert b"Short links live here" not in home.body

    assert f"Removed {host}" in deployment.manage("domains", "remove", host)
    _assert_all(_answers(deployment, unknown, host), 404, None, f"{host} after remove")


def test_the_api_puts_links_on_domains_and_tells_them_apart_by_domain(deployment):
    first, second = _add_domain(deployment, "api"), _add_domain(deployment, "apitwo")
    alias = _alias("api")
    long_first, long_second = harness.unique_url("api-first"), harness.unique_url("api-second")

    response = _api(
        deployment,
        "POST",
        "/api/v1/links/",
        json={"long_url": long_first, "alias": alias, "domain": first},
    )
    assert response.status_code == 201, (
        f"create on {first} → {response.status_code}: {response.text[:300]}"
    )
    link = response.json()
    assert (link["domain"], link["short_url"]) == (first, f"http://{first}/{alias}"), link
    assert response.headers.get("Location") == f"/api/v1/links/{alias}/?domain={first}", (
        response.headers
    )
    plain = harness.create_link(deployment, harness.unique_url("api-default"))
    assert plain["domain"] == "127.0.0.1", plain
    assert plain["short_url"] == deployment.url(f"/{plain['code']}"), plain

    nowhere = _host(deployment, "nowhere")
    refused = _api(
        deployment, "POST", "/api/v1/links/", json={"long_url": long_first, "domain": nowhere}
    )
    assert refused.status_code == 400, f"{nowhere} → {refused.status_code}: {refused.text[:300]}"
    message = " ".join(refused.json().get("domain", []))
    assert nowhere in message and "is not one of this service's short domains" in message, (
        refused.text
    )

    taken = _api(
        deployment,
        "POST",
        "/api/v1/links/",
        json={"long_url": long_second, "alias": alias, "domain": first},
    )
    assert taken.status_code == 400, (
        f"{alias} twice on {first} → {taken.status_code}: {taken.text[:300]}"
    )
    assert "already taken" in " ".join(taken.json().get("alias", [])), taken.text
    harness.create_link(deployment, long_second, alias=alias, domain=second)

    listed = _api(deployment, "GET", "/api/v1/domains/")
    assert listed.status_code == 200, listed.text[:300]
    domains = listed.json()
    assert domains[0] == {"host": "127.0.0.1", "is_default": True}, domains
    assert {"host": first, "is_default": False} in domains, domains
    assert {"host": second, "is_default": False} in domains, domains

    # Two extra domains and not the default one: which link is meant must be said.
    ambiguous = _api(deployment, "GET", f"/api/v1/links/{alias}/")
    assert ambiguous.status_code == 400, (
        f"no ?domain= → {ambiguous.status_code}: {ambiguous.text[:300]}"
    )
    assert ambiguous.json().get("domain"), ambiguous.text
    for host, long_url in ((first, long_first), (second, long_second)):
        got = _api(deployment, "GET", f"/api/v1/links/{alias}/", params={"domain": host})
        assert got.status_code == 200, f"?domain={host} → {got.status_code}: {got.text[:300]}"
        assert (got.json()["domain"], got.json()["long_url"]) == (host, long_url), got.json()
    stranger = _api(deployment, "GET", f"/api/v1/links/{alias}/", params={"domain": nowhere})
    assert stranger.status_code == 404, f"?domain={nowhere} → {stranger.status_code}"

    # An edit of one reaches every worker process on the next request; the other is untouched.
    _assert_all(_answers(deployment, f"/{alias}", first), 302, long_first, "before the edit")
    _assert_all(_answers(deployment, f"/{alias}", second), 302, long_second, "before the edit")
    edited = harness.unique_url("api-edited")
    patched = _api(
        deployment,
        "PATCH",
        f"/api/v1/links/{alias}/",
        params={"domain": first},
        json={"long_url": edited},
    )
    assert patched.status_code == 200, (
        f"PATCH ?domain={first} → {patched.status_code}: {patched.text[:300]}"
    )
    assert (patched.json()["domain"], patched.json()["long_url"]) == (first, edited), patched.json()
    _assert_all(_answers(deployment, f"/{alias}", first), 302, edited, f"{first} after the edit")
    _assert_all(
        _answers(deployment, f"/{alias}", second), 302, long_second, f"{second} after the edit"
    )

    # With the alias on the default domain too, no ?domain= means the default domain's link.
    on_default = harness.create_link(deployment, harness.unique_url("api-plain"), alias=alias)
    got = _api(deployment, "GET", f"/api/v1/links/{alias}/")
    assert got.status_code == 200, f"no ?domain= → {got.status_code}: {got.text[:300]}"
    assert got.json()["long_url"] == on_default["long_url"], got.json()

    gone = _api(deployment, "DELETE", f"/api/v1/links/{alias}/", params={"domain": second})
    assert gone.status_code == 204, (
        f"DELETE ?domain={second} → {gone.status_code}: {gone.text[:300]}"
    )
    for host, revoked in ((first, False), (second, True), ("127.0.0.1", False)):
        got = _api(deployment, "GET", f"/api/v1/links/{alias}/", params={"domain": host})
        assert got.status_code == 200, got.text[:300]
        assert got.json()["is_active"] is not revoked, (host, got.json())


def test_a_revoke_and_visits_touch_one_domains_link_only(deployment):
    domain = _add_domain(deployment, "visits")
    alias = _alias("visits")
    here, there = harness.unique_url("visits-default"), harness.unique_url("visits-domain")
    harness.create_link(deployment, here, alias=alias)
    harness.create_link(deployment, there, alias=alias, domain=domain)

    _assert_all(_answers(deployment, f"/{alias}", domain), 302, there, f"{alias} on {domain}")
    clicked = [get_fresh(deployment.port, f"/{alias}", visitor_headers(100 + i)) for i in range(5)]
    assert Counter((a.status, a.location) for a in clicked) == {(302, here): 5}, clicked

    gone = _api(deployment, "DELETE", f"/api/v1/links/{alias}/", params={"domain": domain})
    assert gone.status_code == 204, (
        f"DELETE ?domain={domain} → {gone.status_code}: {gone.text[:300]}"
    )
    _assert_all(
        _answers(deployment, f"/{alias}", domain), 410, None, f"{alias} on {domain} revoked"
    )
    _assert_all(
        _answers(deployment, f"/{alias}", None), 302, here, f"{alias} on the default domain"
    )

    # 20 clicks on the domain before the revoke, 5 + 20 on the default domain: each its own.
    expected = {domain: REPEATS, "127.0.0.1": 5 + REPEATS}
    stored = {
        host: _clicks(deployment, alias, host, count, timeout=40)
        for host, count in expected.items()
    }
    assert stored == expected, f"stored clicks {stored}, expected {expected}"
    # Let any stray visit (a refused one counted, or one on the wrong link) land, then read again.
    # One 5 s window for both: the domain's link (where refused clicks would land) first.
    late = {domain: _clicks(deployment, alias, domain, REPEATS + 1, timeout=5)}
    late["127.0.0.1"] = _clicks(deployment, alias, "127.0.0.1", 0, timeout=0)
    assert late == expected, f"stored clicks {late} a few seconds later, expected {expected}"


def test_requests_that_reach_no_link_show_on_the_staff_overview(deployment):
    """Orphan visits: unknown codes, a domain's bare root and unknown hosts, counted by every
    worker process and written in the background, show on the overview within seconds."""
    host = _add_domain(deployment, "orphans")
    missing = f"/{_alias('missing')}"
    referrer = f"https://{_host(deployment, 'referrer')}/post"
    _assert_all(
        _answers(deployment, missing, None, {"Referer": referrer}), 404, None, "unknown code"
    )
    _assert_all(_answers(deployment, "/", host), 404, None, "the bare root")
    staff = harness.login(deployment, "admin", "admin")

    def shown() -> str | None:
        page = staff.get(deployment.url("/dashboard/overview/"), timeout=HTTP_TIMEOUT).text
        section = page[page.find('data-testid="orphan-visits"') :]
        return section if missing in section and f"{host}/" in section else None

    section = harness.wait_until(shown, timeout=60, what="the orphan visits on the overview")
    assert referrer in section
