"""Reads of workspaces and who may do what in them."""

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet

from .models import MANAGE_PERMISSION, ROLE_RANK, WRITER_ROLES, Membership, Role, Workspace


class WorkspaceNotFound(Exception):
    """No such workspace, or not one the caller belongs to (told apart to nobody)."""


def workspace_ids_of(user: AbstractBaseUser, *, writers_only: bool = False) -> QuerySet:
    """The ids of the workspaces `user` is a member of (`writers_only`: an owner or editor
    of), as a subquery."""
    memberships = Membership.objects.filter(user_id=user.pk)
    if writers_only:
        memberships = memberships.filter(role__in=WRITER_ROLES)
    return memberships.values("workspace_id")


def workspaces_of(user: AbstractBaseUser) -> list[Workspace]:
    """The workspaces `user` belongs to, personal first, each with `.role` set to theirs."""
    memberships = (
        Membership.objects.filter(user_id=user.pk)
        .select_related("workspace")
        .order_by("-workspace__personal_for_id", "workspace__name", "workspace__slug")
    )
    found = []
    for membership in memberships:
        membership.workspace.role = membership.role
        found.append(membership.workspace)
    # Personal first: a user's own workspace has personal_for = them; others' are null or
    # someone else's (a personal workspace shared with them).
    found.sort(key=lambda workspace: workspace.personal_for_id != user.pk)
    return found


def role_in(*, user: AbstractBaseUser, workspace_id: int) -> str | None:
    """`user`'s role in the workspace, or None when they are not a member."""
    return (
        Membership.objects.filter(user_id=user.pk, workspace_id=workspace_id)
        .values_list("role", flat=True)
        .first()
    )


def may_manage(*, user: AbstractBaseUser, role: str | None) -> bool:
    """May someone with this role in a workspace rename it and manage its members (its
    owners, and staff with the workspaces permission)?"""
    return role == Role.OWNER or user.has_perm(MANAGE_PERMISSION)


def can_write(*, user: AbstractBaseUser, workspace_id: int) -> bool:
    """May `user` create and change links in the workspace (owner or editor)?"""
    return role_in(user=user, workspace_id=workspace_id) in WRITER_ROLES


def workspace_get(*, user: AbstractBaseUser, slug: str) -> Workspace:
    """The workspace with this slug if `user` is a member (staff: any), with `.role` set to
    theirs (None for staff who are not members); else WorkspaceNotFound."""
    try:
        workspace = Workspace.objects.get(slug=(slug or "").strip().lower())
    except Workspace.DoesNotExist:
        raise WorkspaceNotFound(slug) from None
    workspace.role = role_in(user=user, workspace_id=workspace.pk)
    if workspace.role is None and not user.is_staff:
        raise WorkspaceNotFound(slug)
    return workspace


def personal_workspace_of(user: AbstractBaseUser) -> Workspace:
    """`user`'s own workspace (made now for a user who predates workspaces' signal, such as
    one loaded from a fixture)."""
    from .services import personal_workspace_ensure

    return personal_workspace_ensure(user)


def members_of(workspace: Workspace) -> list[Membership]:
    """The workspace's members, owners first, with their users."""
    members = list(Membership.objects.filter(workspace=workspace).select_related("user"))
    members.sort(key=lambda m: (ROLE_RANK[m.role], m.user.get_username().lower()))
    return members


def pinned_workspace_id(auth) -> int | None:
    """The workspace an API credential acts for (`request.auth`): an API key's own; None for a
    DRF token or a session, which act in every workspace of their user."""
    return getattr(auth, "workspace_id", None)
