"""What people read when they create a link: plain words, not HTTP jargon; a refusal that says
what is wrong; a warning for an alias that differs from another only by case; a free alias
suggested when the one asked for is taken. The same through the service, API, form and bulk."""

import datetime as dt
import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from links.models import UrlLink
from links.services.bulk import link_create_many
from links.services.change import link_revoke
from links.services.create import link_create
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db


def _long_url_refusal(long_url: str, user) -> str:
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=user, long_url=long_url)
    return excinfo.value.message_dict["long_url"][0]


@pytest.mark.parametrize("text", ["not a url", "notaurl", "hello world.com"])
def test_text_that_is_no_web_address_is_called_that(user, text):
    message = _long_url_refusal(text, user)
    assert "is not a web address" in message
    assert "Only http and https" not in message


def test_another_scheme_is_still_told_apart(user):
    assert "Only http and https" in _long_url_refusal("ftp://example.com/file", user)


def test_the_form_answers_not_a_url_in_plain_words(client, user):
    client.force_login(user)
    response = client.post("/", {"long_url": "not a url", "redirect_type": "302"})
    assert "is not a web address" in response.content.decode()


def test_redirect_types_are_offered_in_plain_words(client, user):
    client.force_login(user)
    page = client.get("/").content.decode()
    assert "Temporary (302, default)" in page
    assert "Permanent (301)" in page
    assert "302 Found" not in page


def test_the_created_page_says_temporary_not_found(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url="https://example.com/w").link
    page = client.get(f"/?created={link.code}").content.decode()
    assert "Temporary (302, default)" in page
    assert "Found" not in page


def test_a_revoked_link_shows_no_past_expiry(client, user):
    link = link_create(user=user, long_url="https://example.com/r", title="Gone").link
    link_revoke(code=link.code, user=user)
    client.force_login(user)
    listed = client.get("/dashboard/").content.decode()
    cell = re.search(r'<td data-label="Expires"[^>]*>(.*?)</td>', listed, re.S)
    assert cell[1].strip() == "—"
    assert "; expires" not in client.get(f"/dashboard/links/{link.code}/").content.decode()
    assert "· expires" not in client.get(f"/?created={link.code}").content.decode()


def test_a_stopped_link_says_when_it_stopped_on_every_page(client, user, staff_user):
    """Revoked or expired: "revoked <when>" / "expired <when>", never "expires <past time>"
    (a revoke sets expires_at to its own moment)."""
    revoked = link_create(user=user, long_url="https://example.com/r", alias="was-here").link
    link_revoke(code=revoked.code, user=user)
    revoked.refresh_from_db()
    expired = link_create(user=user, long_url="https://example.com/e", alias="ran-out").link
    UrlLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - dt.timedelta(days=1))
    expired.refresh_from_db()

    def shown(moment):
        return f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"

    client.force_login(user)
    for link, word, moment in [
        (revoked, "revoked", revoked.revoked_at),
        (expired, "expired", expired.expires_at),
    ]:
        page = client.get(f"/dashboard/links/{link.code}/").content.decode()
        dates = re.search(r'data-testid="link-dates">(.*?)</div>', page)[1]
        assert dates == f"Created; {word} {shown(moment)}"

    client.force_login(staff_user)
    listed = client.get(reverse("admin:links_urllink_changelist")).content.decode()
    assert f"revoked {shown(revoked.revoked_at)}" in listed
    assert f"expired {shown(expired.expires_at)}" in listed
    change = client.get(reverse("admin:links_urllink_change", args=[revoked.pk])).content.decode()
    assert f"revoked {shown(revoked.revoked_at)}" in change
    assert "Expires at" not in change


def test_a_working_link_still_says_when_it_expires(client, user):
    later = timezone.now() + dt.timedelta(days=3)
    link = link_create(user=user, long_url="https://example.com/l", expires_at=later).link
    client.force_login(user)
    page = client.get(f"/dashboard/links/{link.code}/").content.decode()
    dates = re.search(r'data-testid="link-dates">(.*?)</div>', page)[1]
    assert dates == f"Created; expires {timezone.localtime(later):%Y-%m-%d %H:%M}"


# --- Aliases that differ only by case -------------------------------------------------------


