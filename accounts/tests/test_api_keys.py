"""A marketer makes their own API keys on a page, sees them once, and revokes them."""

import re

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from accounts.models import all_scopes

pytestmark = pytest.mark.django_db

LINKS_API = "/api/v1/links/"


def _create_key(client, name: str) -> str:
    # Every scope ticked, as the form starts.
    response = client.post(reverse("api_keys"), {"name": name, "scopes": all_scopes()}, follow=True)
    assert response.status_code == 200
    match = re.search(r'data-testid="new-key">([^<]+)<', response.content.decode())
    assert match, "the new key is shown once after creating it"
    return match.group(1).strip()


def test_a_key_made_on_the_page_calls_the_api_and_is_shown_only_once(client, user):
    client.force_login(user)
    key = _create_key(client, "Newsletter tool")

    api = client.__class__()
    answer = api.get(LINKS_API, headers={"authorization": f"Token {key}"})
    assert answer.status_code == 200

    page = client.get(reverse("api_keys")).content.decode()
    assert "Newsletter tool" in page
    assert key not in page  # shown once, stored only as a hash


def test_the_page_that_shows_a_new_key_is_never_cached(client, user):
    client.force_login(user)
    client.post(reverse("api_keys"), {"name": "cache check"})
    response = client.get(reverse("api_keys"))
    assert "no-store" in response["Cache-Control"]


def test_the_page_shows_when_a_key_was_last_used(client, user):
    client.force_login(user)
    key = _create_key(client, "CRM")
    assert "Never used" in client.get(reverse("api_keys")).content.decode()

    client.__class__().get(LINKS_API, headers={"authorization": f"Token {key}"})

    assert "Never used" not in client.get(reverse("api_keys")).content.decode()


def test_a_revoked_key_is_refused_at_once(client, user):
    client.force_login(user)
    key = _create_key(client, "Old script")
    from accounts.models import ApiKey

    api_key = ApiKey.objects.get(user=user)
    client.post(reverse("api_key_revoke", args=[api_key.pk]))

    answer = client.__class__().get(LINKS_API, headers={"authorization": f"Token {key}"})
    assert answer.status_code == 401
    assert "Revoked" in client.get(reverse("api_keys")).content.decode()


def test_nobody_revokes_or_sees_another_users_key(client, user, other_user):
    client.force_login(other_user)
    _create_key(client, "Rival's key")
    from accounts.models import ApiKey

    theirs = ApiKey.objects.get(user=other_user)
    client.force_login(user)

    assert "Rival" not in client.get(reverse("api_keys")).content.decode()
    assert client.post(reverse("api_key_revoke", args=[theirs.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_an_unknown_key_is_refused_and_old_drf_tokens_still_work(client, user):
    refused = client.get(LINKS_API, headers={"authorization": "Token su_not-a-real-key"})
    assert refused.status_code == 401

    token = Token.objects.create(user=user)
    accepted = client.get(LINKS_API, headers={"authorization": f"Token {token.key}"})
    assert accepted.status_code == 200


def test_a_key_needs_a_name(client, user):
    client.force_login(user)
    response = client.post(reverse("api_keys"), {"name": "  "})
    assert response.status_code == 200
    assert "Give the key a name" in response.content.decode()


def test_the_navigation_links_the_keys_page_and_the_api_docs(client, user):
    client.force_login(user)
    page = client.get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("api_keys")}"' in page
    assert 'href="/api/v1/docs/"' in page


def test_the_keys_page_needs_a_sign_in(client):
    response = client.get(reverse("api_keys"))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
