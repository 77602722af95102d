"""Issue #26's one home per rule, over HTTP against both deployments: the URL policy adds the
missing `https://` for the API as for the web form, and a link whose visit cap is used up is
`limit_reached` (not active) in the API and found by My links' stopped filter, the moment its
redirect answers 410 (embedded: the node's counter files; services: Redis), before the node's
runner has saved the count to the link row."""

from __future__ import annotations

import secrets

import harness
from harness import HTTP_TIMEOUT

PERSON = {"X-Forwarded-For": "81.2.69.50", "User-Agent": harness.BROWSER_USER_AGENTS[0]}


def test_the_api_adds_https_to_a_bare_host_and_the_redirect_sends_it(deployment):
    bare = f"example.com/e2e/rule-homes?run={secrets.token_hex(6)}"
    link = harness.create_link(deployment, bare)
    assert link["long_url"] == "https://" + bare, link

    answer = harness.get_fresh(deployment.port, f"/{link['code']}", PERSON)
    assert (answer.status, answer.location) == (302, "https://" + bare)

    # A full URL stays exactly as sent; another scheme stays refused.
    full = harness.create_link(deployment, "http://" + bare + "&full=1")
    assert full["long_url"] == "http://" + bare + "&full=1"
    with deployment.api() as api:
        refused = api.post(
            deployment.url("/api/v1/links/"),
            json={"long_url": "mailto:team@example.com"},
            timeout=HTTP_TIMEOUT,
        )
    assert refused.status_code == 400, refused.text[:300]
    assert "Only http and https" in refused.json()["long_url"][0]


def test_a_capped_out_link_is_limit_reached_in_the_api_and_my_links(deployment):
    link = harness.create_link(deployment, harness.unique_url("rule-homes-cap"), max_visits=1)
    code = link["code"]
    assert (link["status"], link["is_active"], link["visits_left"]) == ("active", True, 1)

    first = harness.get_fresh(deployment.port, f"/{code}", PERSON)
    second = harness.get_fresh(deployment.port, f"/{code}", PERSON)
    assert (first.status, second.status) == (302, 410)

    shown = harness.api_get(deployment, f"/api/v1/links/{code}/")
    assert (shown["status"], shown["is_active"], shown["visits_left"]) == (
        "limit_reached",
        False,
        0,
    ), shown
    assert code in harness.listed_codes(deployment, active="false")
    assert code not in harness.listed_codes(deployment, active="true")

    browser = harness.login(deployment, "demo", "demo")
    stopped = browser.get(
        deployment.url("/dashboard/"), params={"status": "expired"}, timeout=HTTP_TIMEOUT
    )
    assert stopped.status_code == 200
    assert code in stopped.text and "Visit limit reached" in stopped.text
    working = browser.get(
        deployment.url("/dashboard/"), params={"status": "active"}, timeout=HTTP_TIMEOUT
    )
    assert working.status_code == 200 and f"/{code}" not in working.text
