"""Rules that live in one function each (#26), checked from the source: no module spells them
out again, so a change to one of them is a change everywhere.

- What makes two tag spellings one tag: links.models.tag_key.
- Which workspace a call acts in when it names none: workspaces.selectors.
  workspace_id_or_personal.
- The https:// a bare host gets: links.services.policy.with_default_scheme, from LongUrlRules.
- Which request is a link-preview fetcher: analytics.bots.is_link_preview (the stats' kind and
  the redirect's preview page both go by it).
- Which schemes an app deep link may not use: links.services.app_links.REFUSED_SCHEMES (#28),
  so the API's create and the bulk create refuse them in the same words.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings

from links.tests.helpers import client_for

ROOT = Path(settings.BASE_DIR)
APPS = ("accounts", "analytics", "compat", "links", "shorturl_project", "webhooks", "workspaces")


def _source_lines():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/tests/" in relative or "/migrations/" in relative:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                yield f"{relative}:{number}", line


def test_tags_are_keyed_by_tag_key_alone():
    # A tag's key inline: a name trimmed and lowercased, or a lookup on the key that does not
    # go through tag_key.
    inline = re.compile(r"\.strip\(\)\.lower\(\)|\.lower\(\)\.strip\(\)")
    lookup = re.compile(r"\b(?:tags__)?key(?:__in)?=(?!tag_key\(|key\b|keys\b|wanted\b)\w")
    offenders = [
        place
        for place, line in _source_lines()
        if ("tag" in line.lower() and inline.search(line))
        or (("Tag" in line or "tags__" in line) and lookup.search(line))
    ]
    assert offenders == []


def test_the_personal_workspace_fallback_is_written_once():
    fallback = re.compile(r"personal_workspace_of\([^)]*\)\.pk")
    places = [place for place, line in _source_lines() if fallback.search(line)]
    assert [place.split(":")[0] for place in places] == ["workspaces/selectors.py"], places


def test_the_default_scheme_is_added_by_the_long_url_rules_alone():
    # with_default_scheme is called by LongUrlRules.check only: every channel, and a lookup
    # reading a URL as a create would store it (link_find_existing), goes through the rules.
    calls = re.compile(r"\bwith_default_scheme\(")
    places = [place for place, line in _source_lines() if calls.search(line)]
    assert [place.split(":")[0] for place in places] == ["links/services/policy.py"] * 2, places


def test_a_link_preview_fetcher_is_told_by_is_link_preview_alone():
    # The kind compared (`kind == BotKind.SOCIAL`, `== "social"`) in bots.py's is_link_preview
    # only; the redirect asks it (serving is not among APPS: it is read here too).
    compared = re.compile(r"==\s*(?:BotKind\.SOCIAL|[\"']social[\"'])")
    serving = [
        (f"{path.relative_to(ROOT).as_posix()}:{number}", line)
        for path in sorted((ROOT / "serving").glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
    ]
    places = [place for place, line in [*_source_lines(), *serving] if compared.search(line)]
    assert [place.split(":")[0] for place in places] == ["analytics/bots.py"], places


def test_app_link_schemes_are_refused_by_refused_schemes_alone():
    # A refused scheme spelled as a string ("javascript", 'vbscript:') anywhere but app_links.py.
    spelled = re.compile(r"[\"'](?:javascript|vbscript|view-source):?[\"']")
    places = [place for place, line in _source_lines() if spelled.search(line)]
    assert places and {place.split(":")[0] for place in places} == {
        "links/services/app_links.py"
    }, places


@pytest.mark.django_db
def test_the_api_and_the_bulk_create_refuse_javascript_in_both_app_fields_alike(user):
    api = client_for(user)
    item = {
        "long_url": "https://example.com/product/7",
        "ios_url": "javascript:alert(1)",
        "android_url": "JavaScript:alert(2)",
    }
    one = api.post("/api/v1/links/", item, format="json")
    bulk = api.post("/api/v1/links/bulk/", {"items": [item]}, format="json")
    (result,) = bulk.json()["results"]
    assert (one.status_code, result["status"]) == (400, 400)
    assert set(one.json()) == {"ios_url", "android_url"}
    assert result["errors"] == one.json()
