"""Owners changing each other's roles at once keep one owner, and inviters at once make one
invitation per address and stay within the cap of open invitations (docs/operations.md,
"MariaDB Galera").

Real threads, each with its own MariaDB connection, released together (links.tests.concurrency).
On one server the turn's row lock makes them wait for each other; that every change also writes
its workspace's turn row (core.models.Turn) is what makes two Galera nodes' changes conflict at
commit, checked here by its count; the cross-node conflict itself is the drills'.
"""

from __future__ import annotations

import pytest

from core.models import Turn
from links.tests.concurrency import all_at_once
from links.tests.factories import UserFactory
from workspaces.invitations import invitation_create
from workspaces.models import Invitation, Membership, Role
from workspaces.services import member_add, member_remove, member_set_role, workspace_create

pytestmark = pytest.mark.django_db(transaction=True)

OWNERS = 6


def _turns(scope: str) -> int:
    return Turn.objects.filter(scope=scope).values_list("taken", flat=True).first() or 0


def _team_of_owners():
    """A workspace with OWNERS owners: the first made it, and added the others."""
    first = UserFactory(username="owner0")
    team = workspace_create(user=first, name="Acme", slug="acme")
    owners = [first] + [UserFactory(username=f"owner{i}") for i in range(1, OWNERS)]
    for owner in owners[1:]:
        member_add(by=first, workspace=team, username=owner.username, role=Role.OWNER)
    return team, owners


@pytest.mark.parametrize("change", ["demote", "remove"])
def test_owners_demoting_or_removing_each_other_at_once_keep_one_owner(requires_mysql, change):
    team, owners = _team_of_owners()
    scope = f"workspace:{team.pk}:owners"
    taken_before = _turns(scope)

    def call(i: int):
        by, target = owners[i], owners[(i + 1) % OWNERS].username  # each the next, in a ring
        if change == "demote":
            return member_set_role(by=by, workspace=team, username=target, role=Role.VIEWER)
        return member_remove(by=by, workspace=team, username=target)

    _, errors = all_at_once(OWNERS, call)

    remaining = Membership.objects.filter(workspace=team, role=Role.OWNER)
    assert remaining.count() >= 1
    # Each refusal is a later change that saw the others: the last owner stays, or the caller
    # was no longer an owner (demoted or removed first) when its turn came.
    assert all("owner" in error or "PermissionDenied" in error for error in errors), errors
    assert len(errors) >= 1  # a ring of changes cannot all pass
    # Every change that passed wrote the turn's row (a refused one rolled its write back).
    assert _turns(scope) - taken_before == OWNERS - len(errors)


def test_inviters_at_once_make_one_invitation_per_address_within_the_cap(requires_mysql, settings):
    settings.WORKSPACE_INVITATIONS_OPEN_MAX = 3
    team, owners = _team_of_owners()
    scope = f"workspace:{team.pk}:invitations"

    # All at one address: one invitation, renewed by the others.
    _, errors = all_at_once(
        OWNERS,
        lambda i: invitation_create(
            by=owners[i], workspace=team, address="newcomer@example.com", role=Role.EDITOR
        ),
    )
    assert errors == []
    assert Invitation.objects.filter(workspace=team).count() == 1
    assert _turns(scope) == OWNERS

    # Each at an address of their own: two more fit under the cap of three, the rest are refused.
    _, errors = all_at_once(
        OWNERS,
        lambda i: invitation_create(
            by=owners[i], workspace=team, address=f"guest{i}@example.com", role=Role.VIEWER
        ),
    )
    assert Invitation.objects.filter(workspace=team).count() == 3
    assert len(errors) == OWNERS - 2 and all("invitations" in e for e in errors), errors
