"""DRF authentication by API keys: the ones people make on their keys page (`su_…`) and the
DRF-style tokens of `manage.py drf_create_token` (40 hex characters), all stored as hashes."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from accounts import services


class ApiKeyAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>` (or `Bearer <key>`), looked up by the key's hash. It takes
    the place of DRF's TokenAuthentication, whose table kept keys in plain text (its rows are
    folded into hashed keys: migration 0006 and signals.drf_token_folded)."""

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in (b"token", b"bearer"):
            return None
        # DRF's own answers to a malformed header.
        if len(header) == 1:
            raise exceptions.AuthenticationFailed("Invalid token header. No credentials provided.")
        if len(header) > 2:
            raise exceptions.AuthenticationFailed(
                "Invalid token header. Token string should not contain spaces."
            )
        try:
            raw_key = header[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed(
                "Invalid token header. Token string should not contain invalid characters."
            ) from None
        api_key = services.api_key_authenticate(raw_key=raw_key)
        if api_key is None:
            if raw_key.startswith(services.API_KEY_PREFIX):
                raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
            raise exceptions.AuthenticationFailed("Invalid token.")
        return api_key.user, api_key
