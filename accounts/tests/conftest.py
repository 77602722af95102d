"""Single sign-on switched on for a test, with a made-up provider (the rules' and pages' tests;
the protocol's tests start a real one: tests.oidc_provider)."""

import pytest


@pytest.fixture
def sso_settings(settings):
    settings.SSO_ISSUER = "https://idp.example"
    settings.SSO_NAME = "Example ID"
    settings.SSO_CLIENT_ID = "shorturl"
    settings.SSO_CLIENT_SECRET = "s"
    settings.SSO_ALLOWED_DOMAINS = []
    settings.SSO_CREATE_USERS = True
    settings.SSO_DEFAULT_WORKSPACE = ""
    settings.SSO_DEFAULT_ROLE = "viewer"
    return settings
