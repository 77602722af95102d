"""Renaming and deleting a workspace's tags: the services (links.services.tags) and the native
API's PATCH/DELETE /api/v1/tags/{tag}/."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from accounts.services import api_key_create
from core.api.scopes import ApiScope
from links import events
from links.models import Tag, UrlLink
from links.selectors import TagNotFound, link_list
from links.services.tags import tag_delete, tag_rename
from links.tests.factories import UserFactory
from links.tests.helpers import client_for, tag_names, tagged_link
from workspaces.models import Role, Workspace
from workspaces.selectors import personal_workspace_of
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db


@dataclass
class Acme:
    workspace: Workspace
    owner: object
    editor: object
    viewer: object
    outsider: object


@pytest.fixture
def acme(user, other_user) -> Acme:
    workspace = workspace_create(user=user, name="Acme", slug="acme")
    editor, viewer = UserFactory(username="ed"), UserFactory(username="vi")
    member_add(by=user, workspace=workspace, username="ed", role=Role.EDITOR)
    member_add(by=user, workspace=workspace, username="vi", role=Role.VIEWER)
    return Acme(workspace, user, editor, viewer, other_user)


def _tags(workspace_id: int) -> dict[str, str]:
    return dict(Tag.objects.filter(workspace_id=workspace_id).values_list("key", "name"))


# --- Services ----------------------------------------------------------------------------------


def test_rename_renames_the_tag_on_every_link(user):
    one, two = tagged_link(user, 1, ["spring", "mail"]), tagged_link(user, 2, ["Spring"])
    personal = personal_workspace_of(user).pk

    renamed = tag_rename(user=user, workspace_id=None, tag="SPRING ", new_name="  Summer sale ")

    assert (renamed.name, renamed.key, renamed.merged, renamed.link_count) == (
        "Summer sale",
        "summer sale",
        False,
        2,
    )
    assert tag_names(one) == ["Summer sale", "mail"] and tag_names(two) == ["Summer sale"]
    assert _tags(personal) == {"summer sale": "Summer sale", "mail": "mail"}
    assert [link.pk for link in link_list(user=user, tags=["summer SALE"])] == [two.pk, one.pk]
    assert not link_list(user=user, tags=["spring"]).exists()


def test_a_case_only_rename_changes_the_spelling(user):
    link = tagged_link(user, 1, ["spring"])
    tag_id = Tag.objects.get(key="spring").pk

    renamed = tag_rename(user=user, workspace_id=None, tag="spring", new_name="Spring")

    assert (renamed.pk, renamed.name, renamed.key, renamed.merged) == (
        tag_id,
        "Spring",
        "spring",
        False,
    )
    assert tag_names(link) == ["Spring"]


def test_renaming_onto_an_existing_name_merges_the_two(user):
    only_old = tagged_link(user, 1, ["promo"])
    both = tagged_link(user, 2, ["promo", "Sale"])
    only_new = tagged_link(user, 3, ["Sale"])
    sale_id = Tag.objects.get(key="sale").pk

    merged = tag_rename(user=user, workspace_id=None, tag="promo", new_name="SALE")

    # The existing tag stays, with its spelling; the renamed one goes.
    assert (merged.pk, merged.name, merged.merged, merged.link_count) == (sale_id, "Sale", True, 3)
    assert _tags(personal_workspace_of(user).pk) == {"sale": "Sale"}
    for link in (only_old, both, only_new):
        assert tag_names(link) == ["Sale"]


def test_a_refused_name_is_reported_under_name_and_changes_nothing(user):
    tagged_link(user, 1, ["spring"])
    for bad, reason in (
        ("a,b", "cannot contain a comma"),
        ("   ", "cannot be empty"),
        ("x" * 51, "at most 50 characters"),
        (None, "must be a string"),
    ):
        with pytest.raises(ValidationError) as caught:
            tag_rename(user=user, workspace_id=None, tag="spring", new_name=bad)
        assert list(caught.value.message_dict) == ["name"]
        assert reason in caught.value.message_dict["name"][0]
    assert _tags(personal_workspace_of(user).pk) == {"spring": "spring"}


def test_delete_takes_the_tag_off_its_links_and_keeps_the_links(user):
    one, two = tagged_link(user, 1, ["spring", "mail"]), tagged_link(user, 2, ["spring"])

    assert tag_delete(user=user, workspace_id=None, tag="Spring") == 2

    assert tag_names(one) == ["mail"] and tag_names(two) == []
    assert UrlLink.objects.filter(pk__in=[one.pk, two.pk], revoked_at__isnull=True).count() == 2
    assert _tags(personal_workspace_of(user).pk) == {"mail": "mail"}


def test_unknown_tags_are_not_found(user):
    with pytest.raises(TagNotFound):
        tag_rename(user=user, workspace_id=None, tag="nope", new_name="x")
    with pytest.raises(TagNotFound):
        tag_delete(user=user, workspace_id=None, tag="nope")


def test_editors_may_viewers_are_refused_outsiders_find_nothing(acme):
    link = tagged_link(acme.owner, 1, ["launch"], workspace=acme.workspace)
    ws = acme.workspace.pk

    with pytest.raises(PermissionDenied, match="Viewers of the workspace 'acme'"):
        tag_rename(user=acme.viewer, workspace_id=ws, tag="launch", new_name="x")
    with pytest.raises(PermissionDenied):
        tag_delete(user=acme.viewer, workspace_id=ws, tag="launch")
    for call in (
        lambda: tag_rename(user=acme.outsider, workspace_id=ws, tag="launch", new_name="x"),
        lambda: tag_delete(user=acme.outsider, workspace_id=ws, tag="launch"),
    ):
        with pytest.raises(TagNotFound):
            call()
    assert tag_names(link) == ["launch"]

    assert tag_rename(user=acme.editor, workspace_id=ws, tag="launch", new_name="Go").name == "Go"
    assert tag_delete(user=acme.editor, workspace_id=ws, tag="go") == 1
    assert tag_names(link) == []


def test_another_workspaces_tag_of_the_same_name_is_untouched(acme):
    team_link = tagged_link(acme.owner, 1, ["launch"], workspace=acme.workspace)
    own_link = tagged_link(acme.owner, 2, ["launch"])  # the owner's personal workspace

    tag_rename(user=acme.owner, workspace_id=acme.workspace.pk, tag="launch", new_name="Liftoff")
    assert tag_names(team_link) == ["Liftoff"] and tag_names(own_link) == ["launch"]

    tag_delete(user=acme.owner, workspace_id=None, tag="launch")
    assert tag_names(team_link) == ["Liftoff"] and tag_names(own_link) == []


def test_renames_and_deletes_leave_the_redirect_entry_and_webhooks_alone(user, monkeypatch):
    """Tags are not in the cached entry, and link.updated is not announced for them (the
    webhook's link data carries no tags)."""
    tagged_link(user, 1, ["spring"])
    dropped, announced = [], []
    monkeypatch.setattr("links.cache.drop", lambda key: dropped.append(key))
    monkeypatch.setattr(events, "announce_after_commit", lambda *a: announced.append(a))

    tag_rename(user=user, workspace_id=None, tag="spring", new_name="summer")
    tag_delete(user=user, workspace_id=None, tag="summer")

    assert dropped == [] and announced == []


# --- Native API --------------------------------------------------------------------------------


def test_api_patch_renames_and_answers_the_tag(user):
    tagged_link(user, 1, ["spring"])
    tagged_link(user, 2, ["spring"])
    api = client_for(user)

    response = api.patch("/api/v1/tags/Spring/", {"name": "Summer"}, format="json")

    assert response.status_code == 200, response.content
    assert response.json() == {"name": "Summer", "links": 2, "merged": False}
    assert api.get("/api/v1/tags/").json() == [{"name": "Summer", "links": 2}]
    assert api.get("/api/v1/links/?tag=summer").json()["count"] == 2


def test_api_patch_onto_an_existing_name_says_merged(user):
    tagged_link(user, 1, ["spring"])
    tagged_link(user, 2, ["Sale"])

    response = client_for(user).patch("/api/v1/tags/spring/", {"name": "sale"}, format="json")

    assert response.status_code == 200
    assert response.json() == {"name": "Sale", "links": 2, "merged": True}


def test_api_tag_with_a_slash_and_spaces(user):
    tagged_link(user, 1, ["spring/summer sale"])

    response = client_for(user).patch(
        "/api/v1/tags/spring%2Fsummer%20sale/", {"name": "Autumn"}, format="json"
    )

    assert response.status_code == 200 and response.json()["name"] == "Autumn"


def test_api_errors(acme):
    tagged_link(acme.owner, 1, ["launch"], workspace=acme.workspace)
    owner, viewer = client_for(acme.owner), client_for(acme.viewer)

    bad = owner.patch("/api/v1/tags/launch/?workspace=acme", {"name": "a,b"}, format="json")
    assert bad.status_code == 400
    assert "cannot contain a comma" in bad.json()["name"][0]
    missing = owner.patch("/api/v1/tags/launch/?workspace=acme", {}, format="json")
    assert missing.status_code == 400 and "name" in missing.json()

    for response in (
        viewer.patch("/api/v1/tags/launch/?workspace=acme", {"name": "x"}, format="json"),
        viewer.delete("/api/v1/tags/launch/?workspace=acme"),
    ):
        assert response.status_code == 403
        assert "Viewers of the workspace 'acme'" in response.json()["detail"]

    for response in (
        owner.patch("/api/v1/tags/nope/?workspace=acme", {"name": "x"}, format="json"),
        owner.delete("/api/v1/tags/nope/?workspace=acme"),
        owner.delete("/api/v1/tags/launch/"),  # not in the personal workspace
        client_for(acme.outsider).delete("/api/v1/tags/launch/?workspace=acme"),
    ):
        assert response.status_code == 404, response.content
    assert _tags(acme.workspace.pk) == {"launch": "launch"}


def test_api_delete_answers_204_and_the_links_stay(acme):
    link = tagged_link(acme.owner, 1, ["launch", "b"], workspace=acme.workspace)
    api = client_for(acme.editor)

    response = api.delete("/api/v1/tags/LAUNCH/?workspace=acme")

    assert response.status_code == 204 and response.content == b""
    assert tag_names(link) == ["b"]
    assert api.get(f"/api/v1/links/{link.code}/").status_code == 200
    assert api.get("/api/v1/tags/?workspace=acme").json() == [{"name": "b", "links": 1}]


def test_api_keys_need_links_write_and_act_in_their_own_workspace_only(acme):
    tagged_link(acme.owner, 1, ["launch"], workspace=acme.workspace)
    tagged_link(acme.owner, 2, ["launch"])  # personal

    def key(**kwargs):
        return api_key_create(user=acme.owner, name="k", **kwargs)[1]

    def api(credential):
        client = client_for(acme.owner)
        client.credentials(HTTP_AUTHORIZATION=f"Token {credential}")
        return client

    read_only = api(key(scopes=[ApiScope.LINKS_READ], workspace="acme"))
    refused = read_only.patch("/api/v1/tags/launch/", {"name": "x"}, format="json")
    assert refused.status_code == 403 and "links:write" in refused.json()["detail"]
    assert read_only.delete("/api/v1/tags/launch/").status_code == 403

    pinned = api(key(scopes=[ApiScope.LINKS_WRITE], workspace="acme"))
    # Another workspace of its user is out of its reach.
    other = personal_workspace_of(acme.owner).slug
    assert pinned.delete(f"/api/v1/tags/launch/?workspace={other}").status_code == 404
    assert pinned.patch("/api/v1/tags/launch/", {"name": "Go"}, format="json").json() == {
        "name": "Go",
        "links": 1,
        "merged": False,
    }
    assert _tags(acme.workspace.pk) == {"go": "Go"}
    assert _tags(personal_workspace_of(acme.owner).pk) == {"launch": "launch"}


def test_api_a_tag_ending_in_stats_meets_the_stats_path(user):
    """The documented limit: `x/stats` sent as `x%2Fstats` is the path of x's stats."""
    tagged_link(user, 1, ["x/stats"])

    response = client_for(user).delete("/api/v1/tags/x%2Fstats/")

    assert response.status_code == 405
    assert _tags(personal_workspace_of(user).pk) == {"x/stats": "x/stats"}
