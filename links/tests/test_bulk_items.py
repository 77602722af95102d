"""The bulk API's item checks: one pass over the items gives what a serializer per item gave."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from links.api.serializers.inputs import LinkCreateSerializer, validate_create_items
from links.services.policy import LongUrlRules, validate_long_url
from links.tests.helpers import client_for

LATER = (timezone.now() + timedelta(days=3)).isoformat()

ITEMS = [
    {"long_url": "https://example.com/a"},
    {"long_url": "  https://example.com/padded \n"},
    {"long_url": ""},
    {"long_url": "   "},
    {"long_url": 12},
    {"long_url": True},
    {"long_url": ["https://example.com/"]},
    {"long_url": None},
    {"long_url": "https://example.com/\x00nul"},
    {"long_url": "https://example.com/\ud800"},
    {"long_url": "ftp://example.com/not-checked-here"},
    {"long_url": "https://example.com/b", "title": "  Spring sale  "},
    {"long_url": "https://example.com/b", "title": ""},
    {"long_url": "https://example.com/b", "title": "   "},
    {"long_url": "https://example.com/b", "title": "x" * 200},
    {"long_url": "https://example.com/b", "title": "x" * 201},
    {"long_url": "https://example.com/b", "title": " " + "x" * 200 + " "},
    {"long_url": "https://example.com/b", "title": 5},
    {"long_url": "https://example.com/b", "alias": " my-alias "},
    {"long_url": "https://example.com/b", "alias": ""},
    {"long_url": "https://example.com/b", "alias": "x\x00"},
    {"long_url": "https://example.com/b", "alias": None},
    {"long_url": "https://example.com/b", "expires_at": LATER},
    {"long_url": "https://example.com/b", "expires_at": None},
    {"long_url": "https://example.com/b", "expires_at": "tomorrow"},
    {"long_url": "https://example.com/b", "redirect_type": 301},
    {"long_url": "https://example.com/b", "redirect_type": "301"},
    {"long_url": "https://example.com/b", "redirect_type": True},
    {"long_url": "https://example.com/b", "redirect_type": 303},
    {"long_url": "https://example.com/b", "unknown": "ignored"},
    {"title": "no url"},
    {},
    "not an object",
    ["https://example.com/"],
    7,
    None,
]


def _one_serializer_per_item(raw):
    serializer = LinkCreateSerializer(data=raw)
    if serializer.is_valid():
        return serializer.validated_data, None
    return None, serializer.errors


@pytest.mark.parametrize("raw", ITEMS, ids=[repr(item)[:60] for item in ITEMS])
def test_each_item_is_checked_as_a_serializer_of_its_own_would(raw):
    [(data, errors)] = validate_create_items([raw])

    expected_data, expected_errors = _one_serializer_per_item(raw)
    assert data == expected_data
    assert errors == expected_errors
    if errors is not None:
        # Same messages and codes, in the same shape.
        assert {k: [(str(m), m.code) for m in v] for k, v in errors.items()} == {
            k: [(str(m), m.code) for m in v] for k, v in expected_errors.items()
        }


def test_a_whole_list_gives_one_result_per_item_in_order():
    results = validate_create_items(ITEMS)

    assert results == [_one_serializer_per_item(raw) for raw in ITEMS]


@pytest.mark.django_db
def test_a_null_item_still_refuses_the_whole_call(user):
    response = client_for(user).post(
        "/api/v1/links/bulk/",
        {"items": [{"long_url": "https://example.com/"}, None]},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"items": {"1": ["This field may not be null."]}}


@pytest.mark.django_db
def test_a_link_to_this_site_is_refused_per_item_by_the_host_the_call_came_to(user):
    body = (
        client_for(user)
        .post(
            "/api/v1/links/bulk/",
            {"items": [{"long_url": "http://testserver/abc"}, {"long_url": "https://ok.test/"}]},
            format="json",
        )
        .json()
    )

    assert [r["status"] for r in body["results"]] == [400, 201]
    assert body["results"][0]["errors"] == {
        "long_url": [
            "This URL points back at this short-link service; "
            "shortening it would make a redirect loop."
        ]
    }


URLS = [
    "https://Example.COM/Path?q=1",
    "https://s.example.com/abc",
    "https://blocked.test/x",
    "https://sub.blocked.test/x",
    "http://[::1]:8080/",
    "http://[fe80::1%25EtH0]/",
    "https://exa mple.com/",
    "https://example.com:99999/",
    "https://bücher.example/straße",
    "javascript:alert(1)",
    "",
]


def test_one_rules_object_decides_every_url_as_validate_long_url_does(settings, db):
    """A bulk call reads the settings once and checks every URL with them."""
    settings.SHORT_URL_BASE = "https://s.example.com/"
    settings.SHORTURL_BLOCKED_DOMAINS = ["blocked.test"]
    rules = LongUrlRules(request_host="testserver:80")

    def outcome(check, long_url):
        try:
            return check(long_url)
        except ValidationError as exc:
            return exc.message_dict

    for long_url in URLS:
        assert outcome(rules.check, long_url) == outcome(
            lambda url: validate_long_url(url, request_host="testserver:80"), long_url
        ), long_url
