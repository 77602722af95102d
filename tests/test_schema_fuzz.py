"""Schemathesis against /api/v1/schema/: no 5xx, and every answer matches the published schema.

Runs in-process against the WSGI app (so on whichever backend the suite runs: SQLite + locmem,
or MariaDB + Redis), signed in with a token, a bounded number of examples per operation.
"""

import json
import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from links.tests.factories import UrlLinkFactory
from shorturl_project.wsgi import application


def _published_schema() -> dict:
    """Exactly what GET /api/v1/schema/ serves, built without a request.

    Built here rather than fetched at collection time, when a throttle counter left in a shared
    Redis by an earlier run could refuse the fetch. (schemathesis.pytest.from_fixture would defer
    the fetch into a test, but does not work with pytest 9 yet.) test_api.py checks the endpoint.
    """
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


schema = schemathesis.openapi.from_dict(_published_schema())
schema.app = application  # requests go to the WSGI app in-process


@pytest.fixture
def keep_test_connection(db):
    """Requests reach the WSGI app in this thread, inside the test's transaction: Django must not
    close that connection when a request starts or ends (its own test client does the same)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def no_throttling(settings):
    """Throttling has its own tests; here schemathesis' unauthenticated probes would hit it."""
    rates = {scope: "1000000/min" for scope in ("api_write", "api_read", "anon")}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}


@pytest.fixture
def auth_headers(keep_test_connection, no_throttling, user):
    token = Token.objects.create(user=user)
    # A few real links, so that generated codes sometimes name one (the alias is shaped like
    # the examples schemathesis draws from the schema).
    for alias in ("spring-sale", "aZ3kP9q-x"):
        UrlLinkFactory(owner=user, long_url=f"https://www.example.com/{alias}", alias=alias)
    return {"Authorization": f"Token {token.key}"}


@schema.parametrize()
@settings(
    # Bounded so CI stays quick; SCHEMATHESIS_MAX_EXAMPLES=500 for a deeper local run.
    max_examples=int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25")),
    deadline=None,
    # The token and sample links are meant to be shared by all the examples of an operation.
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_api_matches_its_schema(case, auth_headers):
    """Generated requests (valid and invalid) never get a 5xx or an off-schema response."""
    excluded = [
        # A schema cannot say which URLs exist, which aliases are free or that an expiry must
        # be in the future, so schema-valid input is still refused (400) by the rules.
        positive_data_acceptance,
    ]
    if case.operation.path == "/api/v1/links/bulk/":
        # Bad items are reported per item in a 200 answer by design, not by refusing the call.
        excluded.append(negative_data_rejection)
    case.call_and_validate(headers=auth_headers, excluded_checks=excluded)
