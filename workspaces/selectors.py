"""Reads of workspaces and who may do what in them."""

import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from core.errors import NotFound
from workspaces.models import (
    MANAGE_PERMISSION,
    ROLE_RANK,
    SLUG_MAX_LENGTH,
    WRITER_ROLES,
    Invitation,
    Membership,
    Role,
    Workspace,
)

# What a personal workspace's slug adds to its username's slug when another workspace holds
# that: "sam--2". slugify() folds runs of "-" into one, so no username's slug has "--" and a
# personal workspace made this way never takes the slug a future user's name gives.
PERSONAL_SUFFIX = "--"


class WorkspaceNotFound(NotFound):
    """No such workspace, or not one the caller belongs to (told apart to nobody)."""

    public_message = "No workspace with this slug that you belong to."


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


MANAGERS_ONLY_MESSAGE = "Only the workspace's owners can manage it."


def manage_required(*, user: AbstractBaseUser, workspace: Workspace) -> None:
    """PermissionDenied unless `user` may manage the workspace (may_manage): the one guard of
    its members, invitations and name, whatever the channel."""
    if not may_manage(user=user, role=role_in(user=user, workspace_id=workspace.pk)):
        raise PermissionDenied(MANAGERS_ONLY_MESSAGE)


def privacy_mode(workspace_privacy: str) -> str:
    """The privacy mode of a workspace whose own choice (Workspace.analytics_privacy) is
    `workspace_privacy`: "" follows the deployment's ANALYTICS_PRIVACY (docs/privacy.md)."""
    return workspace_privacy or settings.ANALYTICS_PRIVACY


def can_write(*, user: AbstractBaseUser, workspace_id: int) -> bool:
    """May `user` create and change links in the workspace (owner or editor)?"""
    return role_in(user=user, workspace_id=workspace_id) in WRITER_ROLES


def name_slug(name: str) -> str:
    """The slug a name gives: a username its user's personal workspace's (when no other
    workspace holds it), a team's name its workspace's (when free): "Ada.Lovelace" →
    "adalovelace"."""
    return (slugify(name) or "workspace")[: SLUG_MAX_LENGTH - 4].strip("-") or "workspace"


def slug_is_a_users(slug: str) -> bool:
    """Is `slug` the slug of some user's name (their personal workspace's, or the one it would
    have had but for a clash)? A team workspace may not take it (workspaces.services)."""
    User = get_user_model()
    if User._default_manager.filter(**{f"{User.USERNAME_FIELD}__iexact": slug}).exists():
        return True
    # Whose name could give it and yet not be the slug of their workspace: users whose personal
    # workspace was pushed aside ("sam--2", or "sam-3" from before PERSONAL_SUFFIX), and users
    # with none yet. Few rows; slugify() has no SQL twin, so their names are compared here.
    aside = re.escape(slug) + r"-+[0-9]+$"
    names = User._default_manager.filter(
        Q(personal_workspace__isnull=True)
        | Q(personal_workspace__slug=slug)
        | Q(personal_workspace__slug__regex="^" + aside)
    ).values_list(User.USERNAME_FIELD, flat=True)
    return any(name_slug(str(name)) == slug for name in names)


def workspace_get(*, user: AbstractBaseUser, slug: str, exact: bool = False) -> Workspace:
    """The workspace with this slug if `user` is a member (staff: any), with `.role` set to
    theirs (None for staff who are not members); else WorkspaceNotFound.

    The slug of the caller's own username always names their personal workspace, whatever its
    slug ("newuser" for newuser, even when a team workspace made before their account holds
    "newuser" and theirs is "newuser--2"): a `workspace` a person writes as their own name
    never lands in someone else's workspace. `exact`: the slug only (the pages, whose links
    carry each workspace's own slug)."""
    slug = (slug or "").strip().lower()
    if not exact and slug and slug == name_slug(user.get_username()):
        workspace = personal_workspace_of(user)
        workspace.role = role_in(user=user, workspace_id=workspace.pk)
        return workspace
    try:
        workspace = Workspace.objects.get(slug=slug)
    except Workspace.DoesNotExist:
        raise WorkspaceNotFound(slug) from None
    workspace.role = role_in(user=user, workspace_id=workspace.pk)
    if workspace.role is None and not user.is_staff:
        raise WorkspaceNotFound(slug)
    return workspace


