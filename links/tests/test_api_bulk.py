"""POST /api/v1/links/bulk/: many URLs in one call, each item succeeding or failing alone."""

import math
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from audit.models import AuditEntry
from links.models import CodeType, UniqueCode, UrlLink
from links.services.bulk import link_create_many
from links.services.create import link_create
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db
BULK = "/api/v1/links/bulk/"


@pytest.fixture
def api(user):
    return client_for(user)


def test_mixed_items_get_one_result_each_in_order(api, user):
    existing = UrlLinkFactory(owner=user, long_url="https://example.com/already")
    UrlLinkFactory(owner=user, long_url="https://example.com/taken", alias="taken-alias")

    response = api.post(
        BULK,
        {
            "items": [
                {"long_url": "https://example.com/one"},
                {"long_url": "ftp://example.com/nope"},
                {"long_url": "https://example.com/already"},
                {"long_url": "https://example.com/two", "alias": "two-alias", "title": "Two"},
                {"long_url": "https://example.com/three", "alias": "taken-alias"},
                {"long_url": "https://example.com/four", "redirect_type": 303, "title": "x" * 201},
                "not an object",
                {"long_url": "https://example.com/one"},
            ]
        },
        format="json",
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["created"], body["existing"], body["failed"]) == (2, 2, 4)
    results = body["results"]
    assert [r["index"] for r in results] == list(range(8))
    assert [r["status"] for r in results] == [201, 400, 200, 201, 400, 400, 400, 200]
    assert results[0]["link"]["long_url"] == "https://example.com/one"
    assert results[0]["errors"] is None
    assert results[1] == {
        "index": 1,
        "status": 400,
        "link": None,
        "errors": {"long_url": ["Only http and https URLs can be shortened."]},
    }
    assert results[2]["link"]["code"] == existing.code
    assert results[3]["link"]["code"] == "two-alias"
    assert results[3]["link"]["title"] == "Two"
    assert results[4]["errors"] == {
        "alias": ["The alias “taken-alias” is already taken; “taken-alias-2” is free."]
    }
    # Every problem of an item is reported at once.
    assert set(results[5]["errors"]) == {"redirect_type", "title"}
    assert results[6]["errors"] == {
        "non_field_errors": ["Invalid data. Expected a dictionary, but got str."]
    }
    # A URL repeated in the call is shortened once.
    assert results[7]["link"]["code"] == results[0]["link"]["code"]

    assert set(UrlLink.objects.filter(owner=user).values_list("long_url", flat=True)) == {
        "https://example.com/already",
        "https://example.com/taken",
        "https://example.com/one",
        "https://example.com/two",
    }


def test_created_links_work_at_once(api):
    body = api.post(
        BULK,
        {"items": [{"long_url": f"https://example.com/{i}"} for i in range(3)]},
        format="json",
    ).json()

    for result in body["results"]:
        code = result["link"]["code"]
        redirect = APIClient().get(f"/{code}")
        assert redirect.status_code == 302
        assert redirect["Location"] == result["link"]["long_url"]
        assert api.get(f"/api/v1/links/{code}/").status_code == 200


def test_an_alias_used_twice_in_one_call_is_given_to_the_first_item(api):
    body = api.post(
        BULK,
        {
            "items": [
                {"long_url": "https://example.com/a", "alias": "same-alias"},
                {"long_url": "https://example.com/b", "alias": "same-alias"},
            ]
        },
        format="json",
    ).json()

    assert [r["status"] for r in body["results"]] == [201, 400]
    assert UrlLink.objects.get(code="same-alias").long_url == "https://example.com/a"


