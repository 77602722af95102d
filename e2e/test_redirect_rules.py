"""Issue #27's redirect rules over HTTP against both deployments: rules set through Shlink's API
(`POST /rest/v3/short-urls/{shortCode}/redirect-rules`, as Shlink's web UI sends them) send
visitors by their query string and by the date, in every web worker; a before-date rule stops
taking visitors once its moment has passed, with no edit; Shlink's GET and our own API read the
same rules back; what ours cannot hold is Shlink's invalid-data problem; [] removes them."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import harness
from harness import HTTP_TIMEOUT, get_fresh, visitor_headers

CLICKS = 24  # on fresh connections, so that every web worker answers some


def _shlink(deployment, method: str, path: str, **kwargs):
    """A Shlink client's call, the deployment's token as its X-Api-Key."""
    with deployment.session() as session:
        return session.request(
            method,
            deployment.url(f"/rest/v3{path}"),
            headers={"X-Api-Key": deployment.token},
            timeout=HTTP_TIMEOUT,
            **kwargs,
        )


def _condition(type_: str, value: str | None, key: str | None = None) -> dict:
    return {"type": type_, "matchKey": key, "matchValue": value}


def _destinations(deployment, code: str, query: str = "") -> set[str]:
    """Where CLICKS different people asking for /<code><query> are sent."""

    def one(index: int) -> str:
        answer = get_fresh(deployment.port, f"/{code}{query}", visitor_headers(index))
        assert answer.status == 302, f"GET /{code}{query} → {answer.status} {answer.body[:200]}"
        return answer.location or ""

    with ThreadPoolExecutor(8) as pool:
        return set(pool.map(one, range(CLICKS)))


def test_rules_set_through_shlink_send_visitors_by_query_and_date(deployment):
    long_url = harness.unique_url("rules-default")
    code = harness.create_link(deployment, long_url)["code"]
    urls = {name: harness.unique_url(f"rules-{name}") for name in ("flash", "over", "spring")}
    now = datetime.now(UTC)
    flash_ends = (now + timedelta(seconds=8)).replace(microsecond=0)
    rules = [
        {
            "longUrl": urls["flash"],
            "conditions": [
                _condition("valueless-query-param", None, "flash"),
                _condition("before-date", flash_ends.isoformat()),
            ],
        },
        {
            "longUrl": urls["over"],  # an offer that ended yesterday: never taken
            "conditions": [
                _condition("query-param", "spring", "campaign"),
                _condition("before-date", (now - timedelta(days=1)).isoformat()),
            ],
        },
        {
            "longUrl": urls["spring"],
            "conditions": [_condition("query-param", "spring", "campaign")],
        },
    ]
    answer = _shlink(
        deployment, "POST", f"/short-urls/{code}/redirect-rules", json={"redirectRules": rules}
    )
    assert answer.status_code == 200, answer.text[:500]
    body = answer.json()
    assert body["defaultLongUrl"] == long_url
    assert [(rule["longUrl"], rule["priority"]) for rule in body["redirectRules"]] == [
        (urls["flash"], 1),
        (urls["over"], 2),
        (urls["spring"], 3),
    ]
    listed = _shlink(deployment, "GET", f"/short-urls/{code}/redirect-rules")
    assert listed.status_code == 200 and listed.json() == body
    # Our own API reads the same rules, in its spelling.
    native = harness.api_get(deployment, f"/api/v1/links/{code}/")["rules"]
    assert native[2] == {"query": {"campaign": "spring"}, "url": urls["spring"]}
    assert native[0]["before"] == flash_ends.strftime("%Y-%m-%dT%H:%M:%SZ")

    # Every worker sends each visitor by the rules (the query goes on to the rule's URL).
    assert _destinations(deployment, code, "?campaign=spring") == {
        f"{urls['spring']}&campaign=spring"
    }
    assert _destinations(deployment, code, "?flash") == {f"{urls['flash']}&flash"}
    assert _destinations(deployment, code, "?campaign=autumn") == {f"{long_url}&campaign=autumn"}
    assert _destinations(deployment, code) == {long_url}
    assert datetime.now(UTC) < flash_ends, "the machine was too slow to see the flash sale open"

    # The flash sale ends by itself: the link is not edited, its cached entries stay.
    time.sleep(max(0.0, (flash_ends - datetime.now(UTC)).total_seconds()) + 0.5)
    assert _destinations(deployment, code, "?flash") == {f"{long_url}&flash"}
    assert _destinations(deployment, code, "?campaign=spring") == {
        f"{urls['spring']}&campaign=spring"
    }


def test_what_the_rules_cannot_hold_is_refused_and_an_empty_list_removes_them(deployment):
    long_url = harness.unique_url("rules-refused")
    code = harness.create_link(deployment, long_url)["code"]
    spring = harness.unique_url("rules-refused-spring")
    path = f"/short-urls/{code}/redirect-rules"
    kept = {
        "redirectRules": [
            {"longUrl": spring, "conditions": [_condition("any-value-query-param", None, "ref")]}
        ]
    }
    assert _shlink(deployment, "POST", path, json=kept).status_code == 200

    refused = _shlink(
        deployment,
        "POST",
        path,
        json={
            "redirectRules": [
                {"longUrl": spring, "conditions": [_condition("browser", "chrome")]},
            ]
        },
    )
    assert refused.status_code == 400
    assert refused.headers["Content-Type"] == "application/problem+json"
    problem = refused.json()
    assert problem["type"] == "https://shlink.io/api/error/invalid-data"
    assert problem["errors"]["redirectRules"][0].startswith(
        "redirectRules[0].conditions[0].type: conditions on the visitor's browser"
    )
    # Nothing changed: the rule that was there still sends people.
    assert _destinations(deployment, code, "?ref=mail") == {f"{spring}&ref=mail"}

    emptied = _shlink(deployment, "POST", path, json={"redirectRules": []})
    assert emptied.json() == {"defaultLongUrl": long_url, "redirectRules": []}
    assert _destinations(deployment, code, "?ref=mail") == {f"{long_url}&ref=mail"}
    assert _shlink(deployment, "GET", f"/short-urls/{code}").json()["hasRedirectRules"] is False
