"""Reads for accounts pages and the time zone middleware."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import ApiKey, PasswordCheckTries, Profile


def api_key_list(*, user: AbstractBaseUser) -> QuerySet[ApiKey]:
    """The user's keys, newest first, each with the workspace it acts for."""
    return (
        ApiKey.objects.filter(user=user).select_related("workspace").order_by("-created_at", "-id")
    )


def profile_time_zone(*, user: AbstractBaseUser) -> str:
    """The zone the user chose, or "" when they left it to the browser."""
    return Profile.objects.filter(user=user).values_list("time_zone", flat=True).first() or ""


def password_checks_paused(*, user: AbstractBaseUser) -> bool:
    """Whether the user's old-password checks are paused now (services.password_check)."""
    tries = PasswordCheckTries.objects.filter(user_id=user.pk).first()
    return tries is not None and tries.is_paused(timezone.now())
