"""Issue #14 over HTTP against both deployments: a visitor's query string goes on to the long
URL (per link), `/<code>/` redirects like `/<code>`, and alias creates warn of case twins and
name a free alias when the one asked for is taken."""

from __future__ import annotations

import secrets
from urllib.parse import parse_qsl, urlsplit

import harness
from harness import HTTP_TIMEOUT


def _location(dep: harness.Deployment, path: str) -> str:
    answer = harness.get_fresh(dep.port, path)
    assert answer.status == 302, f"GET {path} answered {answer.status}, expected 302"
    return answer.location


def test_the_visitors_query_string_is_merged_into_the_long_url(deployment):
    long_url = harness.unique_url("query")  # …?run=<hex>
    link = harness.create_link(deployment, long_url)
    assert link["pass_query"] is True
    code = link["code"]
    for path in (f"/{code}?utm_source=mail&run=visitor", f"/{code}/?utm_source=mail&run=visitor"):
        for _ in range(3):  # the first answer may fill the caches; the others come from them
            location = _location(deployment, path)
            query = dict(parse_qsl(urlsplit(location).query))
            assert query == {"run": long_url.rsplit("=", 1)[1], "utm_source": "mail"}, (
                f"GET {path} → {location}; the link's own run= must win, utm_source be added"
            )
    assert _location(deployment, f"/{code}") == long_url  # without one: unchanged


def test_turning_pass_through_off_is_seen_by_every_worker_at_once(deployment):
    long_url = harness.unique_url("no-query")
    code = harness.create_link(deployment, long_url)["code"]
    for _ in range(4):  # cached in several workers
        assert _location(deployment, f"/{code}?x=1").endswith("&x=1")
    with deployment.api() as api:
        changed = api.patch(
            deployment.url(f"/api/v1/links/{code}/"),
            json={"pass_query": False},
            timeout=HTTP_TIMEOUT,
        )
    assert changed.status_code == 200 and changed.json()["pass_query"] is False, changed.text
    for _ in range(8):  # new connections: any worker process may answer
        assert _location(deployment, f"/{code}?x=1") == long_url


def test_a_trailing_slash_on_an_alias_redirects(deployment):
    alias = f"slash-{secrets.token_hex(4)}"
    long_url = harness.unique_url("slash")
    harness.create_link(deployment, long_url, alias=alias)
    assert _location(deployment, f"/{alias}/") == long_url


def test_alias_hints(deployment):
    alias = f"Sale-{secrets.token_hex(4)}"
    harness.create_link(deployment, harness.unique_url("hint"), alias=alias.lower())
    twin = harness.create_link(deployment, harness.unique_url("hint"), alias=alias)
    assert "only by upper and lower case" in twin["warnings"]["alias"][0], twin
    with deployment.api() as api:
        taken = api.post(
            deployment.url("/api/v1/links/"),
            json={"long_url": harness.unique_url("hint"), "alias": alias},
            timeout=HTTP_TIMEOUT,
        )
    assert taken.status_code == 400
    assert taken.json() == {
        "alias": [f"The alias “{alias}” is already taken; “{alias}-2” is free."]
    }


def test_bulk_answers_the_case_warning_per_item(deployment):
    alias = f"Bulk-{secrets.token_hex(4)}"
    harness.create_link(deployment, harness.unique_url("bulk-hint"), alias=alias.lower())
    with deployment.api() as api:
        answer = api.post(
            deployment.url("/api/v1/links/bulk/"),
            json={
                "items": [
                    {"long_url": harness.unique_url("bulk-hint"), "alias": alias},
                    {"long_url": harness.unique_url("bulk-hint")},
                ]
            },
            timeout=HTTP_TIMEOUT,
        )
    assert answer.status_code == 200, answer.text[:500]
    twin, plain = answer.json()["results"]
    assert twin["status"] == 201, twin
    assert twin["warnings"] == {
        "alias": [
            f"“{alias}” differs from the existing “{alias.lower()}” only by upper and lower "
            "case: people typing it may end up on the other link."
        ]
    }, twin
    assert plain["status"] == 201 and "warnings" not in plain, plain
