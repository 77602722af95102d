"""Time spans a caller chooses cost what their limits allow, over HTTP against both deployments
(security round 3, finding 2): one Bitly `clicks?unit=month&units=10000` walked every hour of
833 years (~47 s of CPU) and eight of them kept /healthz from answering for over a minute.

Now that request is a prompt 400, the largest span each family still allows (Bitly's units of
each kind, the stats API's and a tag's longest series, the stats pages' custom range from 2000,
the staff overview's "all time", Shlink's visits since 2000) answers with little CPU in the
server's processes, and /healthz answers while eight of the old requests come in at once."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import harness
import pytest
from harness import HTTP_TIMEOUT

# CPU the server's processes may spend on one request, all of them together: the largest
# allowed request measures well under a second (docs/analytics.md, "Span limits"); the margin
# is for a slow shared machine. The old 10,000 months took ~47 s.
CPU_SECONDS = 5.0
TICKS = 100  # clock ticks per second (SC_CLK_TCK on Linux)
HEALTHZ_SECONDS = 10.0
# The old request, eight at once, as in the audit.
OLD_REQUESTS = 8


def _server_pids(dep: harness.Deployment) -> list[int]:
    return [dep.server_main(), *dep.server_workers()]


def _server_ticks(pids: list[int]) -> int:
    return sum(harness.cpu_ticks(pid) for pid in pids)


def _measured(dep: harness.Deployment, sess, path: str, **params):
    """GET `path`: (the response, CPU seconds the server's processes spent meanwhile)."""
    pids = _server_pids(dep)
    before = _server_ticks(pids)
    response = sess.get(dep.url(path), params=params, timeout=HTTP_TIMEOUT)
    return response, (_server_ticks(pids) - before) / TICKS


def _bitly(dep: harness.Deployment):
    sess = dep.session()
    sess.headers["Authorization"] = f"Bearer {dep.token}"
    return sess


@pytest.fixture(scope="module")
def spans_link(deployment) -> dict:
    return harness.create_link(deployment, harness.unique_url("span-limits"), tags=["e2e-spans"])


def test_ten_thousand_months_are_refused_at_once_and_healthz_keeps_answering(
    deployment, spans_link
):
    path = f"/v4/bitlinks/bit.ly/{spans_link['code']}/clicks"
    with _bitly(deployment) as sess:
        response, cpu = _measured(deployment, sess, path, unit="month", units=10000)
    assert response.status_code == 400, response.text[:500]
    body = response.json()
    assert body["message"] == "INVALID_ARG_UNITS" and "2000-01-01" in body["description"], body
    assert cpu < CPU_SECONDS, f"the refusal cost {cpu:.2f} s of CPU"
    harness.note(deployment, "10,000 months (refused)", f"{cpu:.2f} s CPU")

    def old_request(_: int) -> int:
        with _bitly(deployment) as sess:
            return sess.get(
                deployment.url(path),
                params={"unit": "month", "units": 10000},
                timeout=HTTP_TIMEOUT,
            ).status_code

    with ThreadPoolExecutor(OLD_REQUESTS + 1) as pool:
        answers = pool.map(old_request, range(OLD_REQUESTS))
        started = time.monotonic()
        with deployment.session() as sess:
            health = sess.get(deployment.url("/healthz"), timeout=HEALTHZ_SECONDS)
        waited = time.monotonic() - started
        statuses = list(answers)
    assert health.status_code == 200, health.text[:500]
    assert statuses == [400] * OLD_REQUESTS, statuses
    harness.note(deployment, "/healthz beside 8 × 10,000 months", f"{waited:.2f} s")


def test_the_largest_allowed_span_of_each_family_costs_little(deployment, spans_link):
    code = spans_link["code"]
    sessions = {
        "bitly": _bitly(deployment),
        "token": deployment.api(),
        "owner": harness.login(deployment, "demo", "demo"),
        "staff": harness.login(deployment, "admin", "admin"),
        "shlink": deployment.session(),
    }
    sessions["shlink"].headers["X-Api-Key"] = deployment.token
    costs = []
    try:
        for what, path, params, who in harness.largest_spans(code, "e2e-spans"):
            response, cpu = _measured(deployment, sessions[who], path, **params)
            assert response.status_code == 200, (what, response.status_code, response.text[:500])
            costs.append((what, cpu))
            harness.note(deployment, what, f"{cpu:.2f} s CPU")
    finally:
        for sess in sessions.values():
            sess.close()
    over = [(what, cpu) for what, cpu in costs if cpu >= CPU_SECONDS]
    assert not over, f"over {CPU_SECONDS} s of the server's CPU: {over}"


def test_one_past_each_limit_is_a_400_naming_it(deployment, spans_link):
    code = spans_link["code"]
    bitly = f"/v4/bitlinks/bit.ly/{code}/clicks"
    with _bitly(deployment) as sess:
        units, cpu = _measured(deployment, sess, bitly, unit="hour", units=10001)
        reference, _ = _measured(
            deployment, sess, bitly, unit="day", units=3, unit_reference="2026-03-01T25:00:00Z"
        )
    assert units.status_code == 400 and units.json()["message"] == "INVALID_ARG_UNITS", units.text
    assert "10,000" in units.json()["description"], units.text
    assert cpu < CPU_SECONDS
    assert reference.status_code == 400, reference.text
    assert reference.json()["message"] == "INVALID_ARG_UNIT_REFERENCE", reference.text

    with deployment.api() as api:
        hours = api.get(
            deployment.url(f"/api/v1/links/{code}/stats/"),
            params={"start": "2000-01-01T00:00:00Z", "bucket": "hour"},
            timeout=HTTP_TIMEOUT,
        )
        early = api.get(
            deployment.url(f"/api/v1/links/{code}/stats/"),
            params={"start": "1999-12-31T00:00:00Z", "bucket": "week"},
            timeout=HTTP_TIMEOUT,
        )
    assert hours.status_code == 400 and "366 days" in hours.json()["start"][0], hours.text
    assert early.status_code == 400 and "2000" in early.json()["start"][0], early.text

    with deployment.session() as sess:
        sess.headers["X-Api-Key"] = deployment.token
        shlink = sess.get(
            deployment.url(f"/rest/v3/short-urls/{code}/visits"),
            params={"startDate": "0001-01-01T00:00:00+01:00"},
            timeout=HTTP_TIMEOUT,
        )
    assert shlink.status_code == 400, shlink.text
    assert shlink.json()["invalidElements"] == ["startDate"], shlink.text
