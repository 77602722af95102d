"""The rules and variants editor of the create and edit forms (issue #15): fixed rows of plain
inputs that work without JavaScript, checked by links.services.targeting, its problems shown
beside the row the person filled in."""

import re
from html import unescape

import pytest
from django.urls import reverse

from links.models import UrlLink
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db

RULE = {"device": "mobile", "os": "iOS", "country": "CN", "language": "zh"}


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def create(client, **data):
    payload = {
        "long_url": "https://example.com/spring",
        "redirect_type": "302",
        "pass_query": "on",
        **data,
    }
    return client.post(reverse("home"), payload)


def test_a_rule_and_a_70_30_split_from_the_form_are_stored_blank_rows_ignored(logged_in, user):
    response = create(
        logged_in,
        # The second rule row, the first left empty; spellings as people type them.
        rule_1_device="mobile",
        rule_1_os="iOS",
        rule_1_country="cn",
        rule_1_language="ZH",
        rule_1_url="example.com/cn",
        variant_0_url="https://example.com/a",
        variant_0_weight="70",
        variant_2_url="https://example.com/b",
        variant_2_weight="30",
    )
    assert response.status_code == 302, response.context["form"].errors
    link = UrlLink.objects.get(owner=user)
    assert link.rules == [{**RULE, "url": "https://example.com/cn"}]
    assert link.variants == [
        {"url": "https://example.com/a", "weight": 70},
        {"url": "https://example.com/b", "weight": 30},
    ]


def test_the_editor_is_closed_and_empty_on_a_new_form_and_every_input_is_labelled(logged_in):
    html = logged_in.get(reverse("home")).content.decode()
    assert 'data-testid="targeting">' in html  # the <details>, not open
    assert html.count('data-testid="rule-row"') == 3
    assert html.count('data-testid="variant-row"') == 4
    for name in ("rule_0_device", "rule_2_url", "variant_3_url", "variant_3_weight"):
        assert f'<label for="id_{name}">' in html


def test_problems_are_shown_beside_the_row_and_field_that_has_them(logged_in, user):
    response = create(
        logged_in,
        rule_1_country="XX",
        rule_1_url="https://example.com/x",
        rule_2_url="https://example.com/nobody",  # no condition
        variant_1_url="https://example.com/a",
        variant_1_weight="60",
        variant_3_url="https://example.com/b",
        variant_3_weight="30",
    )
    assert response.status_code == 200
    form = response.context["form"]
    # rules[0] for the service is the second row here: the error is put on that row's country.
    assert "not an ISO 3166 country code" in form.errors["rule_1_country"][0]
    assert form.row_errors["rule_2"] == [
        "give at least one of device, os, country, city, language, query, ip, after, before."
    ]
    assert form.targeting_errors["variants"] == [
        "the weights must add up to 100 (these add up to 90)."
    ]
    html = response.content.decode()
    assert 'id="id_rule_1_country_error"' in html
    assert "Check the rules and variants below." in html
    assert 'data-testid="targeting" open' in html  # opened to show the problems
    assert not UrlLink.objects.filter(owner=user).exists()


def test_a_weight_that_is_not_a_number_is_refused_beside_it(logged_in, user):
    response = create(
        logged_in,
        variant_0_url="https://example.com/a",
        variant_0_weight="seventy",
        variant_1_url="https://example.com/b",
        variant_1_weight="30",
    )
    assert response.context["form"].errors["variant_0_weight"] == [
        "Give a whole number from 1 to 100."
    ]
    assert not UrlLink.objects.filter(owner=user).exists()


def test_a_rule_url_goes_through_the_long_url_policy(logged_in, user):
    response = create(logged_in, rule_0_country="CN", rule_0_url="http://testserver/abc")
    assert "points back at this short-link" in response.context["form"].errors["rule_0_url"][0]


@pytest.fixture
def targeted(user):
    return UrlLinkFactory(
        owner=user,
        rules=[
            {**RULE, "url": "https://example.com/cn"},
            {"country": "DE", "url": "https://example.com/de"},
            {"device": "tablet", "url": "https://example.com/tablet"},
        ],
        variants=[
            {"url": "https://example.com/a", "weight": 50},
            {"url": "https://example.com/b", "weight": 50},
        ],
    )


def _edit_payload(link, **data) -> dict:
    payload = {
        "long_url": link.long_url,
        "title": link.title,
        "redirect_type": str(link.redirect_type),
        "pass_query": "on",
    }
    for row, rule in enumerate(link.rules):
        payload.update({f"rule_{row}_{key}": value for key, value in rule.items()})
    for row, variant in enumerate(link.variants):
        payload.update({f"variant_{row}_{key}": value for key, value in variant.items()})
    return {**payload, **data}


