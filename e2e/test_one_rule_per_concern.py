"""Issue #26's one home per rule, over HTTP against both deployments (embedded: the node runner
runs the periodic jobs; services: Celery beat and a worker):

- a short domain is found by the spelling it was added with: `manage.py domains add` with a
  Unicode name, `set` and `remove` with a URL, capitals or a final dot, the API's `domain` too;
- the periodic jobs come from one list in both modes: visits reach the stats, and the links API
  says the same clicks as the stats.
"""

from __future__ import annotations

import secrets
import time

import harness
import idna
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers


def _wait_for(answer, expected, what: str, timeout: float = 10.0):
    """Poll `answer()` until it gives `expected` (a domain change reaches every worker process
    within a second or so); the last value."""
    deadline = time.monotonic() + timeout
    while True:
        got = answer()
        if got == expected or time.monotonic() >= deadline:
            assert got == expected, f"{what}: {got!r}, expected {expected!r}"
            return got
        time.sleep(0.3)


def test_a_domain_is_found_by_the_spelling_it_was_added_with(deployment):
    unicode_host = f"bücher-{deployment.mode}-{secrets.token_hex(3)}.e2e.test"
    ascii_host = idna.encode(unicode_host).decode()
    added = deployment.manage("domains", "add", unicode_host)
    assert f"Added {ascii_host}" in added, added

    root = harness.unique_url("spelling-root")
    changed = deployment.manage(
        "domains", "set", f"https://{unicode_host.upper()}./", "--root-redirect", root
    )
    assert f"Changed {ascii_host}" in changed, changed
    _wait_for(
        lambda: get_fresh(deployment.port, "/", {"Host": ascii_host}).location,
        root,
        f"GET / on {ascii_host} after `domains set` by its URL",
    )

    long_url = harness.unique_url("spelling-link")
    link = harness.create_link(deployment, long_url, domain=f"https://{unicode_host}/")
    assert ascii_host in link["short_url"], link
    answer = get_fresh(
        deployment.port, f"/{link['code']}", {"Host": ascii_host, **visitor_headers(1)}
    )
    assert (answer.status, answer.location) == (302, long_url), answer

    spare = f"zürich-{deployment.mode}-{secrets.token_hex(3)}.e2e.test"
    assert "Added" in deployment.manage("domains", "add", f"{spare}.")
    removed = deployment.manage("domains", "remove", spare.upper())
    assert f"Removed {spare.upper()}" in removed, removed
    assert idna.encode(spare).decode() not in deployment.manage("domains", "list")


def test_visits_reach_the_stats_and_the_links_api_says_the_same_clicks(deployment):
    long_url = harness.unique_url("one-definition")
    code = harness.create_link(deployment, long_url)["code"]
    for index in range(5):
        answer = get_fresh(deployment.port, f"/{code}", visitor_headers(index))
        assert (answer.status, answer.location) == (302, long_url), answer

    # Stored and rolled up by the periodic jobs: beat's tasks, or the embedded runner's.
    deadline = time.monotonic() + 60
    while True:
        stats = harness.api_get(deployment, f"/api/v1/links/{code}/stats/")
        if stats["total_clicks"] >= 5 or time.monotonic() >= deadline:
            break
        time.sleep(0.5)
    assert (stats["total_clicks"], stats["unique_visitors"]) == (5, 5), stats
    detail = harness.api_get(deployment, f"/api/v1/links/{code}/")
    assert detail["clicks"] == stats["total_clicks"]
    with deployment.session() as session:  # Shlink's clients send the key as X-Api-Key
        shlink = session.get(
            deployment.url(f"/rest/v3/short-urls/{code}"),
            headers={"X-Api-Key": deployment.token},
            timeout=HTTP_TIMEOUT,
        )
    assert shlink.status_code == 200, shlink.text[:300]
    assert shlink.json()["visitsSummary"]["nonBots"] == stats["total_clicks"]
