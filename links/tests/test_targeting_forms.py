"""The rules and variants editor of the create and edit forms (issue #15): fixed rows of plain
inputs that work without JavaScript, checked by links.services.targeting, its problems shown
beside the row the person filled in."""

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
    assert form.row_errors["rule_2"] == ["give at least one of device, os, country, language."]
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
