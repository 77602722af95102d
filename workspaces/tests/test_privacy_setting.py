"""A workspace's privacy mode (#30): its owners choose it in the API, on the workspace page and
staff in the admin; editors, viewers and outsiders cannot; the mode then decides what the next
stored visit keeps (docs/privacy.md)."""

from __future__ import annotations

import pytest
from django.test import Client

from analytics import services as analytics_services
from analytics.models import VisitRecord
from analytics.tests.visits import visit_message
from workspaces.models import Workspace
from workspaces.tests.helpers import native, token_of

pytestmark = pytest.mark.django_db


def _page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_owners_choose_the_mode_in_the_api_and_the_next_visit_keeps_no_address(team, settings):
    settings.ANALYTICS_PRIVACY = "full"
    api = native(token_of(team.owner))
    shown = api.get("/api/v1/workspaces/acme/").json()
    assert (shown["analytics_privacy"], shown["privacy_mode"]) == ("", "full")
    answer = api.patch("/api/v1/workspaces/acme/", {"analytics_privacy": "none"}, format="json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["analytics_privacy"], answer.json()["privacy_mode"]) == ("none", "none")
    assert answer.json()["name"] == "Acme"  # the name stays when not sent
    analytics_services.store_visits(messages=[visit_message(team.link, ip="81.2.69.160")])
    assert VisitRecord.objects.get(link=team.link).client_ip == ""
    back = api.patch("/api/v1/workspaces/acme/", {"analytics_privacy": ""}, format="json")
    assert back.json()["privacy_mode"] == "full"


def test_a_mode_that_does_not_exist_is_refused(team):
    api = native(token_of(team.owner))
    answer = api.patch("/api/v1/workspaces/acme/", {"analytics_privacy": "some"}, format="json")
    assert answer.status_code == 400
    assert "analytics_privacy" in answer.json()


@pytest.mark.parametrize("who", ["editor", "viewer"])
def test_members_who_are_not_owners_cannot_change_the_mode(team, who):
    api = native(token_of(getattr(team, who)))
    answer = api.patch("/api/v1/workspaces/acme/", {"analytics_privacy": "none"}, format="json")
    assert answer.status_code == 403
    assert Workspace.objects.get(slug="acme").analytics_privacy == ""


def test_outsiders_meet_404(team):
    api = native(token_of(team.outsider))
    answer = api.patch("/api/v1/workspaces/acme/", {"analytics_privacy": "none"}, format="json")
    assert answer.status_code == 404


def test_the_workspace_page_shows_the_mode_and_owners_change_it(team, settings):
    settings.ANALYTICS_PRIVACY = "truncated"
    owner = _page_client(team.owner)
    page = owner.get("/workspaces/acme/")
    assert b'data-testid="privacy-mode">truncated<' in page.content
    answer = owner.post("/workspaces/acme/", {"action": "privacy", "analytics_privacy": "none"})
    assert answer.status_code == 302
    page = owner.get(answer["Location"])
    assert b'data-testid="privacy-mode">none<' in page.content
    assert Workspace.objects.get(slug="acme").analytics_privacy == "none"


def test_the_page_offers_no_privacy_form_to_an_editor_and_refuses_their_post(team):
    editor = _page_client(team.editor)
    page = editor.get("/workspaces/acme/")
    assert b'data-testid="privacy-mode">' in page.content
    assert b'value="privacy"' not in page.content
    answer = editor.post("/workspaces/acme/", {"action": "privacy", "analytics_privacy": "full"})
    assert answer.status_code == 403
    assert Workspace.objects.get(slug="acme").analytics_privacy == ""


def test_staff_set_the_mode_in_the_admin(team, admin_client):
    workspace = Workspace.objects.get(slug="acme")
    form = admin_client.get(f"/admin/workspaces/workspace/{workspace.pk}/change/")
    assert b'name="analytics_privacy"' in form.content
    listing = admin_client.get("/admin/workspaces/workspace/?analytics_privacy__exact=none")
    assert listing.status_code == 200
