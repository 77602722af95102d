"""Shlink's validSince over our link start (valid_since, issue #27): taken on create and edit,
shown in meta.validSince as Shlink writes dates, matched by findIfExists, refused after
validUntil naming it; the list's filters leave a link not started yet in, as Shlink's do
(excludePastValidUntil and excludeMaxVisitsReached say nothing about the start); its visitors
get the "not live yet" 404, as Shlink answers a short URL not yet valid."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from compat.shlink.tests.test_shlink_api import BASE, assert_problem, create, shlink_client
from links.models import LinkStatus, UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db

SINCE = "2031-03-01T09:00:00+00:00"
UNTIL = "2031-06-30T23:59:59+00:00"


@pytest.fixture
def shlink(user):
    return shlink_client(user)


def test_create_with_valid_since_stores_the_start_and_shows_it(shlink, client):
    response = create(
        shlink, longUrl="https://example.com/launch", validSince=SINCE, validUntil=UNTIL
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["meta"] == {"validSince": SINCE, "validUntil": UNTIL, "maxVisits": None}
    link = UrlLink.objects.get(code=body["shortCode"])
    assert link.valid_since == datetime(2031, 3, 1, 9, tzinfo=UTC)
    assert link.status == LinkStatus.SCHEDULED
    assert client.get(f"/{link.code}").status_code == 404  # not valid yet, as in Shlink
    shown = shlink.get(f"{BASE}/short-urls/{link.code}").json()
    assert shown["meta"]["validSince"] == SINCE


def test_any_offset_is_shown_in_utc_as_shlink_writes_dates(shlink):
    body = create(
        shlink, longUrl="https://example.com/tz", validSince="2031-03-01T10:00:00+01:00"
    ).json()
    assert body["meta"]["validSince"] == SINCE


def test_edit_sets_changes_and_clears_the_start(shlink, user):
    code = link_create(user=user, long_url="https://example.com/edit").link.code
    url = f"{BASE}/short-urls/{code}"
    edited = shlink.patch(url, {"validSince": SINCE}, format="json")
    assert edited.status_code == 200, edited.content
    assert edited.json()["meta"]["validSince"] == SINCE
    assert UrlLink.objects.get(code=code).status == LinkStatus.SCHEDULED
    # Fields not sent stay as they are.
    titled = shlink.patch(url, {"title": "Launch"}, format="json").json()
    assert titled["meta"]["validSince"] == SINCE
    cleared = shlink.patch(url, {"validSince": None}, format="json").json()
    assert cleared["meta"]["validSince"] is None
    assert UrlLink.objects.get(code=code).status == LinkStatus.ACTIVE


def test_a_start_after_valid_until_is_invalid_data_naming_valid_since(shlink, user):
    body = assert_problem(
        create(
            shlink,
            longUrl="https://example.com/x",
            validSince="2031-07-01T00:00:00+00:00",
            validUntil=UNTIL,
        ),
        400,
        "invalid-data",
    )
    assert body["invalidElements"] == ["validSince"]
    assert not UrlLink.objects.exists()
    code = create(shlink, longUrl="https://example.com/y", validUntil=UNTIL).json()["shortCode"]
    body = assert_problem(
        shlink.patch(
            f"{BASE}/short-urls/{code}", {"validSince": "2031-07-01T00:00:00Z"}, format="json"
        ),
        400,
        "invalid-data",
    )
    assert body["invalidElements"] == ["validSince"]


def test_find_if_exists_matches_the_start_as_shlink_does(shlink):
    first = create(shlink, longUrl="https://example.com/a", validSince=SINCE, title="A").json()
    same = create(
        shlink, longUrl="https://example.com/a", validSince=SINCE, findIfExists=True
    ).json()
    assert same["shortCode"] == first["shortCode"]  # found though not live yet
    other = create(
        shlink,
        longUrl="https://example.com/a",
        validSince="2031-04-01T00:00:00Z",
        findIfExists=True,
    ).json()
    assert other["shortCode"] != first["shortCode"]


def test_the_list_keeps_links_not_started_yet_under_both_exclusions(shlink, user):
    now = timezone.now()
    later = link_create(
        user=user, long_url="https://example.com/later", valid_since=now + timedelta(days=1)
    ).link
    ended = link_create(
        user=user, long_url="https://example.com/ended", expires_at=now + timedelta(seconds=1)
    ).link
    UrlLink.objects.filter(pk=ended.pk).update(expires_at=now - timedelta(days=1))

    def codes(**params) -> set[str]:
        answer = shlink.get(f"{BASE}/short-urls", params)
        assert answer.status_code == 200, answer.content
        return {item["shortCode"] for item in answer.json()["shortUrls"]["data"]}

    assert codes() == {later.code, ended.code}
    assert codes(excludePastValidUntil="true") == {later.code}
    assert codes(excludeMaxVisitsReached="true") == {later.code, ended.code}
