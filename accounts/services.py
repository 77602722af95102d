"""Writes for accounts: API keys (create, revoke, the use that marks them) and preferences."""

from __future__ import annotations

import functools
import hashlib
import secrets
from datetime import datetime, timedelta
from zoneinfo import available_timezones

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db.models import F, Q
from django.utils import timezone

from workspaces.models import Workspace
from workspaces.selectors import WorkspaceNotFound, personal_workspace_of, workspace_get

from .models import ApiKey, Profile, all_scopes

# Marks our keys apart from DRF's older 40-hex tokens, which share the `Token` header.
API_KEY_PREFIX = "su_"
# last_used_at is only written when older than this: a busy key costs no write per request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_hash(raw_key: str) -> str:
    # The keys are 240 random bits: a fast hash is enough, no salt or stretching needed.
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_create(
    *,
    user: AbstractBaseUser,
    name: str,
    scopes: list[str] | None = None,
    expires_at: datetime | None = None,
    workspace: Workspace | str | None = None,
) -> tuple[ApiKey, str]:
    """A new key for this user; returns the row and the key itself, which is never stored.
    `scopes`: what it may do (ApiScope values; none given: every scope); `expires_at`: when it
    stops working (none: never); `workspace`: the one workspace it acts for (a Workspace or a
    slug of one the user belongs to; none: their personal workspace). What the key may do there
    is what its user's role allows as well: a viewer's key reads only, whatever its scopes."""
    errors: dict[str, list[str]] = {}
    if isinstance(workspace, str) and workspace:
        try:
            workspace = workspace_get(user=user, slug=workspace)
        except WorkspaceNotFound:
            errors["workspace"] = [f"No workspace {workspace!r} that you belong to."]
    elif not workspace:
        workspace = personal_workspace_of(user)
    name = name.strip()
    if not name:
        errors["name"] = ["Give the key a name, e.g. the tool that will use it."]
    known = all_scopes()
    unknown = sorted(set(scopes or []) - set(known))
    # In the one order ApiScope lists them, each once.
    scopes = known if scopes is None else [scope for scope in known if scope in set(scopes)]
    if unknown:
        errors["scopes"] = [f"Unknown scope {unknown[0]}; choose from {', '.join(known)}."]
    elif not scopes:
        errors["scopes"] = ["Give the key at least one scope."]
    if expires_at is not None and expires_at <= timezone.now():
        errors["expires_at"] = ["Choose an expiry in the future, or none."]
    if errors:
        raise ValidationError(errors)
    raw_key = API_KEY_PREFIX + secrets.token_urlsafe(30)
    api_key = ApiKey.objects.create(
        user=user,
        name=name[: ApiKey._meta.get_field("name").max_length],
        prefix=raw_key[: len(API_KEY_PREFIX) + 6],
        key_hash=api_key_hash(raw_key),
        scopes=scopes,
        expires_at=expires_at,
        workspace=workspace,
    )
    return api_key, raw_key


def api_key_revoke(*, key_id: int, user: AbstractBaseUser) -> ApiKey:
    """Stop one of the user's keys; it is refused from the next request. Raises
    ApiKey.DoesNotExist for a key that is not theirs."""
    api_key = ApiKey.objects.get(pk=key_id, user=user)
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def api_keys_revoke_for_departed_member(*, user: AbstractBaseUser, workspace_id: int) -> int:
    """Revoke `user`'s keys that act for a workspace they have left: a key must never act
    where its user no longer belongs (api_key_authenticate refuses them anyway). Returns how
    many were revoked."""
    return ApiKey.objects.filter(
        user_id=user.pk, workspace_id=workspace_id, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())


def api_key_authenticate(*, raw_key: str) -> ApiKey | None:
    """The active key with this value (its user loaded), marking it used; None if unknown,
    revoked or expired, or acting for a workspace its user is no longer a member of (in the
    same query: a membership removed by any path, the admin's included)."""
    api_key = (
        ApiKey.objects.select_related("user")
        .filter(key_hash=api_key_hash(raw_key), revoked_at__isnull=True)
        .filter(Q(workspace__isnull=True) | Q(workspace__memberships__user_id=F("user_id")))
        .first()
    )
    now = timezone.now()
    if api_key is None or api_key.is_expired(now):
        return None
    if api_key.last_used_at is None or now - api_key.last_used_at >= LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now
    return api_key


@functools.cache
def time_zone_names() -> list[str]:
    """Every IANA zone name this system knows, sorted."""
    return sorted(available_timezones() - {"localtime", "Factory"})


def is_time_zone_name(name: str) -> bool:
    return name in _time_zone_name_set()


@functools.cache
def _time_zone_name_set() -> frozenset[str]:
    return frozenset(time_zone_names())


def profile_set_time_zone(*, user: AbstractBaseUser, time_zone: str) -> Profile:
    """Times shown to and entered by this user are in `time_zone` ("" = the browser's)."""
    if time_zone and not is_time_zone_name(time_zone):
        raise ValidationError({"time_zone": "Choose a time zone from the list."})
    profile, _ = Profile.objects.update_or_create(user=user, defaults={"time_zone": time_zone})
    return profile
