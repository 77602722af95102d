"""Invitations, the only way a person joins a workspace: an owner invites someone (a username or
an email) with a role, the invitee sees the invitation and accepts or declines it, and only
their acceptance makes them a member. The writes of invitations live here, apart from the
members' other changes in workspaces.services; their reads are in workspaces.selectors.

What an inviter is told is the same whether or not the address is someone's account: the
invitation is made either way (an address naming nobody makes one nobody can accept), their
answer and their list of invitations never show the account's username, and a decline is not
reported to them. Staff who may list accounts in the admin anyway are told when an address
names none.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from audit.services import audit_change
from core.db import retry_on_conflict, take_turn
from workspaces.models import MANAGE_PERMISSION, ROLE_RANK, Invitation, Membership, Role, Workspace
from workspaces.selectors import (
    MANAGERS_ONLY_MESSAGE,
    InvitationNotFound,
    invitations_open_in,
    invitations_waiting_for,
    manage_required,
    may_manage,
    role_in,
)

ADDRESS_MAX_LENGTH = 254


def roles_grantable(*, by: AbstractBaseUser, workspace: Workspace) -> list[str]:
    """The roles `by` may offer in the workspace: their own and lesser ones (an owner: every
    role); every role for staff who manage workspaces; none for anyone else."""
    role = role_in(user=by, workspace_id=workspace.pk)
    if not may_manage(user=by, role=role):
        return []
    if role is None or by.has_perm(MANAGE_PERMISSION):
        return list(Role.values)
    return [value for value in Role.values if ROLE_RANK[value] >= ROLE_RANK[role]]


def _account_named(address: str) -> AbstractBaseUser | None:
    """The account `address` names: its username (in any case when only one account has it),
    else (with an "@") the one account with that email. A name or email two accounts share
    names neither: nothing says which of them was meant."""
    User = get_user_model()
    users = User._default_manager
    user = users.filter(**{User.USERNAME_FIELD: address}).first()
    if user is None:
        user = _only(users.filter(**{f"{User.USERNAME_FIELD}__iexact": address}))
    if user is None and "@" in address:
        user = _only(users.filter(email__iexact=address))
    return user


def _only(found) -> AbstractBaseUser | None:
    found = list(found[:2])
    return found[0] if len(found) == 1 else None


def _may_list_accounts(user: AbstractBaseUser) -> bool:
    """Staff who can read every account in the admin: telling them an address names nobody
    tells them nothing they cannot look up, and saves them waiting for an invitation nobody
    will see."""
    User = get_user_model()
    meta = User._meta
    return bool(user.is_staff and user.has_perm(f"{meta.app_label}.view_{meta.model_name}"))


@retry_on_conflict
def invitation_create(
    *, by: AbstractBaseUser, workspace: Workspace, address: str, role: str
) -> Invitation:
    """Invite the account `address` names (a username or an email) to the workspace with
    `role`. Owners (and staff who manage workspaces) invite, offering a role they may grant.
    Inviting an address again while its invitation waits renews that one (new role and
    expiry), so one address has one invitation per workspace."""
    grantable = roles_grantable(by=by, workspace=workspace)
    if not grantable:
        raise PermissionDenied(MANAGERS_ONLY_MESSAGE)
    address = (address or "").strip()
    errors: dict[str, list[str]] = {}
    if not address:
        errors["user"] = ["Give a username or an email."]
    elif len(address) > ADDRESS_MAX_LENGTH:
        errors["user"] = [f"At most {ADDRESS_MAX_LENGTH} characters."]
    if role not in grantable:
        errors["role"] = [f"One of {', '.join(grantable)}."]
    if errors:
        raise ValidationError(errors, code="invalid")
    User = get_user_model()
    # A member's username is on the members list the owner reads: refusing it tells nothing.
    if Membership.objects.filter(
        workspace=workspace, **{f"user__{User.USERNAME_FIELD}__iexact": address}
    ).exists():
        raise ValidationError({"user": [f"{address} is already a member."]}, code="invalid")
    invitee = _account_named(address)
    if invitee is None and _may_list_accounts(by):
        raise ValidationError({"user": ["No account has this username or email."]}, code="invalid")
    if (
        invitee is not None
        and Membership.objects.filter(workspace=workspace, user=invitee).exists()
    ):
        # Named by an email and in already: nothing to offer, and the owner is not told whose
        # email it is.
        invitee = None
    expires_at = timezone.now() + timedelta(days=settings.WORKSPACE_INVITATION_DAYS)
    with transaction.atomic():
        # One inviter at a time per workspace: one invitation per address, the cap counted right.
        # A turn (core.db.take_turn), not SELECT … FOR UPDATE on the workspace row: on a Galera
        # cluster that lock holds on one node only and is not certified, so two inviters on two
        # nodes both passed it. Both write the turn's row: the later commit fails (1213) and is
        # run again (retry_on_conflict), now counting and finding the other's invitation.
        take_turn(f"workspace:{workspace.pk}:invitations")
        waiting = invitations_open_in(workspace)
        invitation = waiting.filter(address__iexact=address).first()
        if invitation is None:
            if waiting.count() >= settings.WORKSPACE_INVITATIONS_OPEN_MAX:
                raise ValidationError(
                    {
                        "user": [
                            f"{settings.WORKSPACE_INVITATIONS_OPEN_MAX} invitations to this "
                            "workspace are waiting: withdraw some, or wait until they expire."
                        ]
                    },
                    code="invalid",
                )
            invitation = Invitation(workspace=workspace, address=address)
        elif invitation.invitee_id != getattr(invitee, "pk", None):
            invitation.declined_at = None  # the address names another account now
        invitation.invited_by_id = by.pk
        invitation.invitee = invitee
        invitation.role = role
        invitation.expires_at = expires_at
        invitation.save()
    return invitation


def invitation_withdraw(*, by: AbstractBaseUser, workspace: Workspace, invitation_id: int) -> None:
    """An owner takes back one of the workspace's waiting invitations."""
    manage_required(user=by, workspace=workspace)
    deleted, _ = Invitation.objects.filter(
        pk=invitation_id, workspace=workspace, accepted_at__isnull=True
    ).delete()
    if not deleted:
        raise InvitationNotFound(invitation_id)


