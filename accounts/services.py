"""Writes for accounts: API keys (create, revoke, the use that marks them), the old-password
check of the password-change pages, and preferences."""

from __future__ import annotations

import functools
import hashlib
import secrets
from datetime import datetime, timedelta
from zoneinfo import available_timezones

from axes.utils import reset as axes_reset
from django.contrib.auth import authenticate
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.http import HttpRequest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts.models import ApiKey, PasswordCheckTries, Profile, all_scopes
from audit import channels
from audit.services import audit_change, snapshot
from core.api.throttles import key_rate_problem
from core.db import retry_on_conflict
from core.login_attempts import attempted_username
from workspaces.models import Workspace
from workspaces.selectors import WorkspaceNotFound, personal_workspace_of, workspace_get

# Marks the keys made on the keys page apart from DRF-style 40-hex tokens (drf_create_token);
# both are sent as `Authorization: Token <key>` and stored only as a hash.
API_KEY_PREFIX = "su_"
# The name DRF-style tokens get on their owner's keys page and in the admin.
DRF_TOKEN_NAME = "API token"  # noqa: S105 (a label, not a secret)
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
    rate_limit: int | None = None,
) -> tuple[ApiKey, str]:
    """A new key for this user; returns the row and the key itself, which is never stored.
    `scopes`: what it may do (ApiScope values; none given: every scope); `expires_at`: when it
    stops working (none: never); `workspace`: the one workspace it acts for (a Workspace or a
    slug of one the user belongs to; none: their personal workspace). What the key may do there
    is what its user's role allows as well: a viewer's key reads only, whatever its scopes.
    `rate_limit`: requests per minute (none: the workspace's default, api_rate_limit)."""
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
    if problem := key_rate_problem(rate_limit):
        errors["rate_limit"] = [problem]
    if errors:
        raise ValidationError(errors)
    raw_key = API_KEY_PREFIX + secrets.token_urlsafe(30)
    with transaction.atomic():
        api_key = ApiKey.objects.create(
            user=user,
            name=name[: ApiKey._meta.get_field("name").max_length],
            prefix=raw_key[: len(API_KEY_PREFIX) + 6],
            key_hash=api_key_hash(raw_key),
            scopes=scopes,
            expires_at=expires_at,
            workspace=workspace,
            rate_limit=rate_limit,
        )
        audit_change("api_key.create", api_key, actor=user)
    return api_key, raw_key


