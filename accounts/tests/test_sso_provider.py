"""Single sign-on against a real OpenID Connect provider (django-oauth-toolkit, started on
loopback in its own process by tests.oidc_provider): the code flow with PKCE, the ID token's
signature, the userinfo call, and what a person sees at each end."""

from __future__ import annotations

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model

from accounts import sso
from accounts.models import SsoIdentity
from audit.models import AuditEntry
from tests.oidc_provider.fixture import (
    Person,
    running_provider,
    sign_in_at_provider,
    signing_in_through,
)
from workspaces.current import SESSION_KEY as WORKSPACE_SESSION_KEY
from workspaces.models import Membership, Workspace

pytestmark = pytest.mark.django_db

CALLBACK = "http://testserver/accounts/sso/callback/"
ALICE = Person("alice", "alice@example.com", first_name="Alice", last_name="Liddell")
UNVERIFIED = Person("mallory", "mallory@example.com", verified=False)


@pytest.fixture(scope="module")
def provider(tmp_path_factory):
    with running_provider(
        people=[ALICE, UNVERIFIED],
        redirect_uris=[CALLBACK],
        workdir=tmp_path_factory.mktemp("oidc-provider"),
    ) as running:
        yield running


@pytest.fixture
def sso_on(settings, provider):
    with signing_in_through(settings, provider, SSO_NAME="Example ID") as running:
        yield running


def sign_in(client, person: Person, start: str = "/accounts/sso/"):
    """Start at shorturl, sign in at the provider, come back: shorturl's last answer."""
    started = client.get(start)
    assert started.status_code == 302
    back = sign_in_at_provider(started["Location"], person, stop_at=CALLBACK)
    return client.get(back.removeprefix("http://testserver"))


def test_a_new_person_signs_in_and_lands_in_the_configured_workspace(client, sso_on, settings):
    team = Workspace.objects.create(slug="marketing", name="Marketing")
    settings.SSO_DEFAULT_WORKSPACE = "marketing"
    settings.SSO_DEFAULT_ROLE = "editor"

    started = client.get("/accounts/sso/?next=/tags/")
    assert started["Location"].startswith(f"{sso_on.issuer}/authorize/")
    assert "code_challenge=" in started["Location"]  # PKCE
    answer = client.get(
        sign_in_at_provider(started["Location"], ALICE, stop_at=CALLBACK).removeprefix(
            "http://testserver"
        )
    )

    assert answer.status_code == 302 and answer["Location"] == "/tags/"
    user = get_user_model().objects.get(email="alice@example.com")
    assert (user.username, user.first_name, user.last_name) == ("alice", "Alice", "Liddell")
    assert not user.has_usable_password()
    assert client.session[SESSION_KEY] == str(user.pk)
    assert client.session[WORKSPACE_SESSION_KEY] == "marketing"
    assert Membership.objects.get(workspace=team, user=user).role == "editor"
    identity = SsoIdentity.objects.get(user=user)
    assert identity.issuer == sso_on.issuer and identity.email == "alice@example.com"
    page = client.get("/")
    assert page.status_code == 200 and "Marketing" in page.content.decode()
    assert set(AuditEntry.objects.values_list("action", flat=True)) >= {
        "user.create",
        "membership.create",
    }


def test_signing_in_again_finds_the_same_user(client, sso_on):
    sign_in(client, ALICE)
    client.logout()
    again = sign_in(client, ALICE)
    assert again.status_code == 302
    assert get_user_model().objects.filter(email="alice@example.com").count() == 1
    assert SsoIdentity.objects.count() == 1


def test_an_existing_account_with_that_address_is_linked_not_doubled(
    client, sso_on, django_user_model
):
    existing = django_user_model.objects.create_user(
        "alice.l", email="Alice@Example.com", password="local-pass-7731"
    )
    sign_in(client, ALICE)
    assert client.session[SESSION_KEY] == str(existing.pk)
    assert django_user_model.objects.count() == 1
    assert AuditEntry.objects.filter(action="user.sso_link", actor_id=existing.pk).exists()


def test_an_address_the_provider_did_not_verify_is_refused_with_the_reason(client, sso_on):
    answer = sign_in(client, UNVERIFIED)
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    assert SESSION_KEY not in client.session
    assert not get_user_model().objects.filter(email="mallory@example.com").exists()
    page = client.get("/accounts/login/")
    assert "did not confirm your e-mail address" in page.content.decode()


def test_the_same_answer_from_the_provider_signs_in_once(client, sso_on):
    started = client.get("/accounts/sso/")
    back = sign_in_at_provider(started["Location"], ALICE, stop_at=CALLBACK)
    path = back.removeprefix("http://testserver")
    assert client.get(path)["Location"] == "/"
    client.logout()
    replayed = client.get(path)
    assert replayed.status_code in (302, 400)
    assert SESSION_KEY not in client.session


def test_a_wrong_client_secret_is_told_as_the_provider_refusing(client, sso_on, settings):
    settings.SSO_CLIENT_SECRET = "not-the-secret"
    answer = sign_in(client, ALICE)
    assert answer["Location"] == "/accounts/login/"
    assert "did not accept this site" in client.get(answer["Location"]).content.decode()
    assert SESSION_KEY not in client.session


def test_an_unreachable_provider_sends_people_back_with_the_reason(client, settings):
    settings.SSO_ISSUER = "http://127.0.0.1:9/o"  # discard: nothing listens
    settings.SSO_CLIENT_ID = "shorturl"
    sso.forget_provider()
    answer = client.get("/accounts/sso/")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/"
    assert "could not be reached" in client.get("/accounts/login/").content.decode()
    sso.forget_provider()


def test_the_sign_in_page_offers_the_provider(client, sso_on):
    page = client.get("/accounts/login/?next=/links/").content.decode()
    assert "Sign in with Example ID" in page
    assert 'href="/accounts/sso/?next=/links/"' in page


def test_refused_sign_ins_through_the_provider_lock_no_one_out(client, sso_on, settings):
    settings.AXES_FAILURE_LIMIT = 2  # the lockout's count (LOGIN_FAILURE_LIMIT): fewer rounds
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        assert sign_in(client, UNVERIFIED)["Location"] == "/accounts/login/"
    assert sign_in(client, ALICE)["Location"] == "/"
    assert client.session[SESSION_KEY]


def test_signing_in_through_the_provider_on_the_way_to_the_admin_is_an_admin_sign_in(
    client, sso_on, django_user_model
):
    staff = django_user_model.objects.create_user(
        "alice.staff", email="alice@example.com", is_staff=True, is_superuser=True
    )
    started = client.get("/admin/login/?next=/admin/")
    assert 'href="/accounts/sso/?next=/admin/"' in started.content.decode()
    answer = sign_in(client, ALICE, start="/accounts/sso/?next=/admin/")
    assert answer["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    entry = AuditEntry.objects.get(action="admin.sign_in")
    assert (entry.actor_id, entry.channel) == (staff.pk, "admin")
