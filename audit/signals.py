"""Sign-ins to the admin, recorded in the audit log (sign-ins to the site are not changes)."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from audit import channels
from audit.services import audit_record


@receiver(user_logged_in, dispatch_uid="audit_admin_sign_in")
def admin_sign_in(sender, request, user, **kwargs) -> None:
    if request is None or channels.channel_of(request) != channels.ADMIN:
        return
    record_admin_sign_in(user)


def record_admin_sign_in(user) -> None:
    """One sign-in to the admin: its own page's, or single sign-on's on its way to the admin
    (accounts.oidc), told as the admin's either way."""
    with channels.acting_through(channels.ADMIN):
        audit_record(
            action="admin.sign_in",
            actor=user,
            object_type="user",
            object_id=user.pk,
            object_repr=user.get_username(),
            always=True,
        )
