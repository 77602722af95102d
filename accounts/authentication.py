"""DRF authentication by the API keys people make on their keys page."""

from __future__ import annotations

from rest_framework import authentication, exceptions

from . import services


class ApiKeyAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token su_…` (or `Bearer su_…`). Keys without our prefix are left to the
    next class, DRF's own TokenAuthentication, so tokens made before keys existed still work."""

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if len(header) != 2 or header[0].lower() not in (b"token", b"bearer"):
            return None
        try:
            raw_key = header[1].decode()
        except UnicodeError:
            return None
        if not raw_key.startswith(services.API_KEY_PREFIX):
            return None
        api_key = services.api_key_authenticate(raw_key=raw_key)
        if api_key is None or not api_key.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return api_key.user, api_key
