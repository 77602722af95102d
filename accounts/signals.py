"""Puts the person's chosen time zone into their session when they sign in, so their pages
never query for it (the middleware looks it up only for sessions made before this existed); and
revokes a member's API keys for a workspace they leave; and keeps DRF's Token rows from ever
holding a key (they are folded into hashed API keys)."""

from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver
from rest_framework.authtoken.models import Token, TokenProxy

from accounts import selectors, services
from accounts.middleware import SESSION_TIME_ZONE
from workspaces import events as workspace_events

# Where the usable key waits between the two signals of one save.
_RAW_KEY = "_accounts_raw_key"


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


@receiver(pre_save, sender=Token, dispatch_uid="accounts.drf_token_key_hashed")
@receiver(pre_save, sender=TokenProxy, dispatch_uid="accounts.drf_token_proxy_key_hashed")
def drf_token_key_hashed(sender, instance: Token, **kwargs) -> None:
    """The key never reaches the database: the row is written with a hash in its place."""
    setattr(instance, _RAW_KEY, instance.key)  # Token.save() has made one if none was given
    instance.key = services.api_key_hash(instance.key)[: Token._meta.pk.max_length]


@receiver(post_save, sender=Token, dispatch_uid="accounts.drf_token_folded")
@receiver(post_save, sender=TokenProxy, dispatch_uid="accounts.drf_token_proxy_folded")
def drf_token_folded(sender, instance: Token, **kwargs) -> None:
    raw_key = instance.__dict__.pop(_RAW_KEY, None)
    if raw_key is not None:
        services.api_token_fold(token=instance, raw_key=raw_key)
