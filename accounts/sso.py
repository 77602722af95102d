"""Single sign-on through an OpenID Connect provider (settings.SSO_*, docs/sso.md): who may
sign in, and as which user here.

mozilla-django-oidc speaks the protocol (accounts.oidc: the code flow with PKCE and a nonce, the
ID token's signature checked against the provider's keys); this module holds the rules, so the
sign-in page, the admin's and any later channel decide alike:

- a person the provider knows by a subject already linked here is that user, whatever e-mail
  the provider now gives (an address change at the provider makes no second account);
- otherwise the provider must vouch for the e-mail (`email_verified`), its domain must be in
  SSO_ALLOWED_DOMAINS when that is set, and the person is linked to the one user with that
  e-mail, else made a new user (unless SSO_CREATE_USERS is off) with no usable password;
- the domain rule holds at every sign-in, not only the first;
- each new user or link is recorded in the audit log, and the person becomes a member of
  SSO_DEFAULT_WORKSPACE as SSO_DEFAULT_ROLE when that is set (a member keeps their role).
"""

from __future__ import annotations

import dataclasses

import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import SsoIdentity
from audit.services import audit_record
from workspaces.models import Workspace
from workspaces.services import member_grant

DISCOVERY_PATH = "/.well-known/openid-configuration"
DISCOVERY_CACHE_SECONDS = 3600


def enabled() -> bool:
    """Single sign-on is on when the deployment names its provider (SSO_ISSUER)."""
    return bool(settings.SSO_ISSUER)


class SignInRefused(Exception):
    """The provider signed the person in, but they may not sign in here; the message says why,
    for the person."""


class ProviderUnreachable(Exception):
    """The provider's discovery document could not be read or is not the issuer's."""


@dataclasses.dataclass(frozen=True)
class ProviderEndpoints:
    authorization: str
    token: str
    userinfo: str
    jwks: str


def _cache_key(issuer: str) -> str:
    return f"sso:discovery:{issuer}"


def provider_endpoints() -> ProviderEndpoints:
    """The provider's endpoints from its discovery document, read at most once an hour (kept in
    the cache, which every process shares in services mode), only at a sign-in through it."""
    issuer = settings.SSO_ISSUER
    found = cache.get(_cache_key(issuer))
    if found is None:
        found = _discover(issuer)
        cache.set(_cache_key(issuer), found, DISCOVERY_CACHE_SECONDS)
    return ProviderEndpoints(**found)


def _discover(issuer: str) -> dict[str, str]:
    try:
        answer = requests.get(
            issuer + DISCOVERY_PATH,
            timeout=settings.OIDC_TIMEOUT,  # as mozilla-django-oidc's calls to it
            allow_redirects=False,
            headers={"Accept": "application/json"},
        )
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderUnreachable(f"{issuer}{DISCOVERY_PATH}: {error}") from error
    # OpenID Connect Discovery 1.0, 4.3: the document's issuer must be the one asked.
    if not isinstance(document, dict) or document.get("issuer", "").rstrip("/") != issuer:
        raise ProviderUnreachable(f"{issuer}{DISCOVERY_PATH} names another issuer")
    try:
        return {
            "authorization": str(document["authorization_endpoint"]),
            "token": str(document["token_endpoint"]),
            "userinfo": str(document["userinfo_endpoint"]),
            "jwks": str(document["jwks_uri"]),
        }
    except KeyError as missing:
        raise ProviderUnreachable(f"{issuer}{DISCOVERY_PATH} lacks {missing}") from None


def forget_provider() -> None:
    """Read the discovery document again at the next sign-in (tests; a provider moved)."""
    cache.delete(_cache_key(settings.SSO_ISSUER))


def _email_domain(email: str) -> str:
    return email.rpartition("@")[2].lower()


def _check_domain(email: str) -> None:
    allowed = settings.SSO_ALLOWED_DOMAINS
    if allowed and (not email or _email_domain(email) not in allowed):
        raise SignInRefused(
            f"Accounts at {_email_domain(email) or 'an unknown domain'} cannot sign in here; "
            f"this shorturl accepts {', '.join('@' + domain for domain in allowed)} only."
        )


