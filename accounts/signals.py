"""Puts the person's chosen time zone into their session when they sign in, so their pages
never query for it (the middleware looks it up only for sessions made before this existed)."""

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from . import selectors
from .middleware import SESSION_TIME_ZONE


@receiver(user_logged_in, dispatch_uid="accounts.time_zone_into_session")
def time_zone_into_session(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_TIME_ZONE] = selectors.profile_time_zone(user=user)
