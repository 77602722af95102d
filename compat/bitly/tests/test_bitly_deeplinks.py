"""Bitly's `deeplinks` on POST /v4/bitlinks and PATCH /v4/bitlinks/{bitlink}, mapped onto a
link's ios_url / android_url (issue #28), and shown on every bitlink answered: each item says
its `os`; its app_uri_path is the whole URL; install_url / install_type are ignored."""

from __future__ import annotations

import pytest

from accounts.services import api_key_create
from compat.bitly.tests.test_bitly import HOST, SPRING, bitly
from links.models import UrlLink
from serving.tests.test_app_links import ANDROID, IPHONE

pytestmark = pytest.mark.django_db

IOS_APP = "exampleshop://product/7"
ANDROID_APP = "https://shop.example.com/app/product/7"
BOTH = [
    {
        "app_id": "com.example.shop",
        "os": "ios",
        "app_uri_path": IOS_APP,
        "install_url": "https://apps.apple.com/app/id123",
        "install_type": "promote_install",
    },
    {"app_id": "com.example.shop", "os": "android", "app_uri_path": ANDROID_APP},
]


@pytest.fixture
def key(user) -> str:
    return api_key_create(user=user, name="bitly")[1]


def _shown(answer) -> dict[str, str]:
    return {item["os"]: item["app_uri_path"] for item in answer.json()["deeplinks"]}


def test_a_bitlink_made_with_deeplinks_sends_each_os_to_its_app(key, user, client):
    made = bitly(key, "post", "bitlinks", {"long_url": SPRING, "deeplinks": BOTH})
    assert made.status_code == 201, made.content
    link = UrlLink.objects.get(owner=user)
    assert (link.ios_url, link.android_url) == (IOS_APP, ANDROID_APP)
    assert _shown(made) == {"ios": IOS_APP, "android": ANDROID_APP}
    ios = made.json()["deeplinks"][0]
    assert ios["bitlink"] == f"{HOST}/{link.code}" and ios["install_type"] == "no_install"
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=IPHONE)["Location"] == IOS_APP
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=ANDROID)["Location"] == ANDROID_APP
    # Read back, as a GET shows it.
    assert _shown(bitly(key, "get", f"bitlinks/{HOST}/{link.code}")) == _shown(made)


def test_patching_deeplinks_replaces_both_and_an_empty_list_clears_them(key, user):
    code = bitly(key, "post", "bitlinks", {"long_url": SPRING, "deeplinks": BOTH}).json()["id"]
    only_android = bitly(
        key,
        "patch",
        f"bitlinks/{code}",
        {"deeplinks": [{"os": "android", "app_uri_path": "shop://cart"}]},
    )
    assert only_android.status_code == 200, only_android.content
    assert _shown(only_android) == {"android": "shop://cart"}
    untouched = bitly(key, "patch", f"bitlinks/{code}", {"title": "Spring"})
    assert _shown(untouched) == {"android": "shop://cart"}  # left out: unchanged
    cleared = bitly(key, "patch", f"bitlinks/{code}", {"deeplinks": []})
    assert cleared.json()["deeplinks"] == []
    link = UrlLink.objects.get(owner=user)
    assert (link.ios_url, link.android_url) == ("", "")


@pytest.mark.parametrize(
    "deeplinks, says",
    [
        ([{"app_id": "com.example.shop", "app_uri_path": IOS_APP}], "deeplinks[0].os"),
        ([{"os": "ios", "app_uri_path": "/product/7"}], "deeplinks[0].app_uri_path"),
        (
            [{"os": "ios", "app_uri_path": IOS_APP}, {"os": "ios", "app_uri_path": IOS_APP}],
            "deeplinks[1].os",
        ),
        ({"os": "ios"}, "is a list"),
        ([{"os": "ios", "app_uri_path": "javascript:alert(1)"}], "ios app_uri_path: javascript:"),
        ([{"os": "android", "app_uri_path": "data:text/html,x"}], "android app_uri_path: data:"),
    ],
)
def test_deeplinks_that_cannot_be_mapped_are_refused_in_bitlys_shape(key, user, deeplinks, says):
    refused = bitly(key, "post", "bitlinks", {"long_url": SPRING, "deeplinks": deeplinks})
    assert refused.status_code == 400, refused.content
    body = refused.json()
    assert body["message"] == "INVALID_ARG_DEEPLINKS"
    assert says in body["description"], body
    assert body["errors"][0]["field"] == "deeplinks"
    assert not UrlLink.objects.filter(owner=user).exists()


def test_a_refused_patch_changes_nothing(key, user):
    code = bitly(key, "post", "bitlinks", {"long_url": SPRING, "deeplinks": BOTH}).json()["id"]
    refused = bitly(
        key,
        "patch",
        f"bitlinks/{code}",
        {"deeplinks": [{"os": "ios", "app_uri_path": "javascript:alert(1)"}]},
    )
    assert (refused.status_code, refused.json()["message"]) == (400, "INVALID_ARG_DEEPLINKS")
    link = UrlLink.objects.get(owner=user)
    assert (link.ios_url, link.android_url) == (IOS_APP, ANDROID_APP)
