"""Puts the person's chosen time zone into their session when they sign in, so their pages
never query for it (the middleware looks it up only for sessions made before this existed); and
revokes a member's API keys for a workspace they leave."""

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from workspaces import events as workspace_events

from . import selectors, services
from .middleware import SESSION_TIME_ZONE


@receiver(user_logged_in, dispatch_uid="accounts.time_zone_into_session")
def time_zone_into_session(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_TIME_ZONE] = selectors.profile_time_zone(user=user)


@receiver(workspace_events.member_departed, dispatch_uid="accounts.keys_of_departed_member")
def keys_of_departed_member(sender, *, user, workspace_id, why, **kwargs) -> None:
    # A viewer still reads with their key (its writes are refused by role); a deleted account's
    # keys go with it.
    if why == workspace_events.REMOVED and workspace_id is not None:
        services.api_keys_revoke_for_departed_member(user=user, workspace_id=workspace_id)
