"""Shlink's `X-Api-Key` header, accepting any credential the native API accepts: a person's API
key (`su_…`) or a DRF-style token (drf_create_token), both looked up by their hash."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from compat.auth import credential_for

API_KEY_HEADER = "X-Api-Key"
_META_KEY = "HTTP_X_API_KEY"


class InvalidApiKey(exceptions.AuthenticationFailed):
    default_detail = "Provided API key does not exist or is invalid."


def user_for_api_key(raw_key: str):
    """(user, API key) for one of our API keys or DRF-style tokens (its scopes then apply);
    InvalidApiKey otherwise."""
    credential = credential_for(raw_key)
    if credential is None:
        raise InvalidApiKey()
    return credential


class ShlinkApiKeyAuthentication(authentication.BaseAuthentication):
    """The only authentication of the Shlink layer: no session, so no CSRF either."""

    def authenticate(self, request):
        raw_key = request.META.get(_META_KEY, "").strip()
        if not raw_key:
            return None  # the permission check answers 401 (NotAuthenticated)
        return user_for_api_key(raw_key)

    def authenticate_header(self, request) -> str:
        # Makes DRF answer 401 (not 403) for a missing key.
        return API_KEY_HEADER
