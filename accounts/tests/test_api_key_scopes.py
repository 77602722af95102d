"""API keys with scopes and an expiry (#16): a key does only what its scopes allow, answering 403
with the missing scope otherwise, stops at its expiry, and keys made before scopes keep them all.
The same holds through the YOURLS layer, which takes keys as `signature`."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiKey, all_scopes
from accounts.services import api_key_create
from core.api.scopes import ApiScope
from links.services.create import link_create

pytestmark = pytest.mark.django_db


def _api(raw_key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw_key}")
    return client


def test_a_read_only_key_reads_links_and_is_refused_writes_and_stats_naming_the_scope(user):
    link = link_create(user=user, long_url="https://example.com/scoped").link
    _, raw = api_key_create(user=user, name="Dashboard", scopes=[ApiScope.LINKS_READ])
    api = _api(raw)
    assert api.get("/api/v1/links/").status_code == 200
    assert api.get(f"/api/v1/links/{link.code}/").status_code == 200
    created = api.post("/api/v1/links/", {"long_url": "https://example.com/x"}, format="json")
    assert created.status_code == 403
    assert created.json() == {
        "detail": "This API key lacks the scope links:write: make a key with it on the API "
        "keys page."
    }
    assert api.delete(f"/api/v1/links/{link.code}/").status_code == 403
    stats = api.get(f"/api/v1/links/{link.code}/stats/")
    assert stats.status_code == 403 and "stats:read" in stats.json()["detail"]


def test_a_write_and_stats_key_without_links_read_cannot_list(user):
    _, raw = api_key_create(
        user=user, name="Importer", scopes=[ApiScope.LINKS_WRITE, ApiScope.STATS_READ]
    )
    api = _api(raw)
    created = api.post("/api/v1/links/", {"long_url": "https://example.com/w"}, format="json")
    assert created.status_code == 201
    code = created.json()["code"]
    assert api.get(f"/api/v1/links/{code}/stats/").status_code == 200
    assert api.get("/api/v1/links/").status_code == 403


def test_an_expired_key_is_refused_like_an_unknown_one(user):
    _, raw = api_key_create(
        user=user, name="Short-lived", expires_at=timezone.now() + timedelta(minutes=5)
    )
    assert _api(raw).get("/api/v1/links/").status_code == 200
    ApiKey.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = _api(raw).get("/api/v1/links/")
    assert refused.status_code == 401


def test_a_key_needs_a_known_scope_and_a_future_expiry(user):
    with pytest.raises(ValidationError) as refused:
        api_key_create(
            user=user,
            name="Bad",
            scopes=["links:delete"],
            expires_at=timezone.now() - timedelta(days=1),
        )
    assert "Unknown scope links:delete" in refused.value.message_dict["scopes"][0]
    assert refused.value.message_dict["expires_at"] == ["Choose an expiry in the future, or none."]
    with pytest.raises(ValidationError, match="at least one scope"):
        api_key_create(user=user, name="Empty", scopes=[])


def test_a_key_made_without_scopes_has_them_all_and_drf_tokens_act_with_every_scope(user):
    api_key, _ = api_key_create(user=user, name="Everything")
    assert api_key.scopes == all_scopes()
    from rest_framework.authtoken.models import Token

    token = Token.objects.create(user=user)
    legacy = _api(token.key)
    created = legacy.post("/api/v1/links/", {"long_url": "https://example.com/t"}, format="json")
    assert created.status_code == 201


def test_the_keys_page_makes_a_scoped_expiring_key_and_shows_both(client, user):
    client.force_login(user)
    made = client.post(
        reverse("api_keys"),
        {"name": "Reporting", "scopes": [ApiScope.STATS_READ], "expires_in": "30"},
        follow=True,
    )
    page = made.content.decode()
    api_key = ApiKey.objects.get(name="Reporting")
    assert api_key.scopes == ["stats:read"]
    assert timedelta(days=29) < api_key.expires_at - timezone.now() <= timedelta(days=30)
    assert "stats:read" in page and "until " in page
    nothing = client.post(reverse("api_keys"), {"name": "Nothing", "expires_in": ""})
    assert "Give the key at least one scope." in nothing.content.decode()


def test_the_yourls_layer_applies_the_keys_scopes(client, user):
    _, raw = api_key_create(user=user, name="YOURLS plugin", scopes=[ApiScope.LINKS_READ])
    link_create(user=user, long_url="https://example.com/yourls-scope", alias="yscope")
    expand = client.get(
        "/yourls-api.php",
        {"signature": raw, "action": "expand", "shorturl": "yscope", "format": "json"},
    )
    assert expand.status_code == 200 and expand.json()["longurl"].endswith("/yourls-scope")
    shorten = client.get(
        "/yourls-api.php",
        {
            "signature": raw,
            "action": "shorturl",
            "url": "https://example.com/new",
            "format": "json",
        },
    )
    assert shorten.status_code == 403
    assert "links:write" in shorten.json()["message"]
