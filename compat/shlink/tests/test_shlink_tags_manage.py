"""Shlink REST v3's tag renames and deletes (PUT and DELETE /rest/v3/tags) over our services:
204s, Shlink's tag-not-found and tag-conflict problems, a viewer's key refused."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links.models import Tag, UrlLink
from links.tests.factories import UserFactory
from links.tests.helpers import tag_names, tagged_link
from workspaces.models import Role
from workspaces.selectors import personal_workspace_of
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

TAGS = "/rest/v3/tags"


def shlink(user, workspace=None) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=api_key_create(user=user, name="s", workspace=workspace)[1])
    return client


def _problem(response, status: int, type_suffix: str | None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    expected = (
        "about:blank" if type_suffix is None else f"https://shlink.io/api/error/{type_suffix}"
    )
    assert body["type"] == expected
    assert body["status"] == status
    return body


def _rename(client: APIClient, old, new):
    return client.put(TAGS, {"oldName": old, "newName": new}, format="json")


def test_put_renames_the_tag_and_answers_204(user):
    one, two = tagged_link(user, 1, ["promo", "mail"]), tagged_link(user, 2, ["Promo"])
    client = shlink(user)

    response = _rename(client, "promo", "Summer")

    assert response.status_code == 204 and response.content == b""
    assert tag_names(one) == ["Summer", "mail"] and tag_names(two) == ["Summer"]
    assert client.get(TAGS).json()["tags"]["data"] == ["mail", "Summer"]
    listed = client.get("/rest/v3/short-urls", {"tags[]": "summer"}).json()["shortUrls"]
    assert listed["pagination"]["totalItems"] == 2


def test_put_case_only_changes_the_spelling(user):
    link = tagged_link(user, 1, ["promo"])

    assert _rename(shlink(user), "promo", "PROMO").status_code == 204
    assert tag_names(link) == ["PROMO"]


def test_put_onto_an_existing_tag_is_a_409_conflict_and_changes_nothing(user):
    old, new = tagged_link(user, 1, ["promo"]), tagged_link(user, 2, ["Sale"])

    body = _problem(_rename(shlink(user), "promo", "sale"), 409, "tag-conflict")

    assert body["title"] == "Tag conflict"
    assert body["detail"] == "You cannot rename tag promo to sale, because it already exists"
    assert (body["oldName"], body["newName"]) == ("promo", "sale")
    assert tag_names(old) == ["promo"] and tag_names(new) == ["Sale"]


def test_put_unknown_tag_is_tag_not_found(user, other_user):
    tagged_link(other_user, 1, ["theirs"])  # another user's tag is not ours to find

    for name in ("nope", "theirs"):
        body = _problem(_rename(shlink(user), name, "x"), 404, "tag-not-found")
        assert body["detail"] == f'Tag with name "{name}" could not be found'
        assert body["tag"] == name
    assert Tag.objects.filter(key="theirs").exists()


def test_put_invalid_input_is_invalid_data_with_shlinks_names(user):
    tagged_link(user, 1, ["promo"])
    client = shlink(user)

    missing = _problem(client.put(TAGS, {"oldName": "promo"}, format="json"), 400, "invalid-data")
    assert missing["invalidElements"] == ["newName"]
    comma = _problem(_rename(client, "promo", "a,b"), 400, "invalid-data")
    assert comma["invalidElements"] == ["newName"]
    assert "cannot contain a comma" in comma["detail"]


def test_delete_removes_the_named_tags_and_skips_unknown_ones(user):
    one, two = tagged_link(user, 1, ["promo", "mail", "keep"]), tagged_link(user, 2, ["Promo"])
    client = shlink(user)

    response = client.delete(f"{TAGS}?tags[]=PROMO&tags[]=mail&tags[]=unknown")

    assert response.status_code == 204
    assert tag_names(one) == ["keep"] and tag_names(two) == []
    assert UrlLink.objects.filter(pk__in=[one.pk, two.pk], revoked_at__isnull=True).count() == 2
    assert client.get(TAGS).json()["tags"]["data"] == ["keep"]
    assert client.delete(TAGS).status_code == 204  # nothing named: nothing done


def test_a_key_acts_in_its_own_workspace_and_a_viewers_key_is_refused(user):
    acme = workspace_create(user=user, name="Acme", slug="acme")
    viewer_user = UserFactory(username="vi")
    member_add(by=user, workspace=acme, username="vi", role=Role.VIEWER)
    team_link = tagged_link(user, 1, ["launch"], workspace=acme)
    own_link = tagged_link(user, 2, ["launch"])

    assert _rename(shlink(user, workspace="acme"), "launch", "Go").status_code == 204
    assert tag_names(team_link) == ["Go"] and tag_names(own_link) == ["launch"]

    viewer = shlink(viewer_user, workspace="acme")
    for response in (_rename(viewer, "go", "x"), viewer.delete(f"{TAGS}?tags[]=go")):
        body = _problem(response, 403, None)
        assert "Viewers of the workspace 'acme'" in body["detail"]
    assert tag_names(team_link) == ["Go"]
    assert personal_workspace_of(user).tags.get().name == "launch"