def personal_workspace_of(user: AbstractBaseUser) -> Workspace:
    """`user`'s own workspace. Every user has one: made when the user is saved first
    (workspaces.apps), and for users that predate that or were loaded raw from a fixture, by
    every `migrate` and at their sign-in (workspaces.services.personal_workspace_ensure)."""
    return Workspace.objects.get(personal_for_id=user.pk)


def workspace_id_or_personal(*, user: AbstractBaseUser, workspace_id: int | None) -> int:
    """The workspace a read or a tag change acts in: the one named (an API key's own, the
    page's current one), else `user`'s personal workspace. The one place that fallback lives."""
    if workspace_id is not None:
        return workspace_id
    return personal_workspace_of(user).pk


def members_of(workspace: Workspace) -> list[Membership]:
    """The workspace's members, owners first, with their users."""
    members = list(Membership.objects.filter(workspace=workspace).select_related("user"))
    members.sort(key=lambda m: (ROLE_RANK[m.role], m.user.get_username().lower()))
    return members


def pinned_workspace_id(auth) -> int | None:
    """The workspace an API credential acts for (`request.auth`): an API key's own; None for a
    DRF token or a session, which act in every workspace of their user."""
    return getattr(auth, "workspace_id", None)


# --- invitations ------------------------------------------------------------------------------


class InvitationNotFound(Exception):
    """No such invitation waiting for the caller (or for the workspace's owners to withdraw):
    unknown, someone else's, expired, answered or withdrawn alike."""


def invitations_waiting_for(user: AbstractBaseUser) -> QuerySet[Invitation]:
    """The invitations `user` may accept or decline (made to them, unanswered, unexpired),
    newest first, with their workspace and inviter: the one definition of an invitation
    waiting for someone, which accepting and declining take theirs from too."""
    return Invitation.objects.filter(
        invitee_id=user.pk,
        accepted_at__isnull=True,
        declined_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).select_related("workspace", "invited_by")


def invitations_count_waiting_for(user: AbstractBaseUser) -> int:
    return invitations_waiting_for(user).count()


def invitations_open_in(workspace: Workspace) -> QuerySet:
    """A workspace's invitations as its owners see them: each until it is accepted, withdrawn
    or expires. A declined one stays in the list until then, so that what the list shows never
    tells an owner whether an address is someone's account."""
    return Invitation.objects.filter(
        workspace=workspace, accepted_at__isnull=True, expires_at__gt=timezone.now()
    ).select_related("invited_by")


def retention_days(workspace: Workspace) -> int | None:
    """Days the workspace's raw visits are kept: its own setting, else the install's
    ANALYTICS_RAW_RETENTION_DAYS (None: for good)."""
    if workspace.raw_retention_days is not None:
        return workspace.raw_retention_days
    return settings.ANALYTICS_RAW_RETENTION_DAYS


AUDIT_OWNERS_ONLY_MESSAGE = "Only the workspace's owners read its audit log."


def audit_workspace_ids(*, user: AbstractBaseUser, workspace_id: int | None = None) -> list[int]:
    """The workspaces whose audit log `user` reads: `workspace_id`'s (PermissionDenied unless
    they may manage it: its owners), else every workspace they own."""
    if workspace_id is not None:
        if not may_manage(user=user, role=role_in(user=user, workspace_id=workspace_id)):
            raise PermissionDenied(AUDIT_OWNERS_ONLY_MESSAGE)
        return [workspace_id]
    return [w.pk for w in workspaces_of(user) if may_manage(user=user, role=w.role)]
