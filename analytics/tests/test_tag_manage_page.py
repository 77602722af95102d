"""Renaming and deleting a tag from its stats page (/dashboard/tags/<tag>/): owners and editors
get the forms, viewers neither the forms nor a way round them."""

import pytest
from django.urls import reverse

from links.models import Tag, UrlLink
from links.tests.factories import UserFactory
from links.tests.helpers import tag_names, tagged_link
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def _url(tag: str) -> str:
    return reverse("tag_stats", args=[tag])


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_owners_see_the_rename_and_delete_forms(logged_in, user):
    tagged_link(user, 1, ["spring"])

    html = logged_in.get(_url("spring")).content.decode()

    assert 'data-testid="tag-rename-form"' in html and 'value="spring"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert "Delete this tag…" in html and "Yes, delete the tag" in html
    assert "The links themselves stay and keep redirecting" in html


def test_rename_goes_to_the_new_names_page_with_a_message(logged_in, user):
    one, two = tagged_link(user, 1, ["spring"]), tagged_link(user, 2, ["Spring", "mail"])

    response = logged_in.post(
        _url("spring"), {"action": "rename", "name": "Summer sale"}, follow=True
    )

    assert response.redirect_chain == [(_url("Summer sale"), 302)]
    assert _messages(response) == ["Renamed the tag “spring” to “Summer sale”."]
    assert "Stats for the tag “Summer sale”" in response.content.decode()
    assert tag_names(one) == ["Summer sale"] and tag_names(two) == ["Summer sale", "mail"]


def test_rename_onto_another_tag_asks_before_merging(logged_in, user):
    """Renaming onto another tag's name merged the two at once; the page now names the tag it
    would merge into and how many links move, and merges only once that is confirmed."""
    tagged_link(user, 1, ["spring"])
    tagged_link(user, 2, ["spring"])
    tagged_link(user, 3, ["Sale"])

    asked = logged_in.post(_url("spring"), {"action": "rename", "name": "sale"})

    assert asked.status_code == 200
    html = asked.content.decode()
    assert 'data-testid="tag-merge-confirm"' in html
    assert "Merge “spring” into “Sale”? Its 2 links will carry “Sale” instead" in html
    assert 'name="merge" value="confirmed"' in html
    assert sorted(Tag.objects.values_list("name", flat=True)) == ["Sale", "spring"]  # not yet

    response = logged_in.post(
        _url("spring"), {"action": "rename", "name": "sale", "merge": "confirmed"}, follow=True
    )

    assert response.redirect_chain == [(_url("Sale"), 302)]
    assert _messages(response) == [
        "Merged “spring” into your existing tag “Sale”: its links carry “Sale” now (3 links in "
        "all)."
    ]
    assert list(Tag.objects.values_list("name", flat=True)) == ["Sale"]


def test_a_refused_name_is_shown_beside_the_field(logged_in, user):
    tagged_link(user, 1, ["spring"])

    response = logged_in.post(_url("spring"), {"action": "rename", "name": "a,b"})

    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_name_error"' in html and "cannot contain a comma" in html
    assert list(Tag.objects.values_list("name", flat=True)) == ["spring"]


def test_delete_goes_to_my_links_and_the_links_stay(logged_in, user):
    one, two = tagged_link(user, 1, ["spring", "mail"]), tagged_link(user, 2, ["spring"])

    response = logged_in.post(_url("SPRING"), {"action": "delete"}, follow=True)

    assert response.redirect_chain == [(reverse("dashboard"), 302)]
    assert _messages(response) == [
        "Deleted the tag “spring”. It came off 2 links; the links stay as they were."
    ]
    assert tag_names(one) == ["mail"] and tag_names(two) == []
    assert UrlLink.objects.filter(revoked_at__isnull=True).count() == 2
    assert logged_in.get(_url("spring")).status_code == 404


def test_viewers_see_no_forms_and_a_hand_made_post_is_403(client, user):
    acme = workspace_create(user=user, name="Acme", slug="acme")
    viewer = UserFactory(username="vi")
    member_add(by=user, workspace=acme, username="vi", role=Role.VIEWER)
    link = tagged_link(user, 1, ["launch"], workspace=acme)
    client.force_login(viewer)
    client.post(reverse("workspace_switch"), {"workspace": "acme", "next": "/dashboard/"})

    page = client.get(_url("launch"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "tag-rename-form" not in html and "tag-delete-form" not in html

    for data in ({"action": "rename", "name": "x"}, {"action": "delete"}):
        assert client.post(_url("launch"), data).status_code == 403
    assert tag_names(link) == ["launch"]


def test_an_editor_of_the_team_workspace_may(client, user):
    acme = workspace_create(user=user, name="Acme", slug="acme")
    editor = UserFactory(username="ed")
    member_add(by=user, workspace=acme, username="ed", role=Role.EDITOR)
    link = tagged_link(user, 1, ["launch"], workspace=acme)
    own = tagged_link(user, 2, ["launch"])
    client.force_login(editor)
    client.post(reverse("workspace_switch"), {"workspace": "acme", "next": "/dashboard/"})

    assert client.post(_url("launch"), {"action": "delete"}).status_code == 302
    assert tag_names(link) == [] and tag_names(own) == ["launch"]


def test_an_unknown_action_or_tag(logged_in, user):
    tagged_link(user, 1, ["spring"])

    assert logged_in.post(_url("spring"), {"action": "explode"}).status_code == 400
    assert logged_in.post(_url("nope"), {"action": "delete"}).status_code == 404
