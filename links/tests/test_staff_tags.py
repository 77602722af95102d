"""Staff who may change any link (the admin's `links.change_urllink`) may change that link's
tags, and so its workspace's tags: rename and delete them too, as its editors may (#26). Staff
without that permission find another workspace's tags no more than anyone else does."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission

from links.models import Tag
from links.selectors import TagNotFound
from links.services.tags import tag_delete
from links.tests.factories import UserFactory
from links.tests.helpers import client_for, tag_names, tagged_link
from workspaces.selectors import personal_workspace_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def link_staff():
    """Staff with the admin's permission to change links, and no workspace of `user`'s."""
    staff = UserFactory(username="linkstaff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="change_urllink"))
    return staff


@pytest.fixture
def looking_staff():
    return UserFactory(username="lookstaff", is_staff=True)


def test_staff_who_may_change_a_link_change_its_tags(user, link_staff):
    link = tagged_link(user, 1, ["spring"])
    response = client_for(link_staff).patch(
        f"/api/v1/links/{link.code}/", {"tags": ["Spring", "Audit"]}, format="json"
    )
    assert response.status_code == 200, response.content
    assert tag_names(link) == ["Audit", "spring"]


def test_staff_who_may_change_its_links_rename_a_workspaces_tag(user, link_staff):
    tagged_link(user, 1, ["spring"])
    slug = personal_workspace_of(user).slug
    response = client_for(link_staff).patch(
        f"/api/v1/tags/spring/?workspace={slug}", {"name": "Summer"}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json() == {"name": "Summer", "links": 1, "merged": False}


def test_staff_who_may_change_its_links_delete_a_workspaces_tag(user, link_staff):
    link = tagged_link(user, 1, ["spring", "keep"])
    workspace_id = personal_workspace_of(user).pk
    assert tag_delete(user=link_staff, workspace_id=workspace_id, tag="Spring") == 1
    assert tag_names(link) == ["keep"]


def test_staff_who_may_only_look_find_no_other_workspaces_tag(user, looking_staff):
    tagged_link(user, 1, ["spring"])
    slug = personal_workspace_of(user).slug
    response = client_for(looking_staff).patch(
        f"/api/v1/tags/spring/?workspace={slug}", {"name": "Summer"}, format="json"
    )
    assert response.status_code == 404
    with pytest.raises(TagNotFound):
        tag_delete(user=looking_staff, workspace_id=personal_workspace_of(user).pk, tag="spring")
    assert Tag.objects.filter(key="spring").exists()
