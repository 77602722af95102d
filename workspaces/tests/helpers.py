"""Helpers of the workspaces API tests (importable, unlike conftest files)."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.services import api_key_create
from links.models import UrlLink
from workspaces.models import Workspace
from workspaces.selectors import personal_workspace_of


@dataclass
class Team:
    workspace: Workspace  # "acme"
    owner: object  # the `user` fixture ("marketer"), who also has a personal workspace
    editor: object
    viewer: object
    outsider: object  # the `other_user` fixture ("rival"): in no way a member of acme
    link: UrlLink  # acme's link "acme-sale"
    personal_link: UrlLink  # the owner's own link "own-note", in their personal workspace

    @property
    def personal(self) -> Workspace:
        return personal_workspace_of(self.owner)


def token_of(user) -> str:
    """A DRF token: acts in every workspace of its user."""
    return Token.objects.get_or_create(user=user)[0].key


def key_of(user, workspace=None, **kwargs) -> str:
    """An API key acting for one workspace (none: the user's personal one)."""
    return api_key_create(user=user, name="tool", workspace=workspace, **kwargs)[1]


def native(credential: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {credential}")
    return client
