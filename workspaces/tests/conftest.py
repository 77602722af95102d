"""A team workspace with one member of each role, and a user from outside, for the API tests."""

from __future__ import annotations

import pytest

from links.tests.factories import UrlLinkFactory, UserFactory
from workspaces.models import Role
from workspaces.services import member_add, workspace_create
from workspaces.tests.helpers import Team


@pytest.fixture
def team(user, other_user) -> Team:
    acme = workspace_create(user=user, name="Acme", slug="acme")
    editor = UserFactory(username="ed")
    viewer = UserFactory(username="vi")
    member_add(by=user, workspace=acme, username="ed", role=Role.EDITOR)
    member_add(by=user, workspace=acme, username="vi", role=Role.VIEWER)
    return Team(
        workspace=acme,
        owner=user,
        editor=editor,
        viewer=viewer,
        outsider=other_user,
        link=UrlLinkFactory(owner=user, workspace=acme, alias="acme-sale"),
        personal_link=UrlLinkFactory(owner=user, alias="own-note"),
    )
