"""The pages around single sign-on and LOCAL_PASSWORDS (docs/sso.md): what the sign-in pages
offer, that no password is taken anywhere while LOCAL_PASSWORDS is off (site, admin, YOURLS)
while API keys still work, the password page for people without a password here, and the
admin's list of identities."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts import sso
from accounts.models import SsoIdentity
from accounts.services import api_key_create

pytestmark = pytest.mark.django_db

RIGHT = "s3cret-pass-1"  # the `user` fixture's password
STAFF_RIGHT = "s3cret-pass-3"  # the `staff_user` fixture's password
SSO_LINK = "Sign in with Example ID"
NEW = {"new_password1": "N3w-pass-word!", "new_password2": "N3w-pass-word!"}


@pytest.fixture
def sso_on(sso_settings):
    return sso_settings


@pytest.fixture
def no_passwords(sso_on):
    sso_on.LOCAL_PASSWORDS = False
    return sso_on


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def _page(response) -> str:
    assert response.status_code == 200
    return response.content.decode()


# --- the sign-in pages -------------------------------------------------------------------------


def test_without_single_sign_on_the_sign_in_pages_offer_the_password_form_only(client):
    for path in ("/accounts/login/", "/admin/login/"):
        page = _page(client.get(path))
        assert 'name="password"' in page, path
        assert "Sign in with" not in page, path


def test_with_both_the_sign_in_pages_offer_the_form_and_the_provider(client, sso_on):
    page = _page(client.get("/accounts/login/?next=/links/"))
    assert 'name="password"' in page
    assert SSO_LINK in page
    assert 'href="/accounts/sso/?next=/links/"' in page

    admin = _page(client.get("/admin/login/?next=/admin/"))
    assert 'name="password"' in admin
    assert SSO_LINK in admin
    assert 'href="/accounts/sso/?next=/admin/"' in admin


def test_with_both_a_password_still_signs_in(client, sso_on, user):
    response = client.post("/accounts/login/", {"username": "marketer", "password": RIGHT})

    assert response.status_code == 302
    assert _signed_in(client)


def test_without_passwords_the_sign_in_pages_offer_the_provider_only(client, no_passwords):
    page = _page(client.get("/accounts/login/"))
    assert SSO_LINK in page
    assert 'name="password"' not in page
    assert 'name="username"' not in page

    admin = _page(client.get("/admin/login/?next=/admin/"))
    assert SSO_LINK in admin
    assert 'href="/accounts/sso/?next=/admin/"' in admin
    assert 'name="password"' not in admin
    assert "accepts no passwords" in admin


def test_without_passwords_the_right_password_signs_no_one_in(client, no_passwords, user):
    response = client.post("/accounts/login/", {"username": "marketer", "password": RIGHT})

    assert response.status_code == 200  # the page again, not on to the site
    assert not _signed_in(client)
    assert "This shorturl accepts no passwords: sign in with" in response.content.decode()
    assert client.get("/accounts/api-keys/").status_code == 302  # still signed out


def test_without_passwords_the_admin_takes_no_password_either(client, no_passwords, staff_user):
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "staffer", "password": STAFF_RIGHT}
    )

    assert response.status_code == 200
    assert not _signed_in(client)
    assert client.get("/admin/").status_code == 302


def test_the_provider_sign_in_while_single_sign_on_is_off_goes_to_the_sign_in_page(client):
    response = client.get("/accounts/sso/?next=/links/")

    assert response.status_code == 302
    assert response["Location"] == reverse("login")


# --- programs ----------------------------------------------------------------------------------


def _yourls(**params):
    return Client().get("/yourls-api.php", {"action": "version", "format": "json", **params})


def test_without_passwords_yourls_refuses_a_username_and_password(no_passwords, user):
    response = _yourls(username="marketer", password=RIGHT)

    assert response.status_code == 403
    assert response.json()["message"] == "Invalid username or password"


def test_with_passwords_yourls_takes_a_username_and_password(sso_on, user):
    assert _yourls(username="marketer", password=RIGHT).status_code == 200


def test_without_passwords_api_keys_still_work(no_passwords, user):
    _, raw_key = api_key_create(user=user, name="Tools")

    assert _yourls(signature=raw_key).status_code == 200
    for scheme in ("Token", "Bearer"):
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"{scheme} {raw_key}")
        assert api.get("/api/v1/links/").status_code == 200, scheme


# --- the password page -------------------------------------------------------------------------


def _sso_user():
    return sso.sign_in_user(
        claims={"sub": "idp-1", "email": "jane@example.com", "email_verified": True}
    )


def test_a_user_made_by_single_sign_on_has_no_password_to_change(client, sso_on):
    client.force_login(_sso_user())

    page = _page(client.get("/accounts/password/"))

    assert "No password to change here" in page
    assert "signs in through Example ID" in page
    assert 'name="old_password"' not in page
    # Posting the form changes nothing either.
    response = client.post(
        "/accounts/password/",
        {"old_password": "", **NEW},
    )
    assert "No password to change here" in _page(response)


def test_while_passwords_are_off_no_one_changes_a_password(client, no_passwords, user):
    client.force_login(user)

    page = _page(client.get("/accounts/password/"))

    assert "No password to change here" in page
    assert "accepts no passwords" in page
    response = client.post(
        "/accounts/password/",
        {"old_password": RIGHT, **NEW},
    )
    assert "No password to change here" in _page(response)
    user.refresh_from_db()
    assert user.check_password(RIGHT)


def test_a_user_with_a_password_still_gets_the_form(client, sso_on, user):
    client.force_login(user)

    page = _page(client.get("/accounts/password/"))

    assert 'name="old_password"' in page
    assert "No password to change here" not in page


# --- the admin ---------------------------------------------------------------------------------


def test_staff_see_the_identities_and_cannot_add_one(admin_client, sso_on):
    user = _sso_user()
    url = reverse("admin:accounts_ssoidentity_changelist")

    page = _page(admin_client.get(url))

    assert user.username in page
    assert "jane@example.com" in page
    assert "idp-1" in page
    assert reverse("admin:accounts_ssoidentity_add") not in page
    assert admin_client.get(reverse("admin:accounts_ssoidentity_add")).status_code == 403
    identity = SsoIdentity.objects.get()
    detail = admin_client.get(reverse("admin:accounts_ssoidentity_change", args=[identity.pk]))
    assert detail.status_code == 200  # to read, not to edit
    assert 'type="submit" value="Save"' not in detail.content.decode()
