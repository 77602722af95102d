"""The links API (/api/v1/links/…): every row of the API table, its errors, and who sees what."""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from analytics.models import HourlyClick
from links.models import UrlLink
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

LINK_FIELDS = {
    "code",
    "fallback_url",
    "health",
    "short_url",
    "domain",
    "workspace",
    "long_url",
    "long_url_ascii",
    "title",
    "redirect_type",
    "pass_query",
    "track_conversions",
    "rules",
    "variants",
    "created_at",
    "valid_since",
    "expires_at",
    "is_active",
    "status",
    "revoked_at",
    "clicks",
    "tags",
    "archived",
    "password_protected",
    "max_visits",
    "visits_left",
    "og_title",
    "og_description",
    "og_image",
    "expired_url",
    "ios_url",
    "android_url",
}


@pytest.fixture
def api(user):
    return client_for(user)


@pytest.fixture
def rival_api(other_user):
    return client_for(other_user)


@pytest.fixture
def staff_api(staff_user):
    return client_for(staff_user)


# --- Authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/v1/links/"),
        ("post", "/api/v1/links/"),
        ("post", "/api/v1/links/bulk/"),
        ("get", "/api/v1/links/promo-1/"),
        ("patch", "/api/v1/links/promo-1/"),
        ("delete", "/api/v1/links/promo-1/"),
        ("get", "/api/v1/links/promo-1/stats/"),
    ],
)
def test_anonymous_callers_get_401_with_a_token_challenge(user, method, path):
    """No credentials: 401 (not 403), naming the Token scheme, and the link is not touched."""
    UrlLinkFactory(owner=user, alias="promo-1")

    response = getattr(APIClient(), method)(path, {}, format="json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {"detail": "Authentication credentials were not provided."}
    assert UrlLink.objects.get(code="promo-1").revoked_at is None


def test_a_wrong_token_gets_401():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")

    response = client.get("/api/v1/links/")

    assert response.status_code == 401
    assert response.json() == {"detail": "Invalid token."}


def test_drf_create_token_command_gives_a_working_token(user):
    out = StringIO()
    call_command("drf_create_token", user.username, stdout=out)
    key = re.fullmatch(r"Generated token ([0-9a-f]{40}) for user marketer\n", out.getvalue())[1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.get("/api/v1/links/").status_code == 200


def test_session_auth_works_for_the_web_ui_and_needs_csrf_for_writes(user):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(user)

    assert client.get("/api/v1/links/").status_code == 200
    response = client.post("/api/v1/links/", {"long_url": "https://example.com/"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


# --- POST /api/v1/links/ -----------------------------------------------------------------------


def test_shorten_answers_201_with_the_link_object(api, user):
    response = api.post(
        "/api/v1/links/", {"long_url": "https://www.example.com/spring"}, format="json"
    )

    assert response.status_code == 201
    body = response.json()
    assert set(body) == LINK_FIELDS
    link = UrlLink.objects.get(code=body["code"], owner=user)
    assert body["long_url"] == link.long_url == "https://www.example.com/spring"
    assert body["short_url"] == f"http://testserver/{link.code}"
    assert body["redirect_type"] == 302
    assert body["is_active"] is True
    assert body["clicks"] == 0
    assert body["expires_at"] is None
    assert response["Location"] == f"/api/v1/links/{link.code}/"


def test_shortening_the_same_url_again_answers_200_with_the_existing_link(api):
    first = api.post("/api/v1/links/", {"long_url": "https://example.com/a"}, format="json")
    again = api.post("/api/v1/links/", {"long_url": "https://example.com/a"}, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["code"] == first.json()["code"]
    assert UrlLink.objects.count() == 1


def test_options_always_make_a_new_link(api):
    first = api.post("/api/v1/links/", {"long_url": "https://example.com/a"}, format="json")
    expires = (timezone.now() + timedelta(days=7)).isoformat()

    second = api.post(
        "/api/v1/links/",
        {
            "long_url": "https://example.com/a",
            "alias": "spring-promo",
            "title": "Spring promo",
            "expires_at": expires,
            "redirect_type": 301,
        },
        format="json",
    )

    assert second.status_code == 201
    body = second.json()
    assert body["code"] == "spring-promo" != first.json()["code"]
    assert body["title"] == "Spring promo"
    assert body["redirect_type"] == 301
    assert body["expires_at"] is not None


def test_short_url_uses_short_url_base_when_set(api, settings):
    settings.SHORT_URL_BASE = "https://s.example.org/"

    response = api.post("/api/v1/links/", {"long_url": "https://example.com/b"}, format="json")

    assert response.json()["short_url"] == f"https://s.example.org/{response.json()['code']}"


@pytest.mark.parametrize(
    ("payload", "field", "message"),
    [
        ({}, "long_url", "This field is required."),
        ({"long_url": ""}, "long_url", "Enter the long URL to shorten."),
        (
            {"long_url": "ftp://example.com/file"},
            "long_url",
            "Only http and https URLs can be shortened.",
        ),
        ({"long_url": "http://[broken"}, "long_url", "This is not a valid URL."),
        (
            {"long_url": "http://testserver/abc1234"},
            "long_url",
            "This URL points back at this short-link service; "
            "shortening it would make a redirect loop.",
        ),
        ({"long_url": 42}, "long_url", "Enter text (a JSON string)."),
        (
            {"long_url": "https://example.com/", "redirect_type": 303},
            "redirect_type",
            "Choose one of 301, 302, 307 or 308.",
        ),
        (
            {"long_url": "https://example.com/", "redirect_type": "301"},
            "redirect_type",
            "Choose one of 301, 302, 307 or 308.",
        ),
        (
            {"long_url": "https://example.com/", "expires_at": "2001-01-01T00:00:00Z"},
            "expires_at",
            "The expiry must be in the future.",
        ),
        (
            {"long_url": "https://example.com/", "alias": "admin"},
            "alias",
            "“admin” is reserved; please choose another.",
        ),
        (
            {"long_url": "https://example.com/", "alias": "no spaces"},
            "alias",
            "Use 3 to 32 characters: letters, digits, '-' and '_'.",
        ),
        (
            {"long_url": "https://example.com/", "title": "x" * 201},
            "title",
            "Ensure this field has no more than 200 characters.",
        ),
    ],
)
def test_invalid_input_answers_400_with_a_message_per_field(api, payload, field, message):
    response = api.post("/api/v1/links/", payload, format="json")

    assert response.status_code == 400
    assert response.json()[field] == [message]
    assert not UrlLink.objects.exists()


def test_a_bad_expiry_format_names_the_expected_format(api):
    response = api.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/", "expires_at": "next tuesday"},
        format="json",
    )

    assert response.status_code == 400
    assert "Datetime has wrong format" in response.json()["expires_at"][0]


def test_a_taken_alias_is_refused(api, other_user):
    UrlLinkFactory(owner=other_user, alias="summer")

    response = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/", "alias": "summer"}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {
        "alias": ["The alias “summer” is already taken; “summer-2” is free."]
    }


def test_malformed_json_answers_400(api):
    response = api.post("/api/v1/links/", '{"long_url": ', content_type="application/json")

    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error")


def test_a_body_that_is_not_json_answers_415(api):
    response = api.post(
        "/api/v1/links/", "long_url=https://example.com/", content_type="text/plain"
    )

    assert response.status_code == 415
    assert "detail" in response.json()


def test_no_free_code_answers_503_json(api, settings):
    """When the code strategy gives up (here: a hash strategy allowed no attempts), 503."""
    settings.SHORTURL_CODE_STRATEGY = "hash"
    settings.SHORTURL_HASH_MAX_RETRIES = 0

    response = api.post("/api/v1/links/", {"long_url": "https://example.com/x"}, format="json")

    assert response.status_code == 503
    assert response.json() == {
        "detail": "No free short code could be found; please try again in a moment."
    }


# --- GET /api/v1/links/{code}/ -----------------------------------------------------------------


def test_restore_answers_the_link_with_its_long_url(api, user):
    link = UrlLinkFactory(
        owner=user, long_url="https://www.example.com/deep/page?x=1", title="Deep"
    )

    response = api.get(f"/api/v1/links/{link.code}/")

    assert response.status_code == 200
    assert response.json()["long_url"] == "https://www.example.com/deep/page?x=1"
    assert response.json()["title"] == "Deep"
    assert set(response.json()) == LINK_FIELDS


@pytest.mark.parametrize("code", ["Zz9Zz9Q", "nope-nope", "bad%20code", "x" * 40])
def test_unknown_codes_answer_404_json(api, code):
    response = api.get(f"/api/v1/links/{code}/")

    assert response.status_code == 404
    assert response.json() == {"detail": "No link with this code."}


def test_codes_are_case_sensitive(api, user):
    UrlLinkFactory(owner=user, alias="CaseAlias")

    assert api.get("/api/v1/links/CaseAlias/").status_code == 200
    assert api.get("/api/v1/links/casealias/").status_code == 404


# --- PATCH /api/v1/links/{code}/ ---------------------------------------------------------------


def test_patch_changes_the_link_and_the_redirect_follows_at_once(api, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/old")
    assert APIClient().get(f"/{link.code}")["Location"] == "https://example.com/old"  # cached

    response = api.patch(
        f"/api/v1/links/{link.code}/",
        {"long_url": "https://example.com/new", "title": "New", "redirect_type": 307},
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["long_url"] == "https://example.com/new"
    assert response.json()["title"] == "New"
    assert response.json()["redirect_type"] == 307
    redirect = APIClient().get(f"/{link.code}")
    assert redirect.status_code == 307
    assert redirect["Location"] == "https://example.com/new"


def test_patch_changes_only_the_fields_sent_and_null_clears_the_expiry(api, user):
    link = UrlLinkFactory(
        owner=user,
        long_url="https://example.com/p",
        title="Keep",
        expires_at=timezone.now() + timedelta(days=1),
    )

    response = api.patch(f"/api/v1/links/{link.code}/", {"expires_at": None}, format="json")

    assert response.status_code == 200
    assert response.json()["expires_at"] is None
    assert response.json()["title"] == "Keep"
    assert response.json()["long_url"] == "https://example.com/p"


def test_patch_with_invalid_values_answers_400_and_changes_nothing(api, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/p")

    response = api.patch(
        f"/api/v1/links/{link.code}/",
        {"long_url": "javascript:alert(1)", "redirect_type": 200},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["redirect_type"] == ["Choose one of 301, 302, 307 or 308."]
    link.refresh_from_db()
    assert link.long_url == "https://example.com/p"


def test_patch_of_a_revoked_link_is_refused_with_409_and_changes_nothing(api, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/final", revoked=True)

    response = api.patch(
        f"/api/v1/links/{link.code}/", {"long_url": "https://example.com/sneaky"}, format="json"
    )

    assert response.status_code == 409
    assert response.json() == {"detail": f"{link.code} was revoked and can no longer be changed."}
    link.refresh_from_db()
    assert link.long_url == "https://example.com/final"
    assert APIClient().get(f"/{link.code}").status_code == 410


@pytest.mark.parametrize(
    "change",
    [
        {"max_visits": 5},
        {"password": "open-sesame-2"},
        {"rules": [{"country": "DE", "url": "https://example.com/de"}]},
        {
            "variants": [
                {"url": "https://example.com/a", "weight": 50},
                {"url": "https://example.com/b", "weight": 50},
            ]
        },
    ],
)
def test_a_revoked_link_s_gates_and_targeting_are_final_too(api, user, change):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/final", revoked=True)
    response = api.patch(f"/api/v1/links/{link.code}/", change, format="json")
    assert response.status_code == 409
    link.refresh_from_db()
    assert (link.max_visits, link.password_hash, link.rules, link.variants) == (None, "", [], [])
    # What only sorts the owner's lists still may change.
    archived = api.patch(f"/api/v1/links/{link.code}/", {"archived": True}, format="json")
    assert archived.status_code == 200


def test_patch_with_a_title_over_200_characters_is_a_400_naming_the_field(api, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/titled")

    response = api.patch(f"/api/v1/links/{link.code}/", {"title": "t" * 500}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["title"]
    assert "200 characters" in response.json()["title"][0]
    link.refresh_from_db()
    assert link.title == ""


def test_patch_unknown_code_answers_404(api):
    response = api.patch("/api/v1/links/Zz9Zz9Q/", {"title": "x"}, format="json")

    assert response.status_code == 404


# --- DELETE /api/v1/links/{code}/ --------------------------------------------------------------


def test_revoke_answers_204_and_the_short_url_then_answers_410(api, user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/stop")
    assert APIClient().get(f"/{link.code}").status_code == 302  # cached as live

    response = api.delete(f"/api/v1/links/{link.code}/")

    assert response.status_code == 204
    assert response.content == b""
    assert APIClient().get(f"/{link.code}").status_code == 410
    restored = api.get(f"/api/v1/links/{link.code}/").json()
    assert restored["is_active"] is False
    assert restored["status"] == "revoked"
    assert restored["revoked_at"] is not None


def test_a_client_can_tell_a_revoked_link_from_an_expired_one(api, user):
    """Both answer 410 and read is_active false; status and revoked_at say which it is."""
    expired = UrlLinkFactory(owner=user, expired=True)
    revoked = UrlLinkFactory(owner=user, revoked=True)
    live = UrlLinkFactory(owner=user)
    shown = {
        code: api.get(f"/api/v1/links/{code}/").json()
        for code in (expired.code, revoked.code, live.code)
    }
    assert [shown[expired.code][key] for key in ("status", "revoked_at")] == ["expired", None]
    assert shown[revoked.code]["status"] == "revoked"
    assert shown[revoked.code]["revoked_at"].startswith(str(revoked.revoked_at.year))
    assert [shown[live.code][key] for key in ("status", "is_active")] == ["active", True]


def test_revoke_unknown_code_answers_404(api):
    assert api.delete("/api/v1/links/Zz9Zz9Q/").status_code == 404


# --- Methods and paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("put", "/api/v1/links/{code}/"),
        ("post", "/api/v1/links/{code}/"),
        ("delete", "/api/v1/links/"),
        ("patch", "/api/v1/links/"),
        ("get", "/api/v1/links/bulk/"),
        ("post", "/api/v1/links/{code}/stats/"),
    ],
)
def test_wrong_methods_answer_405_json(api, user, method, path):
    link = UrlLinkFactory(owner=user)

    response = getattr(api, method)(path.format(code=link.code), {}, format="json")

    assert response.status_code == 405
    assert response.json()["detail"].endswith("not allowed.")


def test_unknown_api_paths_answer_json_404_never_html(api):
    response = api.get("/api/v1/nothing/here/")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found."}


def test_a_missing_trailing_slash_is_pointed_out(api):
    response = api.post("/api/v1/links", {"long_url": "https://example.com/"}, format="json")

    assert response.status_code == 404
    assert response.json() == {
        "detail": "Not found. Did you mean /api/v1/links/ (with a trailing slash)?"
    }


def test_an_unexpected_error_answers_500_json_not_a_traceback(api, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("links.api.views.link_list", broken)
    api.raise_request_exception = False

    response = api.get("/api/v1/links/")

    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert "boom" not in response.content.decode()
    assert response.json()["detail"].startswith("Something went wrong on our side")


# --- Who sees what -----------------------------------------------------------------------------


def test_others_links_are_404_for_read_change_revoke_and_stats(api, rival_api, user):
    """A marketer cannot tell another's link from a missing one, let alone touch it."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/mine", alias="mine-only")
    path = f"/api/v1/links/{link.code}/"

    answers = [
        rival_api.get(path),
        rival_api.patch(path, {"long_url": "https://evil.example/"}, format="json"),
        rival_api.patch(path, {"redirect_type": "bad"}, format="json"),  # 404 before 400
        rival_api.delete(path),
        rival_api.get(path + "stats/"),
        rival_api.get(path + "stats/?start=garbage"),
    ]

    assert [r.status_code for r in answers] == [404] * 6
    assert all(r.json() == {"detail": "No link with this code."} for r in answers)
    link.refresh_from_db()
    assert link.long_url == "https://example.com/mine"
    assert link.revoked_at is None
    assert rival_api.get("/api/v1/links/").json()["count"] == 0
    assert api.get(path).status_code == 200


def test_shortening_a_url_someone_else_shortened_gives_the_caller_their_own_link(api, rival_api):
    theirs = rival_api.post("/api/v1/links/", {"long_url": "https://example.com/"}, format="json")
    mine = api.post("/api/v1/links/", {"long_url": "https://example.com/"}, format="json")

    assert mine.status_code == 201
    assert mine.json()["code"] != theirs.json()["code"]


def test_staff_see_and_change_every_link(staff_api, user, staff_user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/abuse")
    UrlLinkFactory(owner=staff_user, long_url="https://example.com/staff-own")

    listed = staff_api.get("/api/v1/links/").json()
    own_only = staff_api.get("/api/v1/links/?mine=true").json()

    assert listed["count"] == 2
    assert [item["long_url"] for item in own_only["results"]] == ["https://example.com/staff-own"]
    assert staff_api.get(f"/api/v1/links/{link.code}/").status_code == 200
    assert staff_api.get(f"/api/v1/links/{link.code}/stats/").status_code == 200
    assert staff_api.delete(f"/api/v1/links/{link.code}/").status_code == 204
    link.refresh_from_db()
    assert link.revoked_at is not None


# --- GET /api/v1/links/ ------------------------------------------------------------------------


def _many_links(owner, count: int) -> None:
    """`count` links in one insert (a factory's row-by-row saves cost more at these counts)."""
    UrlLink.objects.bulk_create(UrlLinkFactory.build_batch(count, owner=owner))


def test_list_is_newest_first_and_paginated_by_50(api, user):
    _many_links(user, 55)
    newest = UrlLinkFactory(owner=user, long_url="https://example.com/newest")

    first = api.get("/api/v1/links/").json()
    second = api.get(first["next"]).json()

    assert first["count"] == 56
    assert len(first["results"]) == 50
    assert first["results"][0]["code"] == newest.code
    assert first["previous"] is None
    assert len(second["results"]) == 6
    assert second["next"] is None


def test_page_size_is_honoured_up_to_500(api, user):
    _many_links(user, 510)

    assert len(api.get("/api/v1/links/?page_size=7").json()["results"]) == 7
    assert len(api.get("/api/v1/links/?page_size=100000").json()["results"]) == 500


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("active=maybe", "active", "Use true or false."),
        ("mine=perhaps", "mine", "Use true or false."),
        ("page=0", "page", "Ensure this value is greater than or equal to 1."),
        ("page=first", "page", "Use a page number (1, 2, …)."),
        ("page_size=lots", "page_size", "Use a number of links per page (at most 500)."),
    ],
)
def test_bad_list_parameters_answer_400(api, query, field, message):
    response = api.get(f"/api/v1/links/?{query}")

    assert response.status_code == 400
    assert response.json() == {field: [message]}


def test_a_page_past_the_end_answers_404_json(api, user):
    UrlLinkFactory(owner=user)

    response = api.get("/api/v1/links/?page=9")

    assert response.status_code == 404
    assert response.json() == {"detail": "Invalid page."}


def test_search_matches_long_url_title_and_code(api, user, other_user):
    by_url = UrlLinkFactory(owner=user, long_url="https://shop.example.com/winter-boots")
    by_title = UrlLinkFactory(owner=user, long_url="https://example.com/q", title="Winter campaign")
    by_code = UrlLinkFactory(owner=user, long_url="https://example.com/r", alias="wntr-24")
    UrlLinkFactory(owner=user, long_url="https://example.com/summer")
    UrlLinkFactory(owner=other_user, long_url="https://example.com/winter-of-someone-else")

    def codes(search: str) -> set[str]:
        response = api.get("/api/v1/links/", {"search": search})
        assert response.status_code == 200
        return {item["code"] for item in response.json()["results"]}

    assert codes("WINTER") == {by_url.code, by_title.code}
    assert codes("wntr-24") == {by_code.code}
    assert codes("nothing-like-this") == set()


def test_active_filter_splits_working_from_stopped_links(api, user):
    live = UrlLinkFactory(owner=user)
    revoked = UrlLinkFactory(owner=user, revoked=True)
    expired = UrlLinkFactory(owner=user, expired=True)

    def codes(active: str) -> set[str]:
        return {
            item["code"] for item in api.get(f"/api/v1/links/?active={active}").json()["results"]
        }

    assert codes("true") == {live.code}
    assert codes("false") == {revoked.code, expired.code}


def test_list_shows_clicks_without_a_query_per_link(api, user):
    """Clicks come from the hourly counts; the number of queries does not grow with the page."""
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    links = [UrlLinkFactory(owner=user, long_url=f"https://example.com/c{i}") for i in range(3)]
    HourlyClick.objects.create(link=links[0], hour=hour, clicks=5, unique_visitors=4)
    HourlyClick.objects.create(
        link=links[0], hour=hour - timedelta(hours=1), clicks=2, unique_visitors=2
    )
    HourlyClick.objects.create(link=links[1], hour=hour, clicks=1, unique_visitors=1, bot_clicks=9)

    api.get("/api/v1/links/")  # the token's first use records when it was last used
    with CaptureQueriesContext(connection) as few:
        body = api.get("/api/v1/links/").json()
    clicks = {item["code"]: item["clicks"] for item in body["results"]}
    assert clicks == {links[0].code: 7, links[1].code: 1, links[2].code: 0}

    _many_links(user, 40)
    with CaptureQueriesContext(connection) as many:
        assert len(api.get("/api/v1/links/").json()["results"]) == 43
    # Auth, count, page, one for the click totals, one for the tags of the whole page.
    assert len(many.captured_queries) == len(few.captured_queries) <= 6


def test_detail_shows_all_time_clicks(api, user):
    link = UrlLinkFactory(owner=user)
    HourlyClick.objects.create(
        link=link, hour=timezone.now() - timedelta(days=90), clicks=11, unique_visitors=3
    )

    assert api.get(f"/api/v1/links/{link.code}/").json()["clicks"] == 11


# --- Schema and docs ---------------------------------------------------------------------------


def test_schema_is_served_and_documents_every_operation():
    response = APIClient().get("/api/v1/schema/?format=json")

    assert response.status_code == 200
    paths = response.json()["paths"]
    assert set(paths) == {
        "/api/v1/links/",
        "/api/v1/links/bulk/",
        "/api/v1/links/{code}/",
        "/api/v1/links/{code}/qr/",
        "/api/v1/links/{code}/qr-design/",
        "/api/v1/links/{code}/stats/",
        "/api/v1/links/{code}/stats/live",
        "/api/v1/tags/",
        "/api/v1/tags/{tag}/",
        "/api/v1/domains/",
        "/api/v1/tags/{tag}/stats/",
        "/api/v1/webhooks/",
        "/api/v1/webhooks/{webhook_id}/",
        "/api/v1/webhooks/{webhook_id}/deliveries/",
        "/api/v1/webhooks/{webhook_id}/test/",
        "/api/v1/workspaces/",
        "/api/v1/workspaces/{slug}/",
        "/api/v1/workspaces/{slug}/members/",
        "/api/v1/workspaces/{slug}/members/{username}/",
        "/api/v1/workspaces/{slug}/invitations/",
        "/api/v1/workspaces/{slug}/invitations/{invitation_id}/",
        "/api/v1/invitations/",
        "/api/v1/invitations/{invitation_id}/accept/",
        "/api/v1/invitations/{invitation_id}/decline/",
        "/api/v1/track/lead",
        "/api/v1/track/sale",
        "/api/v1/workspaces/{slug}/stats/",
        "/api/v1/links/{code}/visits/",
        "/api/v1/workspaces/{slug}/erasure/",
        "/api/v1/workspaces/{slug}/visitor-data/",
        "/api/v1/audit/",
    }
    operations = [op for methods in paths.values() for op in methods.values()]
    # 34, the QR design's GET, PUT and DELETE, and PATCH /links/bulk/ (#28), the two track
    # POSTs, a workspace's stats and a link's live figures (#29), erasure, a visitor's data, a
    # link's raw visits erased and the audit log (#30)
    assert len(operations) == 46
    for operation in operations:
        assert "401" in operation["responses"]
        assert "429" in operation["responses"]


def test_swagger_ui_is_served_from_local_static_files():
    response = APIClient().get("/api/v1/docs/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower()
    assert "https://" not in page
