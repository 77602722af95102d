"""Credentials as other shorteners' APIs carry them → the user they belong to.

One credential works everywhere: any API key (`su_…`, made on /accounts/api-keys/) or DRF-style
token (drf_create_token; both kept only as hashes) that `Authorization: Token …` accepts on the
native API is accepted here as a raw value (YOURLS's `signature`), and a username and password
go through the same guard as the sign-in form.
"""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest
from rest_framework import exceptions

from accounts.models import ApiKey
from accounts.services import api_key_authenticate


class SignInLockedOut(exceptions.AuthenticationFailed):
    """Too many failed passwords for this username from this client: refused, even the right
    one, until the cool-off has passed (django-axes, the sign-in form's guard)."""

    default_detail = "Too many failed sign-ins: try again later."


def credential_for(raw_key: str) -> tuple[AbstractBaseUser, ApiKey] | None:
    """(the active user, their API key) for an API key (`su_…`) or a DRF-style token (an API
    key too, stored hashed, acting with every scope); None for anything else (an unknown,
    revoked or expired key, an inactive user). What DRF's authentication classes return, so
    the key's scopes apply (core.api.scopes.HasKeyScope)."""
    raw_key = (raw_key or "").strip()
    if not raw_key or "\x00" in raw_key:  # no key holds a NUL; not worth a query
        return None
    api_key = api_key_authenticate(raw_key=raw_key)
    return None if api_key is None else (api_key.user, api_key)


def user_for_password(
    request: HttpRequest, *, username: str, password: str
) -> AbstractBaseUser | None:
    """The user these sign-in details are right for, else None.

    Through django.contrib.auth.authenticate, so django-axes counts every failure against the
    username and client IP exactly as on /accounts/login/ (the two share one count). Past the
    limit SignInLockedOut is raised, even for the right password; the view answering it should
    mark its response (core.login_attempts.ANSWERED_BY_VIEW) or axes' middleware
    answers with the sign-in form's HTML page instead.

    `request` is Django's HttpRequest (not DRF's): axes reads the client's address from it.
    """
    if "\x00" in username or "\x00" in password:
        return None  # no account's name or password (the sign-in form refuses them too)
    user = authenticate(request, username=username, password=password)
    if user is None and getattr(request, "axes_locked_out", False):
        raise SignInLockedOut()
    return user
