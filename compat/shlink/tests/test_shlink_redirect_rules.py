"""Shlink's redirect rules (GET and POST /rest/v3/short-urls/{shortCode}/redirect-rules) over our
rules: Shlink's shapes both ways, a GET posted back storing the same rules, Shlink's invalid-data
problem for what ours cannot hold, and visitors sent as the rules say."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from compat.shlink import redirect_rules
from compat.shlink.tests.test_shlink_api import BASE, assert_problem, shlink_client
from links.models import UrlLink
from links.services.change import link_revoke
from links.services.create import link_create
from links.tests.helpers import client_for
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

LONG = "https://example.com/default"


def condition(type_: str, value: str | None, key: str | None = None) -> dict:
    return {"type": type_, "matchKey": key, "matchValue": value}


# Every condition type Shlink has that ours can hold, Shlink's own examples first (its API
# tests' fixtures and OpenAPI examples), each rule as a Shlink client posts it.
SHLINK_RULES = [
    {
        "longUrl": "https://example.com/english-and-foo-query",
        "conditions": [
            condition("language", "en"),
            condition("any-value-query-param", None, "foo"),
        ],
    },
    {
        "longUrl": "https://example.com/multiple-query-params",
        "conditions": [
            condition("query-param", "world", "hello"),
            condition("query-param", "bar", "foo"),
        ],
    },
    {
        "longUrl": "https://example.com/static-ip",
        "conditions": [condition("ip-address", "1.2.3.4")],
    },
    {"longUrl": "https://example.com/cidr", "conditions": [condition("ip-address", "1.2.3.0/24")]},
    {"longUrl": "https://example.com/android", "conditions": [condition("device", "android")]},
    {
        "longUrl": "https://example.com/iphone-in-us",
        "conditions": [
            condition("device", "ios"),
            condition("device", "mobile"),
            condition("geolocation-country-code", "US"),
        ],
    },
    {
        "longUrl": "https://example.com/linux-desktops",
        "conditions": [condition("device", "linux"), condition("device", "desktop")],
    },
    {
        "longUrl": "https://example.com/london-debug",
        "conditions": [
            condition("geolocation-city-name", "London"),
            condition("valueless-query-param", None, "debug"),
        ],
    },
    {
        "longUrl": "https://example.com/spring",
        "conditions": [
            condition("after-date", "2026-03-20T00:00:00+00:00"),
            condition("before-date", "2026-06-21T00:00:00+00:00"),
        ],
    },
]
# The same rules as we store them.
OUR_RULES = [
    {"language": "en", "query": {"foo": None}, "url": "https://example.com/english-and-foo-query"},
    {
        "query": {"hello": "world", "foo": "bar"},
        "url": "https://example.com/multiple-query-params",
    },
    {"ip": "1.2.3.4", "url": "https://example.com/static-ip"},
    {"ip": "1.2.3.0/24", "url": "https://example.com/cidr"},
    {"os": "Android", "url": "https://example.com/android"},
    {"device": "mobile", "os": "iOS", "country": "US", "url": "https://example.com/iphone-in-us"},
    {"device": "desktop", "os": "Linux", "url": "https://example.com/linux-desktops"},
    {"city": "London", "query": {"debug": ""}, "url": "https://example.com/london-debug"},
    {
        "after": "2026-03-20T00:00:00Z",
        "before": "2026-06-21T00:00:00Z",
        "url": "https://example.com/spring",
    },
]


def _same_rules(answered: list[dict], posted: list[dict]) -> None:
    """Shlink's rules as answered: priorities 1…n in the order posted, each rule's conditions
    the ones posted (in our order of conditions, which may not be the order sent)."""
    assert [rule["priority"] for rule in answered] == list(range(1, len(posted) + 1))
    assert [rule["longUrl"] for rule in answered] == [rule["longUrl"] for rule in posted]
    for got, sent in zip(answered, posted, strict=True):
        key = lambda c: (c["type"], c["matchKey"] or "", c["matchValue"] or "")  # noqa: E731
        assert sorted(got["conditions"], key=key) == sorted(sent["conditions"], key=key)


@pytest.fixture
def link(user) -> UrlLink:
    return link_create(user=user, long_url=LONG, alias="rules-here").link


def rules_url(code: str = "rules-here", version: str = BASE) -> str:
    return f"{version}/short-urls/{code}/redirect-rules"


def test_a_short_url_without_rules_lists_none(user, link):
    answer = shlink_client(user).get(rules_url())
    assert answer.status_code == 200
    assert answer.json() == {"defaultLongUrl": LONG, "redirectRules": []}


def test_rules_set_as_shlink_sends_them_are_ours_and_read_back_the_same(user, link):
    shlink = shlink_client(user)
    answer = shlink.post(rules_url(), {"redirectRules": SHLINK_RULES}, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["defaultLongUrl"] == LONG
    _same_rules(answer.json()["redirectRules"], SHLINK_RULES)

    link.refresh_from_db()
    assert link.rules == OUR_RULES  # our own API, the forms and the redirect read these
    assert client_for(user).get(f"/api/v1/links/{link.code}/").json()["rules"] == OUR_RULES
    assert shlink.get(f"{BASE}/short-urls/{link.code}").json()["hasRedirectRules"] is True

    listed = shlink.get(rules_url()).json()
    assert listed == answer.json()
    # Posted back as a client that read them would (priorities and all), they stay the same.
    again = shlink.post(rules_url(), {"redirectRules": listed["redirectRules"]}, format="json")
    assert again.status_code == 200 and again.json() == listed
    link.refresh_from_db()
    assert link.rules == OUR_RULES


def test_rules_made_here_go_to_shlink_and_back_unchanged(user, link):
    ours = [
        {"device": "tablet", "language": "zh", "url": "https://example.com/tablet"},
        {
            "country": "CN",
            "city": "Hangzhou",
            "query": {"utm_source": "mail", "ref": None, "debug": ""},
            "ip": "2001:db8::/32",
            "after": "2026-01-01T00:00:00Z",
            "before": "2027-01-01T00:00:00Z",
            "url": "https://example.com/everything",
        },
    ]
    api = client_for(user)
    assert (
        api.patch(f"/api/v1/links/{link.code}/", {"rules": ours}, format="json").json()["rules"]
        == ours
    )
    shlink = shlink_client(user)
    listed = shlink.get(rules_url()).json()["redirectRules"]
    assert listed == [
        {
            "longUrl": "https://example.com/tablet",
            "priority": 1,
            "conditions": [condition("device", "tablet"), condition("language", "zh")],
        },
        {
            "longUrl": "https://example.com/everything",
            "priority": 2,
            "conditions": [
                condition("geolocation-country-code", "CN"),
                condition("geolocation-city-name", "Hangzhou"),
                condition("valueless-query-param", None, "debug"),  # by name
                condition("any-value-query-param", None, "ref"),
                condition("query-param", "mail", "utm_source"),
                condition("ip-address", "2001:db8::/32"),
                condition("after-date", "2026-01-01T00:00:00+00:00"),
                condition("before-date", "2027-01-01T00:00:00+00:00"),
            ],
        },
    ]
    assert shlink.post(rules_url(), {"redirectRules": listed}, format="json").status_code == 200
    link.refresh_from_db()
    assert link.rules == ours


def test_each_value_is_stored_in_our_one_spelling_and_answered_so(user, link):
    sent = [
        {
            "longUrl": "example.com/office",  # as the long URL: https:// added
            "priority": 7,  # ignored, as Shlink ignores it: the order is the priority
            "conditions": [
                condition("ip-address", "10.20.*.*"),
                condition("geolocation-country-code", "de"),
                condition("device", "IOS"),
                condition("after-date", "2026-05-01T09:00:00+02:00"),
                # Shlink's importer once read these parameters' names from matchValue.
                condition("any-value-query-param", "campaign"),
            ],
        }
    ]
    answer = shlink_client(user).post(rules_url(), {"redirectRules": sent}, format="json")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["redirectRules"] == [
        {
            "longUrl": "https://example.com/office",
            "priority": 1,
            "conditions": [
                condition("device", "ios"),
                condition("geolocation-country-code", "DE"),
                condition("any-value-query-param", None, "campaign"),
                condition("ip-address", "10.20.0.0/16"),
                condition("after-date", "2026-05-01T07:00:00+00:00"),
            ],
        }
    ]


def test_an_empty_list_removes_the_rules(user, link):
    shlink = shlink_client(user)
    shlink.post(rules_url(), {"redirectRules": SHLINK_RULES[:2]}, format="json")
    answer = shlink.post(rules_url(), {"redirectRules": []}, format="json")
    assert answer.json() == {"defaultLongUrl": LONG, "redirectRules": []}
    link.refresh_from_db()
    assert link.rules == []
    assert shlink.get(f"{BASE}/short-urls/{link.code}").json()["hasRedirectRules"] is False


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        # Shlink's own invalid cases (its API tests), each a 400 invalid-data there too.
        ({"redirectRules": ["foo"]}, "redirectRules[0]: give each rule as an object"),
        (
            {"redirectRules": [{"longUrl": "invalid", "conditions": []}]},
            "redirectRules[0].longUrl: ",
        ),
        (
            {"redirectRules": [{"longUrl": "https://example.com", "conditions": "foo"}]},
            "redirectRules[0].conditions: give the conditions as a list",
        ),
        (
            {
                "redirectRules": [
                    {"longUrl": "https://example.com", "conditions": [condition("invalid", "foo")]}
                ]
            },
            "redirectRules[0].conditions[0].type: “invalid” is not a condition type",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("device", "invalid-device")],
                    }
                ]
            },
            "redirectRules[0].conditions[0].matchValue: “invalid-device” is not a device",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("ip-address", "not an IP address")],
                    }
                ]
            },
            "redirectRules[0].conditions[0]: “not an IP address” is not an IP address",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("geolocation-country-code", "not a country code")],
                    }
                ]
            },
            "redirectRules[0].conditions[0]: “not a country code” is not an ISO 3166",
        ),
        # Shlink holds these; ours cannot (yet): refused, never dropped.
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [
                            condition("device", "android"),
                            condition("browser", "chrome"),
                        ],
                    }
                ]
            },
            "redirectRules[0].conditions[1].type: conditions on the visitor's browser "
            "(“browser”) are not supported here",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [
                            condition("language", "en"),
                            condition("ip-address", "1.2.*.4"),
                        ],
                    }
                ]
            },
            "redirectRules[0].conditions[1]: “1.2.*.4” is not an address pattern this service "
            "can match",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("language", "en-US")],
                    }
                ]
            },
            "redirectRules[0].conditions[0]: rules match the language only, not the region: "
            "use “en”.",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("device", "android"), condition("device", "ios")],
                    }
                ]
            },
            "redirectRules[0].conditions[1]: this rule has a device or OS condition already",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [
                            condition("geolocation-country-code", "US"),
                            condition("geolocation-country-code", "CA"),
                        ],
                    }
                ]
            },
            "redirectRules[0].conditions[1]: this rule has a geolocation-country-code "
            "condition already",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [
                            condition("query-param", "a", "ref"),
                            condition("any-value-query-param", None, "ref"),
                        ],
                    }
                ]
            },
            "redirectRules[0].conditions[1].matchKey: “ref” has a condition already",
        ),
        # What else the service says, in Shlink's terms.
        (
            {"redirectRules": [{"longUrl": "https://example.com", "conditions": []}]},
            "redirectRules[0].conditions: give at least one condition, of device, language,",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [
                            condition("after-date", "2026-06-01T00:00:00Z"),
                            condition("before-date", "2026-05-01T00:00:00Z"),
                        ],
                    }
                ]
            },
            "redirectRules[0].conditions[1]: 2026-05-01T00:00:00Z is not later than after",
        ),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com",
                        "conditions": [condition("query-param", "", "utm_source")],
                    }
                ]
            },
            "redirectRules[0].conditions[0].matchValue: give the value “utm_source” must have",
        ),
        ({"redirectRules": "none"}, "redirectRules: give the rules as a list"),
        ({}, "redirectRules: give the rules as a list"),
        (
            {
                "redirectRules": [
                    {
                        "longUrl": "https://example.com/x",
                        "conditions": [condition("language", "en")],
                    }
                ]
                * 21
            },
            "redirectRules: a short URL has at most 20 rules",
        ),
    ],
)
def test_what_ours_cannot_hold_is_shlinks_invalid_data_naming_the_rule_and_condition(
    user, link, body, problem
):
    shlink = shlink_client(user)
    shlink.post(rules_url(), {"redirectRules": SHLINK_RULES[:1]}, format="json")
    answer = shlink.post(rules_url(), body, format="json")
    found = assert_problem(answer, 400, "invalid-data")
    assert found["title"] == "Invalid data"
    assert found["invalidElements"] == ["redirectRules"]
    assert any(message.startswith(problem) for message in found["errors"]["redirectRules"]), found
    assert problem in found["detail"]
    link.refresh_from_db()
    assert link.rules == OUR_RULES[:1]  # nothing changed


def test_an_unknown_someone_else_s_or_deleted_short_url_is_not_found(user, other_user, link):
    link_create(user=other_user, long_url=LONG, alias="theirs-too")
    shlink = shlink_client(user)
    for code in ("no-such-code", "theirs-too"):
        for answer in (
            shlink.get(rules_url(code)),
            shlink.post(rules_url(code), {"redirectRules": []}, format="json"),
        ):
            body = assert_problem(answer, 404, "short-url-not-found")
            assert body["shortCode"] == code
    link_revoke(code=link.code, user=user)
    assert_problem(shlink.get(rules_url()), 404, "short-url-not-found")


def test_a_viewer_reads_the_rules_and_may_not_set_them(user, other_user):
    team = workspace_create(user=user, name="Team")
    member_add(by=user, workspace=team, username=other_user.username, role=Role.VIEWER)
    link_create(
        user=user,
        long_url=LONG,
        alias="team-rules",
        workspace=team,
        rules=[{"country": "CN", "url": "https://example.com/cn"}],
    )
    # A DRF token acts in every workspace of its user (an API key in one only).
    viewer = APIClient()
    viewer.credentials(HTTP_X_API_KEY=Token.objects.create(user=other_user).key)
    listed = viewer.get(rules_url("team-rules"))
    assert listed.status_code == 200
    assert listed.json()["redirectRules"][0]["conditions"] == [
        condition("geolocation-country-code", "CN")
    ]
    refused = viewer.post(rules_url("team-rules"), {"redirectRules": []}, format="json")
    assert refused.status_code == 403
    assert UrlLink.objects.get(code="team-rules").rules


def test_every_version_of_the_route_answers_and_domain_names_the_link(user, link):
    shlink = shlink_client(user)
    for version in ("/rest/v1", "/rest/v2", "/rest/v3"):
        assert shlink.get(rules_url(version=version)).status_code == 200
    assert shlink.get(rules_url() + "?domain=DEFAULT").status_code == 200
    assert_problem(
        shlink.get(rules_url() + "?domain=elsewhere.example"), 404, "short-url-not-found"
    )


@pytest.mark.django_db(transaction=True)
def test_visitors_go_where_the_rules_set_through_shlink_say(user, link):
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat(timespec="seconds")
    rules = [
        {
            "longUrl": "https://example.com/expired-offer",
            "conditions": [
                condition("query-param", "spring", "campaign"),
                condition("before-date", past),
            ],
        },
        {
            "longUrl": "https://example.com/spring",
            "conditions": [condition("query-param", "spring", "campaign")],
        },
        {
            "longUrl": "https://example.com/office",
            "conditions": [condition("ip-address", "10.1.*.*")],
        },
    ]
    answer = shlink_client(user).post(rules_url(), {"redirectRules": rules}, format="json")
    assert answer.status_code == 200, answer.json()
    visitor = Client()
    spring = visitor.get(f"/{link.code}?campaign=spring", REMOTE_ADDR="8.8.8.8")
    assert spring["Location"] == "https://example.com/spring?campaign=spring"
    assert visitor.get(f"/{link.code}", REMOTE_ADDR="10.1.9.9")["Location"] == (
        "https://example.com/office"
    )
    assert visitor.get(f"/{link.code}?campaign=autumn", REMOTE_ADDR="8.8.8.8")["Location"] == (
        f"{LONG}?campaign=autumn"
    )


def test_every_condition_type_shlink_has_is_either_supported_or_refused_by_name():
    """Shlink 5.1's RedirectConditionType, all eleven."""
    shlink_types = {
        "device",
        "language",
        "query-param",
        "any-value-query-param",
        "valueless-query-param",
        "ip-address",
        "geolocation-country-code",
        "geolocation-city-name",
        "before-date",
        "after-date",
        "browser",
    }
    assert set(redirect_rules.SUPPORTED) | set(redirect_rules.UNSUPPORTED) == shlink_types
    assert not set(redirect_rules.SUPPORTED) & set(redirect_rules.UNSUPPORTED)
