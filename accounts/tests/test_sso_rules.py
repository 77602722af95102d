"""Who single sign-on lets in, and as which user here (accounts.sso, docs/sso.md): the claims the
provider vouched for go to sso.sign_in_user, as the callback view passes them. The protocol
itself (a provider on loopback) is tested elsewhere; these are the rules, the real database and
the pages people see around them."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.checks import run_checks

from accounts import checks, sso
from accounts.models import SsoIdentity
from audit.models import AuditEntry
from workspaces.models import Membership, Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

ISSUER = "https://idp.example"
User = get_user_model()


@pytest.fixture(autouse=True)
def sso_on(sso_settings):
    return sso_settings


def claims(sub: str = "idp-sub-1", email: str = "jane.doe@example.com", **more) -> dict:
    return {"sub": sub, "email": email, "email_verified": True, **more}


def audit_actions(user) -> list[str]:
    rows = AuditEntry.objects.filter(object_type="user", object_id=str(user.pk)).order_by("pk")
    return [entry.action for entry in rows]


@pytest.fixture
def team(other_user):
    """A team workspace, owned by someone else, for SSO_DEFAULT_WORKSPACE."""
    return workspace_create(user=other_user, name="Everyone", slug="everyone")


# --- a new person ------------------------------------------------------------------------------


def test_a_new_person_becomes_a_user_named_after_their_email_without_a_password():
    user = sso.sign_in_user(
        claims=claims(email="Jane.Doe@example.com", given_name="Jane", family_name="Doe")
    )

    user.refresh_from_db()
    assert user.username == "Jane.Doe"
    assert user.email == "Jane.Doe@example.com"
    assert (user.first_name, user.last_name) == ("Jane", "Doe")
    assert not user.has_usable_password()
    assert user.is_active and not user.is_staff
    identity = SsoIdentity.objects.get(user=user)
    assert (identity.issuer, identity.subject, identity.email) == (
        ISSUER,
        "idp-sub-1",
        "Jane.Doe@example.com",
    )
    assert audit_actions(user) == ["user.create"]
    entry = AuditEntry.objects.get(action="user.create")
    assert entry.actor_id == user.pk
    assert entry.changes["sso_subject"] == [None, "idp-sub-1"]


def test_a_taken_username_gets_a_number(django_user_model):
    django_user_model.objects.create_user("jane.doe", email="someone.else@example.org")

    user = sso.sign_in_user(claims=claims())
    again = sso.sign_in_user(claims=claims(sub="idp-sub-2", email="JANE.DOE@example.net"))

    assert user.username == "jane.doe-2"
    assert again.username == "JANE.DOE-3"  # taken is case-insensitive
    assert User.objects.filter(username__iexact="jane.doe").count() == 1


def test_signing_in_again_is_the_same_user_and_records_nothing_more():
    first = sso.sign_in_user(claims=claims())

    second = sso.sign_in_user(claims=claims())

    assert second.pk == first.pk
    assert User.objects.count() == 1
    assert SsoIdentity.objects.count() == 1
    assert audit_actions(first) == ["user.create"]


def test_a_new_person_joins_the_default_workspace_with_the_default_role(sso_on, team):
    sso_on.SSO_DEFAULT_WORKSPACE = "everyone"
    sso_on.SSO_DEFAULT_ROLE = "editor"

    user = sso.sign_in_user(claims=claims())

    membership = Membership.objects.get(workspace=team, user=user)
    assert membership.role == Role.EDITOR
    joined = AuditEntry.objects.filter(action="membership.create", actor_id=user.pk)
    assert [(entry.workspace_id, entry.object_id) for entry in joined] == [
        (team.pk, str(membership.pk))
    ]


def test_an_existing_member_keeps_a_higher_role(sso_on, team, other_user, django_user_model):
    jane = django_user_model.objects.create_user("jane", email="jane.doe@example.com")
    member_add(by=other_user, workspace=team, username="jane", role="owner")
    sso_on.SSO_DEFAULT_WORKSPACE = "everyone"

    assert sso.sign_in_user(claims=claims()).pk == jane.pk

    assert Membership.objects.get(workspace=team, user=jane).role == Role.OWNER
    assert not AuditEntry.objects.filter(action="membership.create", actor_id=jane.pk).exists()


def test_a_default_workspace_that_is_gone_joins_nothing(sso_on):
    sso_on.SSO_DEFAULT_WORKSPACE = "no-such-team"

    user = sso.sign_in_user(claims=claims())

    # Only their own personal workspace.
    joined = Membership.objects.filter(user=user).values_list("workspace__personal_for", flat=True)
    assert list(joined) == [user.pk]


# --- an existing user --------------------------------------------------------------------------


def test_an_existing_user_with_that_email_is_linked_not_duplicated(user):
    user.email = "Jane.Doe@Example.com"
    user.save()

    signed_in = sso.sign_in_user(claims=claims(email="jane.doe@example.com"))

    assert signed_in.pk == user.pk
    assert User.objects.count() == 1
    assert SsoIdentity.objects.get(subject="idp-sub-1").user_id == user.pk
    assert audit_actions(user) == ["user.sso_link"]
    user.refresh_from_db()
    assert user.has_usable_password()  # their password stays theirs


def test_two_users_with_that_email_are_refused_naming_the_address(user, other_user):
    User.objects.filter(pk__in=[user.pk, other_user.pk]).update(email="jane.doe@example.com")

    with pytest.raises(sso.SignInRefused, match=re.escape("address Jane.Doe@example.com;")):
        sso.sign_in_user(claims=claims(email="Jane.Doe@example.com"))

    assert not SsoIdentity.objects.exists()
    assert User.objects.count() == 2


def test_an_inactive_user_with_that_email_is_refused(user):
    User.objects.filter(pk=user.pk).update(email="jane.doe@example.com", is_active=False)

    with pytest.raises(sso.SignInRefused, match="switched off"):
        sso.sign_in_user(claims=claims())

    assert not SsoIdentity.objects.exists()


# --- what the provider must say ----------------------------------------------------------------


@pytest.mark.parametrize("verified", [None, False, "false"])
def test_an_email_the_provider_did_not_verify_is_refused(verified):
    said = claims()
    if verified is None:
        del said["email_verified"]
    else:
        said["email_verified"] = verified

    with pytest.raises(sso.SignInRefused, match="did not confirm your e-mail"):
        sso.sign_in_user(claims=said)

    assert not User.objects.exists()
    assert not SsoIdentity.objects.exists()


def test_a_verified_email_said_as_the_string_true_is_accepted():
    # Amazon Cognito's userinfo sends "true" (a string), not JSON's true.
    user = sso.sign_in_user(claims=claims(email_verified="true"))
    assert user.email == "jane.doe@example.com"


def test_an_unverified_email_does_not_link_to_the_user_holding_it(user):
    User.objects.filter(pk=user.pk).update(email="jane.doe@example.com")

    with pytest.raises(sso.SignInRefused):
        sso.sign_in_user(claims=claims(email_verified=False))

    assert not SsoIdentity.objects.exists()


@pytest.mark.parametrize("sub", [None, ""])
def test_no_subject_is_refused(sub):
    said = claims(sub=sub)

    with pytest.raises(sso.SignInRefused, match="no subject"):
        sso.sign_in_user(claims=said)

    assert not User.objects.exists()


def test_no_email_is_refused():
    with pytest.raises(sso.SignInRefused):
        sso.sign_in_user(claims=claims(email=""))

    assert not User.objects.exists()


# --- allowed domains ---------------------------------------------------------------------------


def test_another_domain_is_refused_naming_the_allowed_one(sso_on):
    sso_on.SSO_ALLOWED_DOMAINS = ["example.com"]

    with pytest.raises(sso.SignInRefused) as refused:
        sso.sign_in_user(claims=claims(email="jane@elsewhere.org"))

    assert "@example.com" in str(refused.value)
    assert "elsewhere.org" in str(refused.value)
    assert not User.objects.exists()
    # The domain is compared without regard to case.
    assert sso.sign_in_user(claims=claims(email="jane@EXAMPLE.com")).username == "jane"


def test_a_subdomain_is_another_domain(sso_on):
    sso_on.SSO_ALLOWED_DOMAINS = ["example.com"]

    with pytest.raises(sso.SignInRefused):
        sso.sign_in_user(claims=claims(email="jane@mail.example.com"))
    with pytest.raises(sso.SignInRefused):
        sso.sign_in_user(claims=claims(email="jane@notexample.com"))


def test_a_linked_person_whose_email_left_the_domains_is_refused(sso_on):
    user = sso.sign_in_user(claims=claims())
    sso_on.SSO_ALLOWED_DOMAINS = ["example.com"]

    with pytest.raises(sso.SignInRefused, match=re.escape("accepts @example.com only")):
        sso.sign_in_user(claims=claims(email="jane@elsewhere.org"))
    with pytest.raises(sso.SignInRefused):
        sso.sign_in_user(claims=claims(email=""))

    # Back inside the domains, the same user again.
    assert sso.sign_in_user(claims=claims()).pk == user.pk


# --- a linked identity -------------------------------------------------------------------------


def test_a_linked_person_is_found_by_subject_whatever_email_they_now_have():
    user = sso.sign_in_user(claims=claims())

    again = sso.sign_in_user(claims=claims(email="jane@newname.example", email_verified=False))

    assert again.pk == user.pk
    assert User.objects.count() == 1
    identity = SsoIdentity.objects.get()
    assert identity.email == "jane@newname.example"  # as the provider said last
    assert identity.last_sign_in_at >= identity.created_at


def test_the_same_subject_at_another_issuer_is_another_person(sso_on):
    first = sso.sign_in_user(claims=claims(email="jane@example.com"))
    sso_on.SSO_ISSUER = "https://other-idp.example"

    second = sso.sign_in_user(claims=claims(email="jane.other@example.com"))

    assert second.pk != first.pk
    assert SsoIdentity.objects.count() == 2


def test_a_linked_person_whose_user_was_switched_off_is_refused():
    user = sso.sign_in_user(claims=claims())
    User.objects.filter(pk=user.pk).update(is_active=False)

    with pytest.raises(sso.SignInRefused, match="switched off"):
        sso.sign_in_user(claims=claims())

    assert User.objects.count() == 1


# --- no new users ------------------------------------------------------------------------------


def test_without_create_users_a_person_with_no_account_is_refused(sso_on, user):
    sso_on.SSO_CREATE_USERS = False

    nobody = re.escape("no account here for jane.doe@example.com;")
    with pytest.raises(sso.SignInRefused, match=nobody):
        sso.sign_in_user(claims=claims())

    assert list(User.objects.all()) == [user]
    assert not SsoIdentity.objects.exists()


def test_without_create_users_an_existing_account_is_still_linked(sso_on, user):
    sso_on.SSO_CREATE_USERS = False
    User.objects.filter(pk=user.pk).update(email="jane.doe@example.com")

    assert sso.sign_in_user(claims=claims()).pk == user.pk


# --- start-up checks ---------------------------------------------------------------------------


def _ids(problems) -> set[str]:
    return {problem.id for problem in problems}


def test_the_checks_pass_for_a_working_setup(sso_on, team):
    sso_on.SSO_DEFAULT_WORKSPACE = "everyone"

    found = _ids(run_checks(include_deployment_checks=False, databases=["default"]))

    assert not found & {"accounts.E002", "accounts.E003", "accounts.E004", "accounts.W002"}


def test_no_passwords_without_single_sign_on_is_an_error(sso_on):
    sso_on.SSO_ISSUER = ""
    sso_on.LOCAL_PASSWORDS = False

    assert "accounts.E002" in _ids(run_checks(include_deployment_checks=False))
    sso_on.LOCAL_PASSWORDS = True
    assert "accounts.E002" not in _ids(checks.sign_in_settings(None))


def test_single_sign_on_without_a_client_id_is_an_error(sso_on):
    sso_on.SSO_CLIENT_ID = ""

    assert _ids(checks.sign_in_settings(None)) == {"accounts.E003"}
    assert "accounts.E003" in _ids(run_checks(include_deployment_checks=False))


def test_a_default_role_that_is_no_role_is_an_error(sso_on):
    sso_on.SSO_DEFAULT_ROLE = "admin"

    (problem,) = checks.sign_in_settings(None)
    assert problem.id == "accounts.E004"
    assert "'admin'" in problem.msg


def test_a_default_workspace_that_does_not_exist_is_a_warning(sso_on):
    sso_on.SSO_DEFAULT_WORKSPACE = "no-such-team"

    (problem,) = checks.sso_default_workspace(None)
    assert problem.id == "accounts.W002"
    assert "no-such-team" in problem.msg
    assert "accounts.W002" in _ids(run_checks(databases=["default"]))

    sso_on.SSO_ISSUER = ""
    assert checks.sso_default_workspace(None) == []


# --- sessions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "backend", ["accounts.oidc.ProviderBackend", "accounts.oidc.PasswordBackend"]
)
def test_switching_a_user_off_ends_their_session_however_they_signed_in(client, backend):
    user = sso.sign_in_user(claims=claims())
    client.force_login(user, backend=backend)
    assert client.get("/accounts/api-keys/").status_code == 200

    User.objects.filter(pk=user.pk).update(is_active=False)

    response = client.get("/accounts/api-keys/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