def test_an_alias_differing_only_by_case_is_created_with_a_warning(user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    result = link_create(user=user, long_url="https://example.com/b", alias="Spring-Sale")
    assert result.created
    assert result.warnings == {
        "alias": [
            "“Spring-Sale” differs from the existing “spring-sale” only by upper and lower "
            "case: people typing it may end up on the other link."
        ]
    }


def test_no_warning_for_an_alias_unlike_any_other(user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    assert link_create(user=user, long_url="https://e.com/", alias="summer").warnings == {}


def test_the_api_answers_the_warning_with_the_new_link(user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    response = client_for(user).post(
        "/api/v1/links/",
        {"long_url": "https://example.com/c", "alias": "SPRING-sale"},
        format="json",
    )
    assert response.status_code == 201
    assert "only by upper and lower case" in response.json()["warnings"]["alias"][0]


def test_bulk_warns_per_item_as_the_single_create_does(user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    items = [
        {"long_url": "https://example.com/1", "alias": "Spring-Sale"},  # beside an old one
        {"long_url": "https://example.com/2", "alias": "autumn"},
        {"long_url": "https://example.com/3"},
        {"long_url": "https://example.com/4", "alias": "Winter"},  # beside the next item
        {"long_url": "https://example.com/5", "alias": "WINTER"},
    ]
    results = link_create_many(user=user, items=items)
    single = link_create(user=user, long_url="https://example.com/6", alias="SPRING-SALE")
    assert results[0].created
    assert results[0].warnings == {
        "alias": [
            "“Spring-Sale” differs from the existing “spring-sale” only by upper and lower "
            "case: people typing it may end up on the other link."
        ]
    }
    assert results[1].warnings is None and results[2].warnings is None
    assert "the existing “WINTER” only" in results[3].warnings["alias"][0]
    assert "the existing “Winter” only" in results[4].warnings["alias"][0]
    assert "“Spring-Sale” and “spring-sale”" in single.warnings["alias"][0]


def test_the_bulk_api_answers_warnings_in_the_items_result(user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    response = client_for(user).post(
        "/api/v1/links/bulk/",
        {
            "items": [
                {"long_url": "https://example.com/c", "alias": "SPRING-sale"},
                {"long_url": "https://example.com/d", "alias": "summer"},
            ]
        },
        format="json",
    )
    assert response.status_code == 200
    first, second = response.json()["results"]
    assert first["status"] == 201 and first["errors"] is None
    assert first["warnings"] == {
        "alias": [
            "“SPRING-sale” differs from the existing “spring-sale” only by upper and lower "
            "case: people typing it may end up on the other link."
        ]
    }
    assert "warnings" not in second  # only when there is something to say


def test_the_form_shows_the_warning(client, user):
    UrlLinkFactory(owner=user, alias="spring-sale")
    client.force_login(user)
    response = client.post(
        "/",
        {"long_url": "https://example.com/d", "alias": "Spring-Sale", "redirect_type": "302"},
        follow=True,
    )
    assert "only by upper and lower case" in response.content.decode()


# --- A taken alias: a free one suggested ---------------------------------------------------


def test_a_taken_alias_comes_with_a_free_suggestion(user, other_user):
    UrlLinkFactory(owner=other_user, alias="spring-sale")
    UrlLinkFactory(owner=other_user, alias="spring-sale-2")
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=user, long_url="https://example.com/e", alias="spring-sale")
    assert excinfo.value.message_dict["alias"] == [
        "The alias “spring-sale” is already taken; “spring-sale-3” is free."
    ]
    assert link_create(user=user, long_url="https://example.com/e", alias="spring-sale-3")


def test_the_api_400_names_the_free_alias(user):
    UrlLinkFactory(owner=user, alias="summer")
    response = client_for(user).post(
        "/api/v1/links/", {"long_url": "https://example.com/f", "alias": "summer"}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "alias": ["The alias “summer” is already taken; “summer-2” is free."]
    }


def test_the_form_offers_the_free_alias(client, user):
    UrlLinkFactory(owner=user, alias="summer")
    client.force_login(user)
    response = client.post(
        "/", {"long_url": "https://example.com/g", "alias": "summer", "redirect_type": "302"}
    )
    assert "“summer-2” is free" in response.content.decode()


def test_a_long_taken_alias_gets_a_suggestion_that_fits(user):
    alias = "a" * 32
    UrlLinkFactory(owner=user, alias=alias)
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=user, long_url="https://example.com/h", alias=alias)
    suggestion = excinfo.value.message_dict["alias"][0].split("“")[2].split("”")[0]
    assert len(suggestion) <= 32
    assert link_create(user=user, long_url="https://example.com/h", alias=suggestion).created


def test_bulk_suggests_too(user):
    UrlLinkFactory(owner=user, alias="winter")
    [result] = link_create_many(
        user=user, items=[{"long_url": "https://example.com/i", "alias": "winter"}]
    )
    assert result.errors == {"alias": ["The alias “winter” is already taken; “winter-2” is free."]}
    assert UrlLink.objects.filter(code="winter-2").count() == 0
