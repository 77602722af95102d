"""A link's app deep links (ios_url, android_url; issue #28) in Shlink's redirect rules: a GET
lists them as trailing device rules (lowest priority, after the link's own rules, as the
redirect orders them), and a POST of what a GET gave recognises them instead of storing them
twice or refusing their app scheme; it never changes the app links themselves."""

from __future__ import annotations

import pytest
from django.test import Client

from compat.shlink.tests.test_shlink_api import BASE, shlink_client
from links.models import UrlLink
from links.services.create import link_create
from serving.tests.test_app_links import ANDROID, IPHONE

pytestmark = pytest.mark.django_db

LONG = "https://example.com/default"
IOS_APP = "exampleshop://product/7"
ANDROID_APP = "https://shop.example.com/app/product/7"
OWN_RULE = {"country": "FR", "url": "https://example.com/fr"}


def _rules_path(code: str) -> str:
    return f"{BASE}/short-urls/{code}/redirect-rules"


def _device_rule(device: str, url: str, priority: int) -> dict:
    return {
        "longUrl": url,
        "priority": priority,
        "conditions": [{"type": "device", "matchKey": None, "matchValue": device}],
    }


@pytest.fixture
def link(user) -> UrlLink:
    return link_create(
        user=user, long_url=LONG, rules=[OWN_RULE], ios_url=IOS_APP, android_url=ANDROID_APP
    ).link


def test_a_get_lists_the_app_links_after_the_links_own_rules(user, link):
    shown = shlink_client(user).get(_rules_path(link.code)).json()
    assert shown["defaultLongUrl"] == LONG
    assert [rule["longUrl"] for rule in shown["redirectRules"]] == [
        OWN_RULE["url"],
        IOS_APP,
        ANDROID_APP,
    ]
    assert shown["redirectRules"][1:] == [
        _device_rule("ios", IOS_APP, 2),
        _device_rule("android", ANDROID_APP, 3),
    ]


def test_the_short_url_says_it_has_redirect_rules_when_it_has_only_app_links(user):
    only_apps = link_create(user=user, long_url=LONG, ios_url=IOS_APP).link
    plain = link_create(user=user, long_url=LONG + "/plain").link
    api = shlink_client(user)
    for link, has in ((only_apps, True), (plain, False)):
        shown = api.get(f"{BASE}/short-urls/{link.code}").json()
        assert shown["hasRedirectRules"] is has, shown


def test_a_link_without_app_links_lists_only_its_rules(user):
    plain = link_create(user=user, long_url=LONG, rules=[OWN_RULE]).link
    shown = shlink_client(user).get(_rules_path(plain.code)).json()
    assert [rule["longUrl"] for rule in shown["redirectRules"]] == [OWN_RULE["url"]]


def test_posting_back_what_a_get_gave_stores_the_same_and_duplicates_nothing(user, link):
    api = shlink_client(user)
    read = api.get(_rules_path(link.code)).json()
    posted = api.post(
        _rules_path(link.code), {"redirectRules": read["redirectRules"]}, format="json"
    )
    assert posted.status_code == 200, posted.content
    assert posted.json() == read
    link.refresh_from_db()
    assert len(link.rules) == 1 and link.rules[0]["country"] == "FR"
    assert (link.ios_url, link.android_url) == (IOS_APP, ANDROID_APP)
    # ...and the visitors still go where they did.
    assert Client().get(f"/{link.code}", HTTP_USER_AGENT=IPHONE)["Location"] == IOS_APP
    assert Client().get(f"/{link.code}", HTTP_USER_AGENT=ANDROID)["Location"] == ANDROID_APP


def test_a_post_without_the_app_rules_keeps_the_app_links(user, link):
    api = shlink_client(user)
    cleared = api.post(_rules_path(link.code), {"redirectRules": []}, format="json")
    assert cleared.status_code == 200, cleared.content
    link.refresh_from_db()
    assert (link.rules, link.ios_url, link.android_url) == ([], IOS_APP, ANDROID_APP)
    # Shown again, as app links, after no rules of the link's own.
    assert [rule["longUrl"] for rule in cleared.json()["redirectRules"]] == [IOS_APP, ANDROID_APP]


def test_a_trailing_device_rule_to_another_url_is_stored_as_a_rule(user, link):
    other = "https://example.com/ios-landing"
    api = shlink_client(user)
    posted = api.post(
        _rules_path(link.code),
        {"redirectRules": [_device_rule("ios", other, 1)]},
        format="json",
    )
    assert posted.status_code == 200, posted.content
    link.refresh_from_db()
    assert [(rule.get("os"), rule["url"]) for rule in link.rules] == [("iOS", other)]
    assert link.ios_url == IOS_APP  # kept; the rule now comes first for iPhones
    assert Client().get(f"/{link.code}", HTTP_USER_AGENT=IPHONE)["Location"] == other


def test_an_app_rule_not_at_the_end_is_a_rule_of_the_links_own(user, link):
    """Only trailing rules are recognised: one before a rule of the link's own would be
    stored as a rule, and an app scheme in a rule is refused by the rules' URL policy."""
    api = shlink_client(user)
    posted = api.post(
        _rules_path(link.code),
        {
            "redirectRules": [
                _device_rule("ios", IOS_APP, 1),
                {
                    "longUrl": OWN_RULE["url"],
                    "conditions": [
                        {"type": "geolocation-country-code", "matchKey": None, "matchValue": "FR"}
                    ],
                },
            ]
        },
        format="json",
    )
    assert posted.status_code == 400, posted.content
    assert posted.json()["errors"] == {
        "redirectRules": ["redirectRules[0].longUrl: Only http and https URLs can be shortened."]
    }
    link.refresh_from_db()
    assert (link.rules, link.ios_url) == ([OWN_RULE], IOS_APP)
