"""The pages' side of tags, UTM and archived links (#15): create and edit forms, My links."""

import pytest
from django.urls import reverse

from links.models import UrlLink
from links.services.create import link_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def _edit_payload(link, **data):
    return {
        "long_url": link.long_url,
        "title": link.title,
        "redirect_type": str(link.redirect_type),
        "pass_query": "on",
        "tags": ", ".join(link.tags.values_list("name", flat=True)),
        **data,
    }


def test_create_form_has_the_advanced_section_with_tag_suggestions(logged_in, user):
    link_create(user=user, long_url="https://ex.com/1", tags=["Spring"])

    html = logged_in.get(reverse("home")).content.decode()

    assert '<details class="more-options advanced" id="advanced"' in html
    assert '<datalist id="tag-suggestions"' in html and '<option value="Spring">' in html
    assert 'name="utm_source"' in html and "data-utm-preview" in html
    assert "js/link-options.js" in html


def test_create_form_saves_tags_and_merges_utm_without_javascript(logged_in, user):
    response = logged_in.post(
        reverse("home"),
        {
            "long_url": "example.com/sale?ref=x",
            "redirect_type": "302",
            "pass_query": "on",
            "tags": "spring, Newsletter, ",
            "utm_source": "news",
            "utm_medium": "email",
        },
    )

    assert response.status_code == 302
    link = UrlLink.objects.get(owner=user)
    assert link.long_url == "https://example.com/sale?ref=x&utm_source=news&utm_medium=email"
    assert sorted(link.tags.values_list("name", flat=True)) == ["Newsletter", "spring"]


def test_a_bad_tag_is_shown_in_the_open_advanced_section(logged_in):
    response = logged_in.post(
        reverse("home"),
        {"long_url": "https://ex.com/", "redirect_type": "302", "tags": "x" * 51},
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="advanced" open' in html and "at most 50 characters" in html


def test_edit_replaces_tags_merges_utm_and_archives(logged_in, user):
    link = link_create(user=user, long_url="https://ex.com/p", tags=["old"]).link

    response = logged_in.post(
        reverse("link_edit", args=[link.code]),
        _edit_payload(link, tags="new, Other", utm_campaign="summer", archived="on"),
    )

    assert response.status_code == 302
    link.refresh_from_db()
    assert sorted(link.tags.values_list("name", flat=True)) == ["Other", "new"]
    assert link.long_url == "https://ex.com/p?utm_campaign=summer"
    assert link.archived


def test_edit_shows_the_links_tags(logged_in, user):
    link = link_create(user=user, long_url="https://ex.com/p", tags=["b", "A"]).link

    html = logged_in.get(reverse("link_edit", args=[link.code])).content.decode()

    assert 'value="A, b"' in html


def test_edit_shows_the_links_utm_values_in_the_builder(logged_in, user):
    link = link_create(
        user=user,
        long_url="https://ex.com/p?ref=x",
        utm={"utm_source": "newsletter", "utm_campaign": "spring sale & more"},
    ).link

    form = logged_in.get(reverse("link_edit", args=[link.code])).context["form"]

    assert form["utm_source"].value() == "newsletter"
    assert form["utm_campaign"].value() == "spring sale & more"
    assert form["utm_medium"].value() in (None, "")
    html = form["utm_campaign"].as_widget()
    assert 'value="spring sale &amp; more"' in html


def test_edit_sends_only_the_utm_values_typed_in(logged_in, user):
    link = link_create(
        user=user, long_url="https://ex.com/p", utm={"utm_source": "a", "utm_medium": "email"}
    ).link
    shown = {"utm_source": "a", "utm_medium": "email"}

    # Nothing changed: nothing saved (the shown values are not merged again).
    response = logged_in.post(reverse("link_edit", args=[link.code]), _edit_payload(link, **shown))
    assert response.status_code == 302
    assert [m.message for m in response.wsgi_request._messages] == ["Nothing was changed."]

    # The long URL edited by hand wins over the builder's unchanged values.
    response = logged_in.post(
        reverse("link_edit", args=[link.code]),
        _edit_payload(link, long_url="https://ex.com/p?utm_source=b", **shown),
    )
    link.refresh_from_db()
    assert link.long_url == "https://ex.com/p?utm_source=b"

    # A value typed into the builder replaces the long URL's.
    logged_in.post(
        reverse("link_edit", args=[link.code]),
        _edit_payload(link, utm_source="c", utm_medium=""),
    )
    link.refresh_from_db()
    assert link.long_url == "https://ex.com/p?utm_source=c"


def test_my_links_filters_by_tag_and_hides_archived_until_asked(logged_in, user):
    spring = link_create(user=user, long_url="https://ex.com/1", tags=["Spring"]).link
    plain = link_create(user=user, long_url="https://ex.com/2").link
    archived = link_create(user=user, long_url="https://ex.com/3", archived=True).link

    def codes(**params):
        page = logged_in.get(reverse("dashboard"), params)
        return {row["link"].code for row in page.context["rows"]}

    assert codes() == {spring.code, plain.code}
    assert codes(tag="spring") == {spring.code}
    assert codes(archived="on") == {spring.code, plain.code, archived.code}
    html = logged_in.get(reverse("dashboard")).content.decode()
    assert 'href="?tag=Spring"' in html  # the tag's chip filters by it


def test_archive_action_hides_the_link_and_unarchive_brings_it_back(logged_in, user, client):
    link = link_create(user=user, long_url="https://ex.com/a").link
    url = reverse("link_archive", args=[link.code])

    response = logged_in.post(url, {"archived": "1", "next": "/dashboard/?q=ex"})
    assert response.status_code == 302 and response["Location"] == "/dashboard/?q=ex"
    assert UrlLink.objects.get(pk=link.pk).archived
    assert logged_in.get(reverse("dashboard")).context["rows"] == []

    response = logged_in.post(url, {"archived": "0", "next": "https://evil.example/"})
    assert response["Location"] == reverse("dashboard")  # never sent elsewhere
    assert not UrlLink.objects.get(pk=link.pk).archived


def test_archive_is_post_only_and_only_for_the_owner(logged_in, other_user):
    theirs = link_create(user=other_user, long_url="https://ex.com/t").link
    url = reverse("link_archive", args=[theirs.code])

    assert logged_in.get(url).status_code == 405
    assert logged_in.post(url, {"archived": "1"}).status_code == 404
    assert not UrlLink.objects.get(pk=theirs.pk).archived