def test_the_edit_page_shows_a_link_s_rules_and_variants_with_a_row_to_spare(logged_in, targeted):
    response = logged_in.get(reverse("link_edit", args=[targeted.code]))
    html = response.content.decode()
    assert 'data-testid="targeting" open' in html
    assert html.count('data-testid="rule-row"') == 4  # three rules and an empty row
    assert 'value="https://example.com/tablet"' in html
    assert '<option value="iOS" selected>iOS</option>' in html
    assert 'name="variant_1_weight" value="50"' in html


def test_editing_the_split_and_removing_a_rule(logged_in, targeted):
    payload = _edit_payload(
        targeted,
        variant_0_weight="80",
        variant_1_weight="20",
        rule_1_country="",
        rule_1_url="",
    )
    response = logged_in.post(reverse("link_edit", args=[targeted.code]), payload)
    assert response.status_code == 302, response.context["form"].errors
    targeted.refresh_from_db()
    assert [rule["url"] for rule in targeted.rules] == [
        "https://example.com/cn",
        "https://example.com/tablet",
    ]
    assert [variant["weight"] for variant in targeted.variants] == [80, 20]


def test_a_title_change_leaves_the_rules_alone_and_empty_rows_remove_them(logged_in, targeted):
    url = reverse("link_edit", args=[targeted.code])
    logged_in.post(url, _edit_payload(targeted, title="Renamed"))
    targeted.refresh_from_db()
    assert (targeted.title, len(targeted.rules), len(targeted.variants)) == ("Renamed", 3, 2)

    cleared = {
        key: value
        for key, value in _edit_payload(targeted).items()
        if not key.startswith(("rule_", "variant_"))
    }
    response = logged_in.post(url, cleared)
    assert response.status_code == 302
    targeted.refresh_from_db()
    assert (targeted.rules, targeted.variants) == ([], [])


# --- The conditions behind "More conditions" (issue #27) --------------------------------------


def _inputs(html: str) -> dict[str, str]:
    """The values a browser would send from the page's text inputs and selects (selected
    option), by name."""
    values = {
        name: value
        for name, value in re.findall(r'<input [^>]*name="([^"]+)"[^>]*value="([^"]*)"', html)
    }
    for name, options in re.findall(r'<select name="([^"]+)"[^>]*>(.*?)</select>', html, re.S):
        selected = re.search(r'<option value="([^"]*)" selected>', options)
        values[name] = selected[1] if selected else ""
    return {name: unescape(value) for name, value in values.items()}


def test_the_more_conditions_are_stored_shown_again_and_kept_by_an_unrelated_edit(logged_in, user):
    response = create(
        logged_in,
        rule_0_city=" London ",
        rule_0_query="utm_source=mail&ref=*&debug",
        rule_0_ip="10.1.*.*",
        rule_0_after="2026-05-01T09:00",
        rule_0_before="2026-05-31T18:30:15",
        rule_0_url="https://example.com/uk",
    )
    assert response.status_code == 302, response.context["form"].errors
    link = UrlLink.objects.get(owner=user)
    # The page's times are the person's zone's (TIME_ZONE here: UTC).
    assert link.rules == [
        {
            "city": "London",
            "query": {"utm_source": "mail", "ref": None, "debug": ""},
            "ip": "10.1.0.0/16",
            "after": "2026-05-01T09:00:00Z",
            "before": "2026-05-31T18:30:15Z",
            "url": "https://example.com/uk",
        }
    ]

    url = reverse("link_edit", args=[link.code])
    html = logged_in.get(url).content.decode()
    assert html.count('data-testid="more-conditions" open') == 1  # the filled rule's only
    shown = _inputs(html)
    assert {key: shown[f"rule_0_{key}"] for key in ("city", "query", "ip", "after", "before")} == {
        "city": "London",
        "query": "utm_source=mail&ref=*&debug",
        "ip": "10.1.0.0/16",
        "after": "2026-05-01T09:00:00",
        "before": "2026-05-31T18:30:15",
    }
    before = link.rules
    response = logged_in.post(url, {**shown, "title": "Renamed", "pass_query": "on"})
    assert response.status_code == 302, response.context["form"].errors
    link.refresh_from_db()
    assert (link.title, link.rules) == ("Renamed", before)


def test_a_bad_condition_behind_more_conditions_is_shown_beside_it_and_opens_it(logged_in, user):
    response = create(
        logged_in,
        rule_0_ip="10.*.1.*",
        rule_0_after="2026-06-01T00:00",
        rule_0_before="2026-05-01T00:00",
        rule_0_url="https://example.com/x",
    )
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "stars stand for the last parts only" in errors["rule_0_ip"][0]
    assert "is not later than after" in errors["rule_0_before"][0]
    html = response.content.decode()
    assert 'data-testid="more-conditions" open' in html
    assert 'id="id_rule_0_ip_error"' in html
    assert not UrlLink.objects.filter(owner=user).exists()
