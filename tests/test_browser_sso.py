"""Single sign-on in Chromium, at phone, laptop and desktop widths, against a real OpenID Connect
provider on loopback (tests.oidc_provider): a person who has never been here clicks "Sign in with
…" on the sign-in page, signs in at the provider, and lands back signed in, in the workspace the
deployment names (SSO_DEFAULT_WORKSPACE). With passwords off, the sign-in page offers the provider
alone. Each page fits its width and passes axe-core."""

import pytest
from playwright.sync_api import expect

from tests.browser_support import WIDTHS, assert_fits_and_accessible, needs_chromium, page_at_width
from tests.oidc_provider.fixture import Person, running_provider, signing_in_through
from workspaces.models import Membership, Workspace

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]

ALICE = Person("alice", "alice@example.com", first_name="Alice", last_name="Liddell")


@pytest.fixture(scope="module")
def provider(live_server, tmp_path_factory):
    with running_provider(
        people=[ALICE],
        redirect_uris=[f"{live_server.url}/accounts/sso/callback/"],
        workdir=tmp_path_factory.mktemp("oidc-provider"),
    ) as running:
        yield running


@pytest.fixture
def sso_on(settings, provider):
    with signing_in_through(settings, provider, SSO_NAME="Example ID") as running:
        yield running


@pytest.mark.parametrize("width", WIDTHS)
def test_a_new_person_signs_in_through_the_provider_and_lands_in_the_workspace(
    browser, live_server, sso_on, settings, width, django_user_model
):
    team = Workspace.objects.create(slug="marketing", name="Marketing")
    settings.SSO_DEFAULT_WORKSPACE = "marketing"
    settings.SSO_DEFAULT_ROLE = "editor"
    base = live_server.url
    context, page = page_at_width(browser, width)

    page.goto(base + "/accounts/login/")
    assert_fits_and_accessible(page, "sign-in page with single sign-on")
    page.get_by_role("link", name="Sign in with Example ID").click()

    page.wait_for_url(f"{sso_on.issuer.rsplit('/o', 1)[0]}/login/**")
    page.get_by_label("Provider username").fill(ALICE.username)
    page.get_by_label("Provider password").fill(ALICE.password)
    page.get_by_role("button", name="Sign in to the provider").click()

    page.wait_for_url(base + "/")
    switcher = page.get_by_label("Workspace")
    expect(switcher.locator("option:checked")).to_have_text("Marketing")
    assert_fits_and_accessible(page, "home after single sign-on")
    alice = django_user_model.objects.get(email=ALICE.email)
    assert Membership.objects.get(workspace=team, user=alice).role == "editor"
    context.close()


def test_with_passwords_off_the_sign_in_page_offers_the_provider_alone(
    browser, live_server, sso_on, settings
):
    settings.LOCAL_PASSWORDS = False
    context, page = page_at_width(browser, 390)
    page.goto(live_server.url + "/accounts/login/")
    expect(page.get_by_role("link", name="Sign in with Example ID")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    assert_fits_and_accessible(page, "sign-in page, passwords off")
    page.goto(live_server.url + "/admin/login/")
    expect(page.get_by_role("link", name="Sign in with Example ID")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    context.close()