def test_a_new_alias_redirects_at_once(api):
    api.post(
        BULK,
        {"items": [{"long_url": "https://example.com/a", "alias": "fresh-alias"}]},
        format="json",
    )

    assert APIClient().get("/fresh-alias")["Location"] == "https://example.com/a"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"items": [{"long_url": "https://example.com/"}] * 1001},
            "Send at most 1000 URLs per call.",
        ),
        ({"items": []}, "Send at least one URL."),
        ({}, "This field is required."),
        (
            {"items": {"long_url": "https://example.com/"}},
            'Expected a list of items but got type "dict".',
        ),
    ],
)
def test_a_call_without_1_to_1000_items_answers_400_and_creates_nothing(api, payload, message):
    response = api.post(BULK, payload, format="json")

    assert response.status_code == 400
    assert response.json() == {"items": [message]}
    assert not UrlLink.objects.exists()


def test_bulk_needs_credentials():
    response = APIClient().post(
        BULK, {"items": [{"long_url": "https://example.com/"}]}, format="json"
    )

    assert response.status_code == 401


def test_bulk_malformed_json_answers_400(api):
    assert api.post(BULK, "{", content_type="application/json").status_code == 400


@pytest.mark.parametrize("strategy", ["pool", "sequence", "hash"])
def test_1000_urls_take_a_bounded_number_of_queries(api, user, settings, strategy, domain_table):
    """No per-item round trips: the query count does not grow with the number of items."""
    settings.SHORTURL_CODE_STRATEGY = strategy
    link_create(
        user=user, long_url="https://example.com/warm-up"
    )  # first use of a strategy may refill/warm
    api.get("/api/v1/links/")  # the token's first use records when it was last used
    items = [{"long_url": f"https://example.com/page/{i}"} for i in range(1000)]

    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        response = api.post(BULK, {"items": items}, format="json")
    elapsed = time.perf_counter() - started

    assert response.status_code == 200
    assert response.json()["created"] == 1000
    codes = [r["link"]["code"] for r in response.json()["results"]]
    assert len(set(codes)) == 1000
    assert UrlLink.objects.filter(owner=user, code__in=codes, code_type=strategy).count() == 1000
    # Every query but the inserts' is one per call, never one per item: 23 of them. SQLite
    # splits each insert into batches (999 variables over the table's columns, so each new column
    # can add one); MySQL needs one statement for the links and one for their audit entries.
    inserts = 0
    for model in (UrlLink, AuditEntry):
        columns = len([field for field in model._meta.concrete_fields if not field.primary_key])
        inserts += math.ceil(1000 / (999 // columns)) if connection.vendor == "sqlite" else 1
    assert len(queries.captured_queries) <= 23 + inserts, [q["sql"][:80] for q in queries]
    assert elapsed < 20  # generous for a shared CI machine; typically well under 2 s
    print(f"bulk 1000 ({strategy}): {elapsed:.2f}s, {len(queries.captured_queries)} queries")


def test_hash_codes_skip_codes_taken_by_other_owners_in_one_call(user, other_user, settings):
    """Hash codes of the same URL collide across owners; the bulk call moves on to the next."""
    settings.SHORTURL_CODE_STRATEGY = "hash"
    urls = [f"https://example.com/shared/{i}" for i in range(20)]
    theirs = link_create_many(user=other_user, items=[{"long_url": url} for url in urls])

    mine = link_create_many(user=user, items=[{"long_url": url} for url in urls])

    assert all(result.created for result in mine)
    their_codes = {r.link.code for r in theirs}
    my_codes = {r.link.code for r in mine}
    assert len(my_codes) == 20
    assert not their_codes & my_codes


def test_the_service_reports_every_rule_an_item_breaks(user):
    [result] = link_create_many(
        user=user, items=[{"long_url": "ftp://example.com/", "alias": "ad"}]
    )

    assert result.link is None
    assert result.errors == {
        "long_url": ["Only http and https URLs can be shortened."],
        "alias": ["Use 3 to 32 characters: letters, digits, '-' and '_'."],
    }


def test_pool_codes_are_marked_used(user):
    results = link_create_many(
        user=user, items=[{"long_url": f"https://example.com/{i}"} for i in range(30)]
    )

    codes = [r.link.code for r in results]
    assert all(r.link.code_type == CodeType.POOL for r in results)
    assert UniqueCode.objects.filter(code__in=codes, status="used").count() == 30
