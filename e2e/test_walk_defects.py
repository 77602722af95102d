"""Issue #27's walk through every page, over HTTP against both deployments (which run without
SHORT_URL_BASE, as the marketer's did):

- a password-protected link's visit keeps the referrer the visitor came with, not the unlock
  page its form is POSTed from;
- the links export (the page's CSV and JSON, and `manage.py export_links --base`) gives full
  short URLs that answer their redirect, and names the default domain by its host;
- a link whose visit cap is used up is `limit_reached` in the API and in every export, and with
  a password too it says so before asking for the password.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import harness
from harness import HTTP_TIMEOUT

PASSWORD = "open sesame"  # noqa: S105 - the test link's password
PERSON = {"User-Agent": harness.BROWSER_USER_AGENTS[0]}
HIDDEN_INPUT = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def _visitor(ip: str) -> dict[str, str]:
    return {**PERSON, "X-Forwarded-For": ip}


def _page_export(dep: harness.Deployment, fmt: str) -> dict[str, dict]:
    """My links' export (`/dashboard/export.<fmt>`) as demo signs in and downloads it: {code:
    record}."""
    browser = harness.login(dep, "demo", "demo")
    response = browser.get(dep.url(f"/dashboard/export.{fmt}"), timeout=HTTP_TIMEOUT)
    assert response.status_code == 200, f"export.{fmt} → {response.status_code}"
    text = response.content.decode("utf-8")
    records = json.loads(text)["links"] if fmt == "json" else csv.DictReader(io.StringIO(text))
    return {record["code"]: record for record in records}


def _command_export(dep: harness.Deployment, fmt: str) -> dict[str, dict]:
    out = dep.manage("export_links", "--user", "demo", "--format", fmt, "--base", dep.base_url)
    records = json.loads(out)["links"] if fmt == "json" else csv.DictReader(io.StringIO(out))
    return {record["code"]: record for record in records}


def _exports(dep: harness.Deployment) -> Iterator[tuple[str, dict[str, dict]]]:
    """(which export, its records) of the page's CSV and JSON, then the command's, each read
    when the one before has been looked at."""
    for where, read in (("page", _page_export), ("export_links", _command_export)):
        for fmt in ("csv", "json"):
            yield f"{where} {fmt}", read(dep, fmt)


def test_a_password_links_visit_keeps_the_referrer_the_visitor_came_with(deployment):
    long_url = harness.unique_url("walk-password-referrer")
    code = harness.create_link(deployment, long_url, password=PASSWORD)["code"]
    came_from = f"https://news.example.com/spring?issue=4&run={code}"

    browser = deployment.session()
    browser.headers.update(_visitor("81.2.69.60"))
    page = browser.get(
        deployment.url(f"/{code}"),
        headers={"Referer": came_from},
        allow_redirects=False,
        timeout=HTTP_TIMEOUT,
    )
    assert page.status_code == 200, f"GET /{code} → {page.status_code}: {page.text[:300]}"
    # A browser sends the form's hidden fields as the page has them, with the password typed;
    # its Referer is the unlock page itself.
    hidden = {name: html.unescape(value) for name, value in HIDDEN_INPUT.findall(page.text)}
    hidden.pop("csrfmiddlewaretoken", None)  # post_form sends the page's token
    right = harness.post_form(
        deployment, browser, f"/{code}", page.text, {**hidden, "password": PASSWORD}
    )
    assert (right.status_code, right.headers.get("Location")) == (303, long_url), right.text[:300]

    seen = harness.wait_for_visits(deployment, code, 1, timeout=40)
    assert seen.reached, f"stored {seen.stored} of 1: {seen.history}"
    # The visit as stored (the link's visits CSV), not the unlock page it was POSTed from.
    owner = harness.login(deployment, "demo", "demo")
    visits = owner.get(deployment.url(f"/dashboard/links/{code}/visits.csv"), timeout=HTTP_TIMEOUT)
    assert visits.status_code == 200, visits.text[:300]
    rows = list(csv.DictReader(io.StringIO(visits.content.decode("utf-8"))))
    assert [row["referrer"] for row in rows] == [came_from], rows


def test_the_exports_short_urls_are_full_and_answer_their_redirect(deployment):
    long_url = harness.unique_url("walk-export")
    code = harness.create_link(deployment, long_url)["code"]
    alias = f"walk-{code.lower()}"
    harness.create_link(deployment, long_url + "&alias=1", alias=alias)

    for where, records in _exports(deployment):
        for wanted, destination in ((code, long_url), (alias, long_url + "&alias=1")):
            record = records[wanted]
            short_url = record["short_url"]
            assert short_url == f"{deployment.base_url}/{wanted}", (where, record)
            assert record["domain"] == harness.HOST, (where, record)
            parts = urlsplit(short_url)
            answer = harness.get_fresh(parts.port, parts.path, _visitor("81.2.69.61"))
            assert (answer.status, answer.location) == (302, destination), (where, short_url)


def test_a_used_up_cap_is_limit_reached_in_the_api_and_every_export(deployment):
    link = harness.create_link(deployment, harness.unique_url("walk-cap"), max_visits=1)
    code = link["code"]
    first = harness.get_fresh(deployment.port, f"/{code}", _visitor("81.2.69.62"))
    second = harness.get_fresh(deployment.port, f"/{code}", _visitor("81.2.69.63"))
    assert (first.status, second.status) == (302, 410)

    shown = harness.api_get(deployment, f"/api/v1/links/{code}/")
    assert (shown["status"], shown["is_active"], shown["visits_left"]) == (
        "limit_reached",
        False,
        0,
    ), shown
    for where, records in _exports(deployment):
        assert records[code]["status"] == "limit_reached", (where, records[code])


def test_a_password_link_at_its_limit_says_so_before_asking_for_the_password(deployment):
    long_url = harness.unique_url("walk-password-cap")
    code = harness.create_link(deployment, long_url, password=PASSWORD, max_visits=1)["code"]
    asked = harness.get_fresh(deployment.port, f"/{code}", _visitor("81.2.69.64"))
    assert asked.status == 200 and b'name="password"' in asked.body
    through = harness.get_fresh(
        deployment.port, f"/{code}", {**_visitor("81.2.69.64"), "X-Link-Password": PASSWORD}
    )
    assert (through.status, through.location) == (302, long_url)

    for index in range(4):  # fresh connections: every worker process answers
        dead = harness.get_fresh(deployment.port, f"/{code}", _visitor(f"81.2.69.{70 + index}"))
        assert dead.status == 410, (dead.status, dead.body[:300])
        assert b"reached its limit" in dead.body and b'name="password"' not in dead.body