def _waiting_locked(user: AbstractBaseUser, invitation_id: int) -> Invitation:
    invitation = invitations_waiting_for(user).select_for_update().filter(pk=invitation_id).first()
    if invitation is None:
        raise InvitationNotFound(invitation_id)
    return invitation


@retry_on_conflict
def invitation_accept(*, user: AbstractBaseUser, invitation_id: int) -> Membership:
    """`user` accepts an invitation made to them: they become a member with its role (one who
    is a member already keeps their role). An inviter who may no longer offer that role (no
    longer an owner there, or gone) took the offer with them."""
    with transaction.atomic():
        invitation = _waiting_locked(user, invitation_id)
        inviter = invitation.invited_by
        if inviter is None or invitation.role not in roles_grantable(
            by=inviter, workspace=invitation.workspace
        ):
            raise InvitationNotFound(invitation_id)
        membership, created = Membership.objects.get_or_create(
            workspace=invitation.workspace, user_id=user.pk, defaults={"role": invitation.role}
        )
        if created:
            audit_change("membership.create", membership, actor=user)
        invitation.accepted_at = timezone.now()
        invitation.save(update_fields=["accepted_at"])
    membership.workspace = invitation.workspace
    return membership


@retry_on_conflict
def invitation_decline(*, user: AbstractBaseUser, invitation_id: int) -> Invitation:
    """`user` turns an invitation down: it leaves their list; the inviter's list shows it
    waiting until it expires (see the module's note)."""
    with transaction.atomic():
        invitation = _waiting_locked(user, invitation_id)
        invitation.declined_at = timezone.now()
        invitation.save(update_fields=["declined_at"])
    return invitation
