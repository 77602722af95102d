"""The workspace a signed-in person works in on the web pages: the one they chose with the
switcher (its slug kept in the session), else their personal workspace.

The choice is checked against their memberships on every request, so a member who was removed
falls back to their personal workspace at once. Read once per request (cached on it).
"""

from __future__ import annotations

from django.http import HttpRequest

from workspaces.models import WRITER_ROLES, Workspace
from workspaces.selectors import personal_workspace_of, workspaces_of

SESSION_KEY = "workspace"
_CACHE = "_workspaces_current"


def _memberships(request: HttpRequest) -> tuple[list[Workspace], Workspace]:
    cached = getattr(request, _CACHE, None)
    if cached is not None:
        return cached
    user = request.user
    mine = workspaces_of(user)  # one query, each with .role
    chosen = request.session.get(SESSION_KEY)
    current = next((w for w in mine if chosen and w.slug == chosen), None)
    if current is None:
        current = next((w for w in mine if w.personal_for_id == user.pk), None)
    if current is None:  # a user who predates workspaces (fixtures): made now
        current = personal_workspace_of(user)
        current.role = "owner"
        mine = [current, *mine]
    if chosen and chosen != current.slug:
        request.session.pop(SESSION_KEY, None)  # no longer a member there
    setattr(request, _CACHE, (mine, current))
    return mine, current


def current_workspace(request: HttpRequest) -> Workspace:
    """The signed-in person's current workspace, with `.role` set to theirs there."""
    return _memberships(request)[1]


def my_workspaces(request: HttpRequest) -> list[Workspace]:
    """Every workspace the signed-in person belongs to, personal first, each with `.role`."""
    return _memberships(request)[0]


def can_write_current(request: HttpRequest) -> bool:
    """May the person create and change links in their current workspace (owner, editor)?"""
    return current_workspace(request).role in WRITER_ROLES


def switch_to(request: HttpRequest, workspace: Workspace) -> None:
    """Make `workspace` (one the person belongs to: checked by the caller) the current one."""
    request.session[SESSION_KEY] = workspace.slug
    if hasattr(request, _CACHE):
        delattr(request, _CACHE)
