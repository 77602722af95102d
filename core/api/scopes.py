"""What an API key may do: the scopes, the one a request needs, and the check against its key's.

Here rather than with the keys (accounts.models.ApiKey) because every app's API names the scope
it needs, and the apps below accounts (workspaces) have APIs too. The check asks the credential
itself (`allows`), so it needs no model.
"""

from __future__ import annotations

from django.db import models
from rest_framework.permissions import BasePermission

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ApiScope(models.TextChoices):
    """What an API key may do. A request outside its key's scopes answers 403 naming the scope."""

    LINKS_READ = "links:read", "Read links (list, restore, QR codes, tags, domains)"
    LINKS_WRITE = "links:write", "Create, change and revoke links"
    STATS_READ = "stats:read", "Read click stats"
    WEBHOOKS_WRITE = "webhooks:write", "Manage webhooks"
    # A site's server reports leads and sales with it: a key that can do nothing else.
    CONVERSIONS_WRITE = "conversions:write", "Report leads and sales (conversions)"
    AUDIT_READ = "audit:read", "Read the audit log of workspaces you own"


def scope_by_method(request, *, read: str = ApiScope.LINKS_READ) -> str:
    """The usual need: `read` for reads, links:write for anything else."""
    return read if request.method in READ_METHODS else ApiScope.LINKS_WRITE


class HasKeyScope(BasePermission):
    """A request made with an API key needs the scope its view names (`view.required_scope(
    request)`, None for none); sessions and DRF-style tokens (ApiKey.drf_token) act with every
    scope, as before keys had scopes. Refused: 403 naming the missing scope."""

    def has_permission(self, request, view) -> bool:
        allows = getattr(request.auth, "allows", None)  # an API key (accounts.models.ApiKey)
        if allows is None:
            return True
        scope = view.required_scope(request) if hasattr(view, "required_scope") else None
        if scope is None or allows(scope):
            return True
        self.message = (
            f"This API key lacks the scope {scope}: make a key with it on the API keys page."
        )
        return False
