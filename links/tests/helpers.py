"""Helpers shared by the links tests (importable, unlike conftest files)."""

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def client_for(user, **kwargs) -> APIClient:
    """An API client signed in with `user`'s token, as another system would call."""
    client = APIClient(**kwargs)
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
