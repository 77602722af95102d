"""What an API key may do: the scope a request needs, checked against its key's."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from accounts.models import ApiKey, ApiScope

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def scope_by_method(request, *, read: str = ApiScope.LINKS_READ) -> str:
    """The usual need: `read` for reads, links:write for anything else."""
    return read if request.method in READ_METHODS else ApiScope.LINKS_WRITE


class HasKeyScope(BasePermission):
    """A request made with an API key needs the scope its view names (`view.required_scope(
    request)`, None for none); sessions and DRF-style tokens (ApiKey.drf_token) act with every
    scope, as before keys had scopes. Refused: 403 naming the missing scope."""

    def has_permission(self, request, view) -> bool:
        api_key = request.auth
        if not isinstance(api_key, ApiKey):
            return True
        scope = view.required_scope(request) if hasattr(view, "required_scope") else None
        if scope is None or api_key.allows(scope):
            return True
        self.message = (
            f"This API key lacks the scope {scope}: make a key with it on the API keys page."
        )
        return False