def sign_in_user(*, claims: dict) -> AbstractBaseUser:
    """The user the provider's verified claims (the ID token's and the userinfo's, merged) sign
    in as here, linked or made now by the rules above. SignInRefused when they may not."""
    issuer = settings.SSO_ISSUER
    subject = str(claims.get("sub") or "")
    if not subject:
        raise SignInRefused("The sign-in provider did not say who you are (no subject).")
    email = str(claims.get("email") or "").strip()
    _check_domain(email)
    identity = _identity(issuer, subject)
    if identity is not None:
        user = identity.user
        _check_active(user)
        SsoIdentity.objects.filter(pk=identity.pk).update(
            last_sign_in_at=timezone.now(), email=email or identity.email
        )
    else:
        user = _link_or_create(issuer=issuer, subject=subject, email=email, claims=claims)
    _join_default_workspace(user)
    return user


def _identity(issuer: str, subject: str) -> SsoIdentity | None:
    return SsoIdentity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()


def _check_active(user: AbstractBaseUser) -> None:
    if not user.is_active:
        raise SignInRefused("Your account here is switched off; ask your administrator.")


def _link_or_create(*, issuer: str, subject: str, email: str, claims: dict) -> AbstractBaseUser:
    # A JSON true; some providers (Amazon Cognito's userinfo) send the string "true".
    if not email or claims.get("email_verified") not in (True, "true"):
        raise SignInRefused(
            "The sign-in provider did not confirm your e-mail address, so it cannot be matched "
            "to an account here. Confirm it with the provider, then try again."
        )
    for _ in range(2):
        try:
            return _link_or_create_once(issuer=issuer, subject=subject, email=email, claims=claims)
        except IntegrityError:
            # The same person's second tab won the race and linked them; or another new person
            # took the same username a moment ago, and the next try picks another.
            identity = _identity(issuer, subject)
            if identity is not None:
                return identity.user
    return _link_or_create_once(issuer=issuer, subject=subject, email=email, claims=claims)


def _link_or_create_once(
    *, issuer: str, subject: str, email: str, claims: dict
) -> AbstractBaseUser:
    User = get_user_model()
    with transaction.atomic():
        same_email = list(User._default_manager.filter(email__iexact=email)[:2])
        if len(same_email) > 1:
            raise SignInRefused(
                f"Several accounts here have the address {email}; ask your administrator "
                "to keep it on one of them."
            )
        if same_email:
            user = same_email[0]
            _check_active(user)
            action = "user.sso_link"
        elif settings.SSO_CREATE_USERS:
            user = User._default_manager.create_user(
                _free_username(email),
                email=email,
                password=None,
                first_name=str(claims.get("given_name") or "")[:150],
                last_name=str(claims.get("family_name") or "")[:150],
            )
            action = "user.create"
        else:
            raise SignInRefused(
                f"There is no account here for {email}; ask your administrator for one."
            )
        SsoIdentity.objects.create(user=user, issuer=issuer, subject=subject, email=email)
        audit_record(
            action=action,
            actor=user,
            object_type="user",
            object_id=user.pk,
            object_repr=user.get_username(),
            after={"email": email, "sso_issuer": issuer, "sso_subject": subject},
        )
    return user


def _free_username(email: str) -> str:
    """The e-mail's local part as a username (letters, digits and @.+-_ only), made unique with
    -2, -3… when taken."""
    User = get_user_model()
    local = email.partition("@")[0]
    base = "".join(c for c in local if c.isalnum() or c in "@.+-_")[:140] or "user"
    name, n = base, 1
    while User._default_manager.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


def _join_default_workspace(user: AbstractBaseUser) -> None:
    workspace = default_workspace()
    if workspace is not None:
        member_grant(workspace=workspace, user=user, role=settings.SSO_DEFAULT_ROLE)


def default_workspace() -> Workspace | None:
    """SSO_DEFAULT_WORKSPACE's workspace; None when unset or gone (check accounts.W002 says)."""
    slug = settings.SSO_DEFAULT_WORKSPACE
    return Workspace.objects.filter(slug=slug).first() if slug else None
