"""What a browser dashboard on another origin (Shlink's web UI) needs of /rest/ as a whole: CORS
on every route, known or not, errors included (compat.shlink.cors); every route under
/rest/v1/, /rest/v2/ and /rest/v3/; the default domain as the authority it can reach."""

from __future__ import annotations

import logging

import pytest
from rest_framework.test import APIClient

from compat.shlink.tests.test_shlink_api import assert_problem, shlink_client
from core.tests.test_bad_requests_and_outages import database_down  # noqa: F401 (a fixture)
from links.models import Domain
from links.services.create import link_create

ORIGIN = "https://app.shlink.io"


def preflight(path: str, method: str = "GET"):
    return APIClient().options(
        path,
        HTTP_ORIGIN=ORIGIN,
        HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="x-api-key, content-type",
    )


# --- CORS --------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "methods"),
    [
        ("/rest/v3/short-urls", "GET, POST"),
        ("/rest/v3/short-urls/some-code", "GET, PATCH, DELETE"),
        ("/rest/v3/short-urls/some-code/visits", "GET, DELETE"),
        ("/rest/v3/short-urls/some-code/redirect-rules", "GET, POST"),
        ("/rest/v1/short-urls/some-code/redirect-rules", "GET, POST"),
        ("/rest/v3/tags/promo/visits", "GET"),
        ("/rest/v3/visits/non-orphan", "GET"),
        ("/rest/v3/tags", "GET, PUT, DELETE"),
        ("/rest/v3/domains", "GET"),
        ("/rest/v3/visits/orphan", "GET, DELETE"),
        ("/rest/health", "GET"),
        ("/rest/v2/short-urls/some-code", "GET, PATCH, DELETE"),
        ("/rest/v1/tags", "GET, PUT, DELETE"),
    ],
)
def test_a_preflight_names_the_methods_of_its_route(path, methods, django_assert_num_queries):
    """Answered without a key, and without touching the database."""
    with django_assert_num_queries(0):
        response = preflight(path, method=methods.split(", ")[-1])
    assert response.status_code == 204
    assert response.content == b""
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Allow-Methods"] == methods
    allowed = {name.strip().lower() for name in response["Access-Control-Allow-Headers"].split(",")}
    assert {"x-api-key", "content-type", "accept"} <= allowed
    assert response["Access-Control-Max-Age"] == "3600"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", ["/rest/v3/short-urls/x/qr-code", "/rest/v4/short-urls", "/rest/anything/at/all"]
)
def test_a_preflight_to_an_unknown_route_lets_the_browser_read_its_404(path):
    """As Shlink answers it: every method, so the request goes and its not-found problem (which
    carries the header too) reaches the client rather than a CORS failure."""
    response = preflight(path, method="DELETE")
    assert response.status_code == 204
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Access-Control-Allow-Methods"] == "GET, POST, PUT, PATCH, DELETE"
    for method in ("get", "post", "delete"):
        answer = getattr(APIClient(), method)(path, HTTP_ORIGIN=ORIGIN)
        assert_problem(answer, 404, "not-found")
        assert answer["Access-Control-Allow-Origin"] == "*"


@pytest.mark.django_db
def test_answers_and_errors_carry_allow_origin(user):
    shlink = shlink_client(user)
    link_create(user=user, long_url="https://example.com/c", alias="cors-one")
    answers = {
        "200": shlink.get("/rest/v3/short-urls/cors-one", HTTP_ORIGIN=ORIGIN),
        "204": shlink.delete("/rest/v3/short-urls/cors-one", HTTP_ORIGIN=ORIGIN),
        "400": shlink.get("/rest/v3/short-urls", {"orderBy": "x"}, HTTP_ORIGIN=ORIGIN),
        "401": APIClient().get("/rest/v3/short-urls", HTTP_ORIGIN=ORIGIN),
        "404": shlink.get("/rest/v3/short-urls/nope-nope", HTTP_ORIGIN=ORIGIN),
        "405": shlink.put("/rest/v3/short-urls", {}, format="json", HTTP_ORIGIN=ORIGIN),
        "501": shlink.get("/rest/v3/mercure-info", HTTP_ORIGIN=ORIGIN),
        "health": APIClient().get("/rest/health", HTTP_ORIGIN=ORIGIN),
    }
    statuses = {name: answer.status_code for name, answer in answers.items()}
    assert statuses == {
        "200": 200,
        "204": 204,
        "400": 400,
        "401": 401,
        "404": 404,
        "405": 405,
        "501": 501,
        "health": 200,
    }
    assert {name: answer["Access-Control-Allow-Origin"] for name, answer in answers.items()} == {
        name: "*" for name in answers
    }


