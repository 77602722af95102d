"""The sign-in backends and the provider's two views: mozilla-django-oidc's protocol, our rules
(accounts.sso) and settings read at each call, so a deployment switches single sign-on and
passwords with its environment alone."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, resolve_url
from django.urls import reverse
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)
from requests import HTTPError, RequestException

from accounts import sso
from audit.signals import record_admin_sign_in
from workspaces.current import switch_to

logger = logging.getLogger(__name__)

_UNREACHABLE = (
    "The sign-in provider could not be reached; try again in a minute, or ask your administrator."
)
_REFUSED = (
    "The sign-in provider did not accept this site's request (its client settings here may be "
    "wrong); ask your administrator."
)


def _endpoints_or_say_why(request: HttpRequest) -> sso.ProviderEndpoints | None:
    """The provider's endpoints; None, with the reason logged and told to the person, when its
    discovery document cannot be read."""
    try:
        return sso.provider_endpoints()
    except sso.ProviderUnreachable as error:
        logger.warning("single sign-on: %s", error)
        messages.error(request, _UNREACHABLE)
        return None


class PasswordBackend(ModelBackend):
    """Django's username and password, refused everywhere while LOCAL_PASSWORDS is off."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if not settings.LOCAL_PASSWORDS:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


class ProviderBackend(OIDCAuthenticationBackend):
    """The provider's answer to a sign-in this site started (the callback view's call): nothing
    for a password, nor while single sign-on is off."""

    def __init__(self, *args, **kwargs):
        # mozilla's reads the endpoints here; this backend is built for every password sign-in
        # too, which must not wait on the provider, so they are read in authenticate().
        self.UserModel = get_user_model()

    def authenticate(self, request, **kwargs):
        if not sso.enabled() or request is None or "nonce" not in kwargs:
            return None
        endpoints = _endpoints_or_say_why(request)
        if endpoints is None:
            return None
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
        self.OIDC_RP_CLIENT_ID = settings.SSO_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.SSO_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None
        try:
            return super().authenticate(request, **kwargs)
        except HTTPError as error:
            logger.warning("single sign-on: the provider refused: %s", error)
            messages.error(request, _REFUSED)
            return None
        except RequestException as error:
            logger.warning("single sign-on: the provider answered %s", error)
            messages.error(request, _UNREACHABLE)
            return None

    def get_user(self, user_id):
        # mozilla's returns inactive users too: a session begun here would outlive switching
        # its user off, which ends a password session (ModelBackend.get_user) at once.
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    def verify_token(self, token, **kwargs):
        payload = super().verify_token(token, **kwargs)
        if "nonce" in kwargs:  # the ID token (a userinfo answer as a JWT carries none)
            audience = payload.get("aud")
            audiences = audience if isinstance(audience, list) else [audience]
            if str(payload.get("iss", "")).rstrip("/") != settings.SSO_ISSUER:
                raise SuspiciousOperation("ID token from another issuer")
            if settings.SSO_CLIENT_ID not in audiences:
                raise SuspiciousOperation("ID token for another client")
        return payload

    def get_or_create_user(self, access_token, id_token, payload):
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if str(userinfo.get("sub")) != str(payload.get("sub")):
            # OpenID Connect Core 1.0, 5.3.2: a userinfo answer about someone else is refused.
            raise SuspiciousOperation("userinfo names another subject")
        try:
            return sso.sign_in_user(claims={**payload, **userinfo})
        except sso.SignInRefused as refusal:
            messages.error(self.request, str(refusal))
            return None


class ProviderSignInView(OIDCAuthenticationRequestView):
    """/accounts/sso/: off to the provider's sign-in page (?next= kept for the way back)."""

    def __init__(self, *args, **kwargs):
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        endpoints = _endpoints_or_say_why(request) if sso.enabled() else None
        if endpoints is None:
            return redirect("login")
        self.OIDC_OP_AUTH_ENDPOINT = endpoints.authorization
        self.OIDC_RP_CLIENT_ID = settings.SSO_CLIENT_ID
        return super().get(request)


class ProviderCallbackView(OIDCAuthenticationCallbackView):
    """/accounts/sso/callback/: the provider's answer; signed in, the person lands in the
    configured workspace (SSO_DEFAULT_WORKSPACE) unless they were on their way elsewhere."""

    def login_success(self) -> HttpResponse:
        response = super().login_success()
        if self.user.is_staff and self.success_url.startswith(reverse("admin:index")):
            record_admin_sign_in(self.user)
        workspace = sso.default_workspace()
        if workspace is not None:
            switch_to(self.request, workspace)
        return response

    @property
    def failure_url(self) -> str:
        return resolve_url(settings.LOGIN_URL)

    def login_failure(self) -> HttpResponse:
        if not len(messages.get_messages(self.request)):
            messages.error(self.request, "Signing in through the provider did not complete.")
        return super().login_failure()
