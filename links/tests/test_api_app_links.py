"""App deep links (ios_url / android_url, issue #28) through the links API: create, PATCH, clear,
bulk items, every link shown, and who may change them. What passes is links.services.app_links'
call (links/tests/test_app_links.py); here, that the API carries it and names the field."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from links.services.create import link_create
from links.tests.factories import UserFactory
from links.tests.helpers import client_for
from serving.tests.test_app_links import ANDROID, IPHONE
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

TARGET = "https://example.com/product/7"
IOS_APP = "exampleshop://product/7"
ANDROID_APP = "https://shop.example.com/app/product/7"
LINKS = "/api/v1/links/"


def test_the_api_creates_shows_changes_and_clears_app_links(user):
    api = client_for(user)
    made = api.post(
        LINKS,
        {"long_url": TARGET, "ios_url": IOS_APP, "android_url": ANDROID_APP},
        format="json",
    )
    assert made.status_code == 201, made.content
    code = made.json()["code"]
    assert (made.json()["ios_url"], made.json()["android_url"]) == (IOS_APP, ANDROID_APP)
    shown = api.get(f"{LINKS}{code}/").json()
    assert (shown["ios_url"], shown["android_url"]) == (IOS_APP, ANDROID_APP)
    listed = next(item for item in api.get(LINKS).json()["results"] if item["code"] == code)
    assert (listed["ios_url"], listed["android_url"]) == (IOS_APP, ANDROID_APP)

    # PATCH changes only what it sends.
    changed = api.patch(f"{LINKS}{code}/", {"ios_url": "tel:+15551234567"}, format="json")
    assert changed.status_code == 200, changed.content
    assert (changed.json()["ios_url"], changed.json()["android_url"]) == (
        "tel:+15551234567",
        ANDROID_APP,
    )
    # null and "" both clear.
    cleared = api.patch(f"{LINKS}{code}/", {"ios_url": None, "android_url": ""}, format="json")
    assert (cleared.json()["ios_url"], cleared.json()["android_url"]) == (None, None)
    plain = api.post(LINKS, {"long_url": TARGET + "/2"}, format="json").json()
    assert (plain["ios_url"], plain["android_url"]) == (None, None)


def test_the_redirect_follows_what_the_api_set(user, client):
    api = client_for(user)
    code = api.post(
        LINKS, {"long_url": TARGET, "ios_url": IOS_APP, "android_url": ANDROID_APP}, format="json"
    ).json()["code"]
    assert client.get(f"/{code}", HTTP_USER_AGENT=IPHONE)["Location"] == IOS_APP
    assert client.get(f"/{code}", HTTP_USER_AGENT=ANDROID)["Location"] == ANDROID_APP
    api.patch(f"{LINKS}{code}/", {"ios_url": None}, format="json")
    assert client.get(f"/{code}", HTTP_USER_AGENT=IPHONE)["Location"] == TARGET


@pytest.mark.parametrize("field", ["ios_url", "android_url"])
@pytest.mark.parametrize("value", ["javascript:alert(1)", "data:text/html,<b>x</b>", "file:///x"])
def test_a_script_or_local_scheme_is_refused_naming_the_field(user, field, value):
    api = client_for(user)
    refused = api.post(LINKS, {"long_url": TARGET, field: value}, format="json")
    assert refused.status_code == 400
    assert list(refused.json()) == [field]
    assert "refused" in refused.json()[field][0]
    code = api.post(LINKS, {"long_url": TARGET}, format="json").json()["code"]
    patched = api.patch(f"{LINKS}{code}/", {field: value}, format="json")
    assert (patched.status_code, list(patched.json())) == (400, [field])
    assert api.get(f"{LINKS}{code}/").json()[field] is None


def test_both_fields_refused_are_both_named(user):
    refused = client_for(user).post(
        LINKS,
        {"long_url": TARGET, "ios_url": "javascript:x()", "android_url": "my app://x"},
        format="json",
    )
    assert refused.status_code == 400
    assert set(refused.json()) == {"ios_url", "android_url"}


def test_a_non_text_value_is_refused_by_the_field_type(user):
    refused = client_for(user).post(LINKS, {"long_url": TARGET, "ios_url": 7}, format="json")
    assert (refused.status_code, list(refused.json())) == (400, ["ios_url"])


def test_bulk_items_take_app_links_and_refuse_each_bad_one_alone(user):
    answer = client_for(user).post(
        f"{LINKS}bulk/",
        {
            "items": [
                {"long_url": TARGET, "ios_url": IOS_APP, "android_url": ANDROID_APP},
                {"long_url": TARGET + "/2", "android_url": "javascript:alert(1)"},
                {"long_url": TARGET + "/3"},
            ]
        },
        format="json",
    )
    assert answer.status_code == 200, answer.content
    first, second, third = answer.json()["results"]
    assert first["status"] == 201
    assert (first["link"]["ios_url"], first["link"]["android_url"]) == (IOS_APP, ANDROID_APP)
    assert (second["status"], list(second["errors"])) == (400, ["android_url"])
    assert (third["status"], third["link"]["ios_url"]) == (201, None)


def test_a_viewer_sees_app_links_but_cannot_change_them(user):
    workspace = workspace_create(user=user, name="Acme", slug="acme")
    shared = link_create(user=user, long_url=TARGET, workspace=workspace, ios_url=IOS_APP).link
    UserFactory(username="vi")
    viewer = member_add(by=user, workspace=workspace, username="vi", role=Role.VIEWER).user
    api = client_for(viewer)
    assert api.get(f"{LINKS}{shared.code}/").json()["ios_url"] == IOS_APP
    refused = api.patch(f"{LINKS}{shared.code}/", {"ios_url": "other://x"}, format="json")
    assert refused.status_code == 403
    shared.refresh_from_db()
    assert shared.ios_url == IOS_APP


def test_the_schema_describes_both_fields_with_their_schemes():
    schema = APIClient().get("/api/v1/schema/?format=json").json()["components"]["schemas"]
    for name in ("LinkCreateRequest", "PatchedLinkUpdateRequest"):
        for field in ("ios_url", "android_url"):
            described = schema[name]["properties"][field]["description"]
            assert "myapp://" in described and "`javascript:`" in described, (name, field)
    for field in ("ios_url", "android_url"):
        assert schema["Link"]["properties"][field]["nullable"] is True
        assert "sms:" in schema["Link"]["properties"][field]["description"]
