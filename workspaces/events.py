"""A member's leaving, for the apps that keep what they made in a workspace (webhooks, API keys,
imports): each stops what would keep acting or reporting in the workspace for someone who may
no longer see it.

workspaces sits below those apps and knows none of them: this signal is the whole of its side.
It is sent inside the change's transaction, not after it, and not robustly: what a departed
member made must stop with the change, and a listener that fails rolls the change back rather
than leave a feed running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.dispatch import Signal

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

REMOVED = "removed"  # left, or was removed by an owner
DEMOTED = "demoted"  # made a viewer: may read, no longer make or manage anything
DELETED = "deleted"  # their account is being deleted (workspace_id None: every workspace)

# Sent with user=<the member>, workspace_id=<int | None>, why=<one of the above>.
member_departed = Signal()


def member_departed_send(*, user: AbstractBaseUser, workspace_id: int | None, why: str) -> None:
    member_departed.send(sender=None, user=user, workspace_id=workspace_id, why=why)