def test_a_database_outage_carries_allow_origin_too(database_down, caplog):  # noqa: F811
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_X_API_KEY="su_any-key")
    with caplog.at_level(logging.INFO):
        response = client.get("/rest/v3/short-urls", HTTP_ORIGIN=ORIGIN)
        assert preflight("/rest/v3/short-urls").status_code == 204  # no database needed
    assert response.status_code == 503
    assert response["Access-Control-Allow-Origin"] == "*"


@pytest.mark.django_db
def test_cors_stays_under_rest(user):
    """Our own API and pages are for this site's pages: no CORS, no preflight answered."""
    from links.tests.helpers import client_for

    assert (
        not client_for(user)
        .get("/api/v1/links/", HTTP_ORIGIN=ORIGIN)
        .has_header("Access-Control-Allow-Origin")
    )
    response = APIClient().options("/api/v1/links/", HTTP_ORIGIN=ORIGIN)
    assert not response.has_header("Access-Control-Allow-Origin")
    assert not response.has_header("Access-Control-Allow-Methods")


# --- /rest/v1, /rest/v2, /rest/v3 --------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("version", ["v1", "v2", "v3"])
def test_every_version_serves_the_same_routes(user, version):
    shlink = shlink_client(user)
    created = shlink.post(
        f"/rest/{version}/short-urls",
        {"longUrl": "https://example.com/v", "customSlug": f"made-in-{version}"},
        format="json",
    )
    assert created.status_code == 200, created.content
    code = created.json()["shortCode"]
    assert shlink.get(f"/rest/{version}/short-urls/{code}").json()["longUrl"] == (
        "https://example.com/v"
    )
    listed = shlink.get(f"/rest/{version}/short-urls").json()["shortUrls"]["data"]
    assert [item["shortCode"] for item in listed] == [code]
    assert shlink.get(f"/rest/{version}/tags").status_code == 200
    assert shlink.get(f"/rest/{version}/domains").status_code == 200
    assert APIClient().get(f"/rest/{version}/health").json()["status"] == "pass"
    assert_problem(shlink.get(f"/rest/{version}/short-urls/not-there"), 404, "short-url-not-found")
    assert_problem(shlink.get(f"/rest/{version}/no-such-route"), 404, "not-found")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/rest/v4/short-urls", "/rest/v0/tags", "/rest/v33/tags"])
def test_other_versions_are_not_found(user, path):
    assert_problem(shlink_client(user).get(path), 404, "not-found")


# --- The default domain's authority ------------------------------------------------------------


def _domains(client, **extra) -> list[tuple[str, bool]]:
    body = client.get("/rest/v3/domains", **extra).json()["domains"]
    return [(row["domain"], row["isDefault"]) for row in body["data"]]


@pytest.mark.django_db
def test_the_default_domain_is_the_host_and_port_the_client_reached(user):
    """Under `make run`: 127.0.0.1:8000. The web UI calls each domain (its health) and names it
    back in `domain=`, which finds the default domain's links."""
    shlink = shlink_client(user)
    Domain.objects.create(host="go.example.org")
    here = {"HTTP_HOST": "127.0.0.1:8000"}
    assert _domains(shlink, **here) == [("127.0.0.1:8000", True), ("go.example.org", False)]
    assert _domains(shlink, HTTP_HOST="localhost") == [
        ("localhost", True),
        ("go.example.org", False),
    ]
    made = shlink.post(
        "/rest/v3/short-urls",
        {
            "longUrl": "https://example.com/d",
            "customSlug": "on-default",
            "domain": "127.0.0.1:8000",
        },
        format="json",
        **here,
    )
    assert made.status_code == 200, made.content
    assert made.json()["domain"] is None
    listed = shlink.get("/rest/v3/short-urls", {"domain": "127.0.0.1:8000"}, **here).json()
    assert [item["shortCode"] for item in listed["shortUrls"]["data"]] == ["on-default"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("base", "authority"),
    [
        ("https://s.example.com", "s.example.com"),
        ("https://S.Example.com:8443/", "s.example.com:8443"),
        ("http://[::1]:8000", "[::1]:8000"),
    ],
)
def test_the_default_domain_is_short_url_bases_authority(user, settings, base, authority):
    settings.SHORT_URL_BASE = base
    assert _domains(shlink_client(user), HTTP_HOST="127.0.0.1:8000")[0] == (authority, True)
