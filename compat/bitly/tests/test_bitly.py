"""Bitly's API v4 subset under /v4/: the bitlink shape, creating (200 for a link the caller had,
201 for a new one), reading, changing, expanding, clicks by unit and their summary, Bitly's error
shape, credentials, an API key's scopes, and who sees what (others' links are NOT_FOUND)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.services import api_key_create, api_key_revoke
from analytics.models import HourlyClick
from core.api.scopes import ApiScope
from links.models import UrlLink
from links.services.change import link_revoke
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.factories import UrlLinkFactory
from serving.hotpath import short_code_of

pytestmark = pytest.mark.django_db

HOST = "testserver"  # the default domain's host when SHORT_URL_BASE is unset
SPRING = "https://www.example.com/spring"
BITLY_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$")


@pytest.fixture
def key(user) -> str:
    return api_key_create(user=user, name="bitly")[1]


def bitly(key: str | None, method: str, path: str, body: dict | None = None, **headers):
    """A call to /v4/<path> with `Authorization: Bearer <key>` (none when key is None)."""
    if key is not None:
        headers.setdefault("HTTP_AUTHORIZATION", f"Bearer {key}")
    client = Client()
    call = getattr(client, method)
    if method in ("post", "patch"):
        return call(f"/v4/{path}", body or {}, content_type="application/json", **headers)
    return call(f"/v4/{path}", body or {}, **headers)


def _clicks(link: UrlLink, hour: datetime, clicks: int) -> None:
    HourlyClick.objects.create(link=link, hour=hour, clicks=clicks, unique_visitors=clicks)


# --- Creating ----------------------------------------------------------------------------------


def test_shorten_makes_a_bitlink_then_answers_200_with_the_same_one(key, user):
    first = bitly(key, "post", "shorten", {"long_url": SPRING, "domain": HOST})

    assert first.status_code == 201
    link = UrlLink.objects.get(owner=user)
    body = first.json()
    assert body == {
        "created_at": link.created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000"),
        "id": f"{HOST}/{link.code}",
        "link": f"http://{HOST}/{link.code}",
        "custom_bitlinks": [],
        "long_url": SPRING,
        "title": "",
        "archived": False,
        "created_by": "marketer",
        "client_id": "",
        "tags": [],
        "deeplinks": [],
        "references": {"group": ""},
    }
    again = bitly(key, "post", "shorten", {"long_url": SPRING, "group_guid": "Ba1bc23dE4F"})
    assert again.status_code == 200
    assert again.json()["id"] == body["id"]
    assert UrlLink.objects.count() == 1


def test_bitly_ly_as_the_domain_means_the_default_one(key, user):
    """The npm client sends `domain: "bit.ly"` unless told otherwise."""
    response = bitly(key, "post", "shorten", {"long_url": SPRING, "domain": "bit.ly"})

    assert response.status_code == 201
    assert response.json()["id"].startswith(f"{HOST}/")


def test_bitlinks_takes_a_title_and_tags_and_an_extra_domain(key, user):
    domain_save(host="go.example.com")
    response = bitly(
        key,
        "post",
        "bitlinks",
        {"long_url": SPRING, "domain": "go.example.com", "title": "Spring", "tags": ["sale"]},
    )

    assert response.status_code == 201
    body = response.json()
    code = UrlLink.objects.get(owner=user).code
    assert body["id"] == f"go.example.com/{code}"
    assert body["link"] == f"http://go.example.com/{code}"
    assert (body["title"], body["tags"]) == ("Spring", ["sale"])


@pytest.mark.parametrize(
    ("body", "message", "field"),
    [
        ({"long_url": "ftp://files.example.com/a.pdf"}, "INVALID_ARG_LONG_URL", "long_url"),
        ({}, "INVALID_ARG_LONG_URL", "long_url"),
        ({"long_url": SPRING, "domain": "elsewhere.example"}, "INVALID_ARG_DOMAIN", "domain"),
        ({"long_url": SPRING, "tags": "sale"}, "INVALID_ARG_TAGS", "tags"),
        ({"long_url": SPRING, "title": "x" * 5000}, "INVALID_ARG_TITLE", "title"),
    ],
)
def test_refused_values_answer_bitlys_invalid_arg(key, body, message, field):
    response = bitly(key, "post", "bitlinks", body)

    assert response.status_code == 400
    answer = response.json()
    assert answer["message"] == message
    assert answer["resource"] == "bitlinks"
    assert answer["description"]
    assert answer["errors"][0]["field"] == field
    assert UrlLink.objects.count() == 0


def test_a_body_that_is_not_json_is_invalid(key):
    response = Client().post(
        "/v4/shorten", "{nope", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 400
    assert response.json()["message"] == "INVALID_BODY"


# --- Reading, changing, expanding --------------------------------------------------------------


def test_get_patch_and_expand_a_bitlink(key, user):
    link = link_create(user=user, long_url=SPRING).link
    path = f"bitlinks/{HOST}/{link.code}"

    got = bitly(key, "get", path)
    assert got.status_code == 200
    assert got.json()["long_url"] == SPRING

    changed = bitly(
        key,
        "patch",
        path,
        {"title": "Spring sale", "tags": ["b", "a"], "archived": True, "long_url": SPRING + "/x"},
    )
    assert changed.status_code == 200
    body = changed.json()
    assert body["title"] == "Spring sale"
    assert body["tags"] == ["a", "b"]
    assert body["archived"] is True
    assert body["long_url"] == SPRING + "/x"
    link.refresh_from_db()
    assert (link.title, link.archived, link.long_url) == ("Spring sale", True, SPRING + "/x")

    for bitlink_id in (f"{HOST}/{link.code}", f"bit.ly/{link.code}", f"http://{HOST}/{link.code}"):
        expanded = bitly(key, "post", "expand", {"bitlink_id": bitlink_id})
        assert expanded.status_code == 200, bitlink_id
        assert expanded.json() == {
            "created_at": body["created_at"],
            "link": f"http://{HOST}/{link.code}",
            "id": f"{HOST}/{link.code}",
            "long_url": SPRING + "/x",
        }


def test_patch_refusals_leave_the_link_alone(key, user):
    link = link_create(user=user, long_url=SPRING).link
    path = f"bitlinks/{HOST}/{link.code}"

    assert bitly(key, "patch", path, {"archived": "yes"}).json()["message"] == (
        "INVALID_ARG_ARCHIVED"
    )
    bad_url = bitly(key, "patch", path, {"long_url": "javascript:alert(1)"})
    assert (bad_url.status_code, bad_url.json()["message"]) == (400, "INVALID_ARG_LONG_URL")
    link.refresh_from_db()
    assert (link.long_url, link.archived) == (SPRING, False)


def test_others_links_and_unknown_domains_are_not_found(key, other_user):
    theirs = UrlLinkFactory(owner=other_user)

    for method, path, body in (
        ("get", f"bitlinks/{HOST}/{theirs.code}", None),
        ("patch", f"bitlinks/{HOST}/{theirs.code}", {"title": "mine now"}),
        ("get", f"bitlinks/{HOST}/{theirs.code}/clicks", None),
        ("get", f"bitlinks/{HOST}/{theirs.code}/clicks/summary", None),
        ("post", "expand", {"bitlink_id": f"{HOST}/{theirs.code}"}),
        ("get", f"bitlinks/elsewhere.example/{theirs.code}", None),
        ("get", f"bitlinks/{HOST}/no-such-code", None),
    ):
        response = bitly(key, method, path, body)
        assert response.status_code == 404, path
        assert response.json()["message"] == "NOT_FOUND"
    theirs.refresh_from_db()
    assert theirs.title != "mine now"


def test_staff_see_everyones_links(staff_user, other_user):
    from rest_framework.authtoken.models import Token

    theirs = UrlLinkFactory(owner=other_user)
    # A DRF token: an API key acts for its one workspace only.
    key = Token.objects.create(user=staff_user).key

    response = bitly(key, "get", f"bitlinks/{HOST}/{theirs.code}")

    assert response.status_code == 200
    assert response.json()["created_by"] == "rival"


def test_unknown_paths_under_v4_answer_bitlys_not_found(key):
    response = bitly(key, "get", "groups")
    assert response.status_code == 404
    assert response.json()["message"] == "NOT_FOUND"


# --- Clicks ------------------------------------------------------------------------------------


@pytest.fixture
def clicked(user) -> UrlLink:
    """A link made 10 days ago with 3 clicks 2 days ago, 4 yesterday and 5 today (UTC days at
    noon), counted at `now` = today 13:30 UTC."""
    link = link_create(user=user, long_url=SPRING).link
    today = timezone.now().astimezone(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    UrlLink.objects.filter(pk=link.pk).update(created_at=today - timedelta(days=10))
    for days, clicks in ((2, 3), (1, 4), (0, 5)):
        _clicks(link, today - timedelta(days=days), clicks)
    link.refresh_from_db()
    return link


def test_clicks_by_day_newest_first(key, clicked, settings):
    settings.TIME_ZONE = "UTC"
    today = timezone.now().astimezone(UTC).date()

    response = bitly(
        key, "get", f"bitlinks/{HOST}/{clicked.code}/clicks", {"unit": "day", "units": 3}
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["unit"], body["units"]) == ("day", 3)
    assert BITLY_DATE.match(body["unit_reference"])
    assert body["link_clicks"] == [
        {"clicks": clicks, "date": f"{today - timedelta(days=days)}T00:00:00+0000"}
        for days, clicks in ((0, 5), (1, 4), (2, 3))
    ]


def test_all_units_go_back_to_the_links_creation_and_size_caps_them(key, clicked, settings):
    settings.TIME_ZONE = "UTC"
    path = f"bitlinks/{HOST}/{clicked.code}/clicks"

    every = bitly(key, "get", path, {"unit": "day", "units": -1}).json()
    assert len(every["link_clicks"]) == 11  # the day it was made and the ten since
    assert sum(entry["clicks"] for entry in every["link_clicks"]) == 12

    capped = bitly(key, "get", path, {"unit": "day", "units": -1, "size": 2}).json()
    assert [entry["clicks"] for entry in capped["link_clicks"]] == [5, 4]

    months = bitly(key, "get", path, {"unit": "month", "units": 1}).json()
    assert len(months["link_clicks"]) == 1
    assert months["link_clicks"][0]["date"].endswith("-01T00:00:00+0000")


def test_unit_reference_moves_the_window_back(key, clicked, settings):
    settings.TIME_ZONE = "UTC"
    yesterday = (timezone.now().astimezone(UTC) - timedelta(days=1)).date()
    path = f"bitlinks/{HOST}/{clicked.code}/clicks"

    body = bitly(
        key,
        "get",
        path,
        {"unit": "day", "units": 1, "unit_reference": f"{yesterday}T08:00:00+0000"},
    ).json()

    assert body["link_clicks"] == [{"clicks": 4, "date": f"{yesterday}T00:00:00+0000"}]
    assert body["unit_reference"] == f"{yesterday}T08:00:00+0000"


def test_clicks_summary_sums_the_same_window(key, clicked):
    path = f"bitlinks/{HOST}/{clicked.code}/clicks/summary"

    summary = bitly(key, "get", path).json()
    # One call's own reference (now): two calls a second apart differ, so it is not compared.
    assert summary == {
        "total_clicks": 12,
        "units": -1,
        "unit": "day",
        "unit_reference": summary["unit_reference"],
    }
    noon = timezone.now().astimezone(UTC).date()
    one_hour = {"unit": "hour", "units": 1, "unit_reference": f"{noon}T12:30:00+0000"}
    assert bitly(key, "get", path, one_hour).json()["total_clicks"] == 5
    one_hour["unit_reference"] = f"{noon}T11:30:00+0000"
    assert bitly(key, "get", path, one_hour).json()["total_clicks"] == 0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"unit": "minute"}, "INVALID_ARG_UNIT"),
        ({"unit": "fortnight"}, "INVALID_ARG_UNIT"),
        ({"units": "0"}, "INVALID_ARG_UNITS"),
        ({"units": "many"}, "INVALID_ARG_UNITS"),
        ({"unit_reference": "yesterday"}, "INVALID_ARG_UNIT_REFERENCE"),
    ],
)
def test_clicks_refuses_what_it_cannot_count(key, clicked, params, message):
    response = bitly(key, "get", f"bitlinks/{HOST}/{clicked.code}/clicks", params)
    assert response.status_code == 400
    assert response.json()["message"] == message


# --- Credentials and scopes --------------------------------------------------------------------


def test_the_bare_key_drf_tokens_and_refusals(user, key):
    link = link_create(user=user, long_url=SPRING).link
    path = f"bitlinks/{HOST}/{link.code}"

    assert bitly(None, "get", path, HTTP_AUTHORIZATION=key).status_code == 200  # npm's way
    token = Token.objects.create(user=user).key
    assert bitly(token, "get", path).status_code == 200

    for header in (None, "Bearer su_not-a-key", "Token a b c"):
        headers = {"HTTP_AUTHORIZATION": header} if header else {}
        response = bitly(None, "get", path, **headers)
        assert response.status_code == 403, header
        assert response.json()["message"] == "FORBIDDEN"

    row = user.api_keys.get(drf_token=False)
    api_key_revoke(user=user, key_id=row.pk)
    assert bitly(key, "get", path).status_code == 403


@pytest.mark.parametrize(
    ("scope", "allowed"),
    [
        (ApiScope.LINKS_READ, {"get", "expand"}),
        (ApiScope.LINKS_WRITE, {"shorten", "bitlinks", "patch"}),
        (ApiScope.STATS_READ, {"clicks", "summary"}),
    ],
)
def test_each_endpoint_needs_its_scope(user, scope, allowed):
    link = link_create(user=user, long_url=SPRING, title="Kept").link
    key = api_key_create(user=user, name="one scope", scopes=[scope])[1]
    path = f"bitlinks/{HOST}/{link.code}"
    calls = {
        "shorten": ("post", "shorten", {"long_url": SPRING + "/a"}),
        "bitlinks": ("post", "bitlinks", {"long_url": SPRING + "/b"}),
        "get": ("get", path, None),
        "patch": ("patch", path, {"title": "Changed"}),
        "expand": ("post", "expand", {"bitlink_id": f"{HOST}/{link.code}"}),
        "clicks": ("get", f"{path}/clicks", None),
        "summary": ("get", f"{path}/clicks/summary", None),
    }
    for name, (method, call_path, body) in calls.items():
        response = bitly(key, method, call_path, body)
        if name in allowed:
            assert response.status_code in (200, 201), name
        else:
            assert response.status_code == 403, name
            assert response.json()["message"] == "FORBIDDEN"
            assert scope not in response.json()["description"]
    link.refresh_from_db()
    assert link.title == ("Changed" if "patch" in allowed else "Kept")


def test_v4_paths_never_take_the_redirect_fast_path():
    for path in ("/v4/shorten", "/v4/bitlinks/testserver/abc1234", "/v4/expand"):
        assert short_code_of({"REQUEST_METHOD": "GET", "PATH_INFO": path}) is None
    # `/v4` alone is no endpoint: it stays a short code people may have chosen.
    assert short_code_of({"REQUEST_METHOD": "GET", "PATH_INFO": "/v4"}) == "v4"


def test_a_revoked_links_destination_cannot_change_but_its_tags_can(key, user):
    link = link_create(user=user, long_url=SPRING).link
    link_revoke(code=link.code, user=user)
    path = f"bitlinks/{HOST}/{link.code}"

    refused = bitly(key, "patch", path, {"long_url": SPRING + "/x"})
    assert (refused.status_code, refused.json()["message"]) == (409, "CONFLICT")
    assert bitly(key, "patch", path, {"tags": ["old"]}).json()["tags"] == ["old"]


def test_throttled_calls_answer_rate_limit_exceeded_with_retry_after(key, user, settings):
    rates = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "api_write": "1/min"}
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}

    assert bitly(key, "post", "shorten", {"long_url": SPRING}).status_code == 201
    throttled = bitly(key, "post", "shorten", {"long_url": SPRING + "/2"})

    assert throttled.status_code == 429
    assert throttled.json()["message"] == "RATE_LIMIT_EXCEEDED"
    assert int(throttled["Retry-After"]) > 0
