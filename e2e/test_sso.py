"""Single sign-on end to end, as deployed (the issue's "done when"): a person signs in through
an OpenID Connect provider in Chromium and lands in the configured workspace, as a member with
the configured role, in both modes; and with passwords switched off (LOCAL_PASSWORDS=0) a
posted password signs nobody in while single sign-on still does.

The session's deployments have single sign-on set up from their start (conftest.py): their
SSO_ISSUER names a provider on a loopback port that nothing serves until the case here starts
it (tests/oidc_provider: django-oauth-toolkit in OIDC mode, in a process of its own) with the
deployment's callback address; the product reads the discovery document at the first sign-in.
Passwords off needs a deployment of its own, started once, in embedded mode. The provider is
named `localhost`, the deployments 127.0.0.1: a browser keeps cookies per host, not per port,
and both sites are Django with a `sessionid` cookie, which would otherwise overwrite each other.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit

import harness
import pytest

from tests.oidc_provider.fixture import (
    CLIENT_ID,
    CLIENT_SECRET,
    Person,
    Provider,
    issuer_at,
    running_provider,
    sign_in_at_provider,
)

WORKSPACE = harness.SSO_WORKSPACE
CHROMIUM = "/usr/bin/chromium"
ALICE = Person("alice", "alice@example.com", first_name="Alice", last_name="Liddell")
BOB = Person("bob", "bob@example.com", first_name="Bob")


@contextlib.contextmanager
def provider_for(dep: harness.Deployment, workdir) -> Iterator[Provider]:
    """The provider `dep` was started to trust (its SSO_ISSUER), started now with its callback,
    after the default workspace is made as its owner would: through the API with demo's token."""
    with dep.api() as api:
        made = api.post(
            dep.url("/api/v1/workspaces/"),
            json={"slug": WORKSPACE[0], "name": WORKSPACE[1]},
            timeout=harness.HTTP_TIMEOUT,
        )
    assert made.status_code == 201, made.text[:500]
    issuer = urlsplit(dep.env["SSO_ISSUER"])
    with running_provider(
        people=[ALICE, BOB],
        redirect_uris=[dep.url("/accounts/sso/callback/")],
        workdir=workdir,
        port=issuer.port,
        host=issuer.hostname,
    ) as provider:
        assert provider.issuer == dep.env["SSO_ISSUER"]
        yield provider


@pytest.fixture(scope="module")
def passwords_off(own_deployment, tmp_path_factory):
    """(deployment, provider): an embedded deployment that signs people in through the provider
    only (LOCAL_PASSWORDS=0), into `example-team` as editors."""
    issuer = issuer_at(harness.free_port(), "localhost")
    env = Provider(issuer, CLIENT_ID, CLIENT_SECRET).environment(
        SSO_NAME="Example ID",
        SSO_DEFAULT_WORKSPACE=WORKSPACE[0],
        SSO_DEFAULT_ROLE="editor",
        LOCAL_PASSWORDS="0",
    )
    workdir = tmp_path_factory.mktemp("oidc-provider-off")
    with (
        own_deployment("embedded", name="sso-passwords-off", env=env) as dep,
        provider_for(dep, workdir) as provider,
    ):
        yield dep, provider


def _members(dep: harness.Deployment) -> dict[str, str]:
    """The default workspace's members and their roles, as its owner (demo) reads them."""
    members = harness.api_get(dep, f"/api/v1/workspaces/{WORKSPACE[0]}/members/")
    return {member["user"]: member["role"] for member in members}


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"needs Chromium at {CHROMIUM}")
def test_a_person_signs_in_through_the_provider_and_lands_in_the_configured_workspace(
    deployment, tmp_path
):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    dep = deployment
    with provider_for(dep, tmp_path) as provider, sync_api.sync_playwright() as playwright:
        assert "alice" not in _members(dep)
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.set_default_timeout(15_000)
            page.goto(dep.url("/accounts/login/"))
            page.get_by_role("link", name="Sign in with Example ID").click()

            page.wait_for_url(re.compile("^" + re.escape(provider.issuer.rsplit("/o", 1)[0])))
            expect(page.get_by_role("heading", name="Test identity provider")).to_be_visible()
            page.get_by_label("Provider username").fill(ALICE.username)
            page.get_by_label("Provider password").fill(ALICE.password)
            page.get_by_role("button", name="Sign in to the provider").click()

            page.wait_for_url(dep.url("/"))
            expect(page.locator(".nav-user")).to_contain_text("alice")
            current = page.get_by_test_id("workspace-switcher").locator("option:checked")
            expect(current).to_have_text(WORKSPACE[1])
            expect(current).to_have_attribute("value", WORKSPACE[0])
        finally:
            browser.close()
    assert _members(dep).get("alice") == "editor"


def test_without_local_passwords_a_password_signs_nobody_in_but_the_provider_does(
    passwords_off,
):
    dep, provider = passwords_off
    with dep.session() as sess:
        page = sess.get(dep.url("/accounts/login/"), timeout=harness.HTTP_TIMEOUT)
        assert page.status_code == 200
        assert "Sign in with Example ID" in page.text
        assert 'name="password"' not in page.text
        # The form is not shown, but a script may post a password anyway: with a CSRF secret of
        # its own (a cookie and the same token: what Django checks of a direct client), so
        # that the answer is the sign-in's, not CSRF's 403.
        secret = secrets.token_hex(16)
        sess.cookies.set("csrftoken", secret)
        refused = sess.post(
            dep.url("/accounts/login/"),
            data={"csrfmiddlewaretoken": secret, "username": "demo", "password": "demo"},
            headers={"Referer": dep.url("/accounts/login/")},
            allow_redirects=False,
            timeout=harness.HTTP_TIMEOUT,
        )
        assert refused.status_code == 200, (refused.status_code, refused.text[:500])
        assert "sessionid" not in sess.cookies
        mine = sess.get(dep.url("/dashboard/"), allow_redirects=False, timeout=30)
        assert mine.status_code == 302 and mine.headers["Location"].startswith("/accounts/login/")

        # The same browser signs in through the provider (requests following its pages).
        started = sess.get(dep.url("/accounts/sso/"), allow_redirects=False, timeout=30)
        assert started.status_code == 302
        assert started.headers["Location"].startswith(f"{provider.issuer}/authorize/")
        callback = dep.url("/accounts/sso/callback/")
        back = sign_in_at_provider(started.headers["Location"], BOB, stop_at=callback)
        landed = sess.get(back, allow_redirects=False, timeout=harness.HTTP_TIMEOUT)
        assert (landed.status_code, landed.headers.get("Location")) == (302, "/")
        home = sess.get(dep.url("/"), allow_redirects=False, timeout=harness.HTTP_TIMEOUT)
        assert home.status_code == 200
        assert re.search(r'<option value="example-team"[^>]* selected>', home.text), home.text
    assert _members(dep).get("bob") == "editor"