def api_token_create(*, user: AbstractBaseUser, reset: bool = False) -> tuple[ApiKey, str]:
    """A DRF-style token for `manage.py drf_create_token`: 40 hex characters (DRF's format),
    with every scope in every workspace of the user, no expiry. Returns the row and the token
    itself, which is never stored. `reset`: the user's earlier DRF-style tokens are revoked."""
    if reset:
        ApiKey.objects.filter(user=user, drf_token=True, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    raw_key = secrets.token_hex(20)
    return api_token_store(user=user, raw_key=raw_key), raw_key


def api_token_store(*, user: AbstractBaseUser | int, raw_key: str) -> ApiKey:
    """Keep a DRF-style token as a hashed key (the same token again: its existing row)."""
    with transaction.atomic():
        api_key, created = ApiKey.objects.get_or_create(
            key_hash=api_key_hash(raw_key),
            defaults={
                "user_id": getattr(user, "pk", user),
                "name": DRF_TOKEN_NAME,
                "prefix": raw_key[:6],
                "scopes": all_scopes(),
                "drf_token": True,
            },
        )
        if created:
            audit_change("api_key.create", api_key, actor=api_key.user)
    return api_key


def api_token_fold(*, token: Token, raw_key: str) -> ApiKey:
    """A DRF Token row just saved by any code (a script, a test, a third-party app), its key
    already replaced by a hash (signals.drf_token_key_hashed): kept as a hashed key instead, and
    the row deleted, so authtoken_token never holds a key. `token.key` is the usable key again
    for whoever saved it."""
    api_key = api_token_store(user=token.user_id, raw_key=raw_key)
    Token.objects.filter(pk=token.key).delete()
    token.key = raw_key
    return api_key


def api_key_revoke(*, key_id: int, user: AbstractBaseUser) -> ApiKey:
    """Stop one of the user's keys; it is refused from the next request. Raises
    ApiKey.DoesNotExist for a key that is not theirs."""
    api_key = ApiKey.objects.get(pk=key_id, user=user)
    if api_key.revoked_at is None:
        before = snapshot(api_key)
        api_key.revoked_at = timezone.now()
        with transaction.atomic():
            api_key.save(update_fields=["revoked_at"])
            # Staff revoke others' keys in the admin: the one acting is the request's user.
            actor = channels.current_user() or user
            audit_change("api_key.revoke", api_key, actor=actor, before=before)
    return api_key


def api_key_set_rate_limit(
    *,
    key_id: int,
    user: AbstractBaseUser,
    rate_limit: int | None,
    by: AbstractBaseUser | None = None,
) -> ApiKey:
    """Change the requests per minute one of the user's keys may make (None: its workspace's
    default); it binds from the key's next request. Raises ApiKey.DoesNotExist for a key that
    is not theirs, ValidationError for a limit that is none. `by`: who changes it, when not
    the key's own user (staff in the admin), for the audit log."""
    api_key = ApiKey.objects.get(pk=key_id, user=user)
    if problem := key_rate_problem(rate_limit):
        raise ValidationError({"rate_limit": [problem]})
    before = snapshot(api_key)
    api_key.rate_limit = rate_limit
    with transaction.atomic():
        api_key.save(update_fields=["rate_limit"])
        audit_change("api_key.update", api_key, actor=by or user, before=before)
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
    revoked or expired, its user inactive, or acting for a workspace its user is no longer a
    member of (in the same query: a membership removed by any path, the admin's included).
    The one lookup of a key for every channel: the native API (authentication.py) and the
    compat layers (compat.auth.credential_for)."""
    api_key = (
        ApiKey.objects.select_related("user", "workspace")  # the workspace: its default limit
        .filter(key_hash=api_key_hash(raw_key), revoked_at__isnull=True, user__is_active=True)
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


class PasswordChecksPaused(Exception):
    """Too many wrong old passwords for this user (or sign-in failures for them from this
    address): no password is checked, not even the right one, until the pause ends."""


@retry_on_conflict
def _count_password_try(user_id: int, now) -> tuple[bool, PasswordCheckTries]:
    """Count one try (unless paused): (whether checks were paused, the row). One unit of work
    (core.db): on Galera two nodes may both lock the row and count from the same number; the
    later commit fails its certification and its retry counts from the other's."""
    tries, _ = PasswordCheckTries.objects.select_for_update().get_or_create(
        user_id=user_id, defaults={"last_try_at": now}
    )
    paused = tries.is_paused(now)
    if not paused:
        tries.tries = tries.tries_counted(now) + 1
    tries.last_try_at = now
    tries.save(update_fields=["tries", "last_try_at"])
    return paused, tries


def password_check(*, request: HttpRequest, user: AbstractBaseUser, password: str) -> bool:
    """Whether `password` is the signed-in user's own, for the password-change pages.

    Each try is one sign-in attempt for django-axes (through authenticate(), as the sign-in
    form's), so wrong ones count toward the sign-in lockout from this address; and the tries
    are counted per user from every address (PasswordCheckTries), so a stolen session cannot
    learn the password by guessing from many addresses. Past AXES_FAILURE_LIMIT
    (LOGIN_FAILURE_LIMIT) tries within AXES_COOLOFF_TIME (LOGIN_LOCKOUT_MINUTES) of the last one,
    PasswordChecksPaused is raised, even for the right password. A try is counted before the
    password is checked, so requests sent at once cannot check more than the limit."""
    now = timezone.now()
    paused, tries = _count_password_try(user.pk, now)
    if paused:
        raise PasswordChecksPaused()
    checked = authenticate(request, username=user.get_username(), password=password)
    if getattr(request, "axes_locked_out", False):
        raise PasswordChecksPaused()  # locked for sign-in from this address, by this try or earlier
    if checked is not None and checked.pk == user.pk:
        # As a successful sign-in does: earlier typos, here and at sign-in from here, forgotten.
        PasswordCheckTries.objects.filter(user_id=user.pk).delete()
        address = getattr(request, "axes_ip_address", None)  # none when axes is switched off
        if address:
            username = attempted_username(request, {"username": user.get_username()})
            axes_reset(ip=address, username=username)
        return True
    if tries.is_paused(now):
        raise PasswordChecksPaused()  # that was the last try allowed
    return False


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
