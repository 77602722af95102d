"""What a link's app deep links and a domain's app-association files may hold (issue #28),
checked in links/services/app_links.py for every channel: app schemes, universal links,
mailto:/tel:/sms: pass; javascript:, data:, file: and their kind are refused whatever the case;
web addresses meet the long-URL policy; association files must be JSON of their platform's
shape. Errors name the field."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from links.cache import LinkEntry
from links.models import Domain, UrlLink
from links.services.app_links import ASSOCIATION_MAX_BYTES
from links.services.change import link_update
from links.services.create import link_create
from links.services.domains import domain_save

pytestmark = pytest.mark.django_db

TARGET = "https://example.com/product/7"


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("exampleshop://product/7", "exampleshop://product/7"),
        ("ExampleShop://product/7", "exampleshop://product/7"),  # schemes are case-insensitive
        ("fb://profile/42", "fb://profile/42"),
        ("myapp:///open?item=7", "myapp:///open?item=7"),
        ("intent://scan/#Intent;scheme=zxing;package=com.google.zxing.client.android;end", None),
        ("mailto:sales@example.com?subject=Hello", None),
        ("tel:+49-30-1234567", None),
        ("sms:+4930123?body=hi", None),
        ("https://shop.example.com/app/product/7", None),
        ("shop.example.com/app", "https://shop.example.com/app"),  # as a long URL would
        ("  exampleshop://x  ", "exampleshop://x"),
        ("", ""),
    ],
)
def test_app_schemes_universal_links_and_mail_phone_sms_are_kept(user, given, stored):
    link = link_create(user=user, long_url=TARGET, ios_url=given, android_url=given).link
    link.refresh_from_db()
    assert link.ios_url == link.android_url == (given if stored is None else stored)


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("javascript:alert(1)", "javascript: URLs are refused"),
        ("JavaScript:alert(1)", "javascript: URLs are refused"),
        ("data:text/html,<script>alert(1)</script>", "data: URLs are refused"),
        ("file:///etc/passwd", "file: URLs are refused"),
        ("vbscript:msgbox", "vbscript: URLs are refused"),
        ("blob:https://example.com/uuid", "blob: URLs are refused"),
        ("myapp://", "Say what the myapp: URL opens"),
        ("myapp://item with space", "no spaces or control characters"),
        ("myapp://item\x00", "no spaces or control characters"),
        ("http://localhost/app", "points back at this short-link service"),
        ("ftp//nothing", "not a web address"),
    ],
)
@pytest.mark.parametrize("field", ["ios_url", "android_url"])
def test_what_runs_in_the_browser_or_goes_nowhere_is_refused_naming_the_field(
    user, given, says, field
):
    with pytest.raises(ValidationError) as refused:
        link_create(user=user, long_url=TARGET, **{field: given})
    problems = refused.value.message_dict
    assert list(problems) == [field]
    assert says in problems[field][0]
    assert not UrlLink.objects.exists()


def test_an_edit_through_the_same_rules_and_a_link_with_app_links_is_no_plain_one(user):
    plain = link_create(user=user, long_url=TARGET).link
    with_app = link_create(user=user, long_url=TARGET, ios_url="exampleshop://p/7").link
    assert with_app.pk != plain.pk  # not handed back as the user's plain link to that URL
    with pytest.raises(ValidationError) as refused:
        link_update(code=with_app.code, user=user, android_url="data:,x")
    assert list(refused.value.message_dict) == ["android_url"]
    link_update(code=with_app.code, user=user, android_url="tel:+4930123")
    with_app.refresh_from_db()
    assert (with_app.ios_url, with_app.android_url) == ("exampleshop://p/7", "tel:+4930123")


def test_the_cached_entry_keeps_both_app_links_through_its_text_form(user):
    link = link_create(
        user=user, long_url=TARGET, ios_url="myapp:///ö", android_url="https://bücher.example/a"
    ).link
    entry = LinkEntry.from_link(link)
    assert entry.gated  # decided in serving/gates.py, never counted by the fused read
    assert (entry.ios_location, entry.android_location) == (
        "myapp:///%C3%B6",
        "https://xn--bcher-kva.example/a",
    )
    assert LinkEntry.parse(entry.key, entry.serialize()) == entry


AASA = '{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "paths": ["*"]}]}}'
ASSETLINKS = json.dumps(
    [
        {
            "relation": ["delegate_permission/common.handle_all_urls"],
            "target": {"namespace": "android_app", "package_name": "com.example.app"},
        }
    ]
)


def test_association_files_are_kept_as_written(db):
    domain = domain_save(
        host="go.example.net", apple_app_site_association=AASA, assetlinks=ASSETLINKS
    )
    domain.refresh_from_db()
    assert (domain.apple_app_site_association, domain.assetlinks) == (AASA, ASSETLINKS)


@pytest.mark.parametrize(
    ("field", "given", "says"),
    [
        ("apple_app_site_association", "{applinks: }", "not valid JSON"),
        ("apple_app_site_association", "[]", "is a JSON object"),
        ("apple_app_site_association", '{"applinks": []}', '"applinks" must be an object'),
        ("assetlinks", "{}", "JSON array of statements"),
        ("assetlinks", "[1]", "statement 0 is not an object"),
        ("assetlinks", '[{"target": {"namespace": "web"}}]', 'needs a "relation" list'),
        ("assetlinks", '[{"relation": ["x"]}]', 'needs a "target" object'),
        ("assetlinks", "[" + " " * ASSOCIATION_MAX_BYTES + "]", "at most 128 KB"),
    ],
)
def test_association_files_that_no_platform_would_read_are_refused(db, field, given, says):
    with pytest.raises(ValidationError) as refused:
        domain_save(host="go.example.net", **{field: given})
    assert list(refused.value.message_dict) == [field]
    assert says in refused.value.message_dict[field][0]
    assert not Domain.objects.filter(host="go.example.net").exists()
