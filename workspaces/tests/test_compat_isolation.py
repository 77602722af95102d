"""Workspaces in the other shorteners' APIs (Shlink, YOURLS, Bitly): an API key acts for its
one workspace (creates land there; lookups, lists, stats and edits see nothing else), a viewer's
key reads but its writes get each API's own "forbidden", outsiders meet each API's not-found,
and a DRF token acts in every workspace of its user."""

from __future__ import annotations

import pytest
from django.test import Client

from links.models import UrlLink
from links.services.change import link_update
from workspaces.tests.helpers import key_of, token_of

pytestmark = pytest.mark.django_db

HOST = "testserver"


# --- Shlink ------------------------------------------------------------------------------------


def shlink(credential: str) -> Client:
    return Client(HTTP_X_API_KEY=credential)


def _shlink_codes(client: Client) -> set[str]:
    response = client.get("/rest/v3/short-urls")
    assert response.status_code == 200, response.content
    return {item["shortCode"] for item in response.json()["shortUrls"]["data"]}


def _problem(response, status: int, type_suffix: str | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    if type_suffix is not None:
        assert body["type"] == f"https://shlink.io/api/error/{type_suffix}"
    return body


def _shlink_create(client: Client, long_url: str):
    return client.post(
        "/rest/v3/short-urls", {"longUrl": long_url}, content_type="application/json"
    )


def _shlink_edit(client: Client, code: str, title: str):
    return client.patch(
        f"/rest/v3/short-urls/{code}", {"title": title}, content_type="application/json"
    )


def test_shlink_a_viewers_key_reads_the_workspace_but_writes_are_forbidden(team):
    client = shlink(key_of(team.viewer, workspace="acme"))
    assert _shlink_codes(client) == {"acme-sale"}
    assert client.get("/rest/v3/short-urls/acme-sale").json()["shortCode"] == "acme-sale"
    assert client.get("/rest/v3/short-urls/acme-sale/visits").status_code == 200
    for response in (
        _shlink_create(client, "https://example.com/v"),
        _shlink_edit(client, "acme-sale", "Mine"),
        client.delete("/rest/v3/short-urls/acme-sale"),
    ):
        body = _problem(response, 403)
        assert "Viewers of the workspace 'acme'" in body["detail"]
    team.link.refresh_from_db()
    assert team.link.title == "" and team.link.revoked_at is None


def test_shlink_outsiders_get_short_url_not_found(team):
    client = shlink(key_of(team.outsider))
    assert "acme-sale" not in _shlink_codes(client)
    for response in (
        client.get("/rest/v3/short-urls/acme-sale"),
        client.get("/rest/v3/short-urls/acme-sale/visits"),
        _shlink_edit(client, "acme-sale", "x"),
        client.delete("/rest/v3/short-urls/acme-sale"),
    ):
        _problem(response, 404, "short-url-not-found")


def test_shlink_an_editors_key_creates_changes_and_deletes_in_its_workspace(team):
    client = shlink(key_of(team.editor, workspace="acme"))
    made = _shlink_create(client, "https://example.com/e")
    assert made.status_code == 200, made.content
    assert UrlLink.objects.get(code=made.json()["shortCode"]).workspace == team.workspace
    assert _shlink_edit(client, "acme-sale", "Edited").json()["title"] == "Edited"
    assert client.delete("/rest/v3/short-urls/acme-sale").status_code == 204


def test_shlink_a_pinned_key_cannot_reach_another_workspace_of_its_user(team):
    link_update(code="acme-sale", user=team.owner, tags=["launch"])
    link_update(code="own-note", user=team.owner, tags=["private"])
    client = shlink(key_of(team.owner))  # personal
    assert _shlink_codes(client) == {"own-note"}
    for response in (
        client.get("/rest/v3/short-urls/acme-sale"),
        client.get("/rest/v3/short-urls/acme-sale/visits"),
        _shlink_edit(client, "acme-sale", "x"),
        client.delete("/rest/v3/short-urls/acme-sale"),
    ):
        _problem(response, 404, "short-url-not-found")
    assert client.get("/rest/v3/tags").json()["tags"]["data"] == ["private"]
    stats = client.get("/rest/v3/tags/stats").json()["tags"]["data"]
    assert [(t["tag"], t["shortUrlsCount"]) for t in stats] == [("private", 1)]
    made = _shlink_create(client, "https://example.com/k")
    assert UrlLink.objects.get(code=made.json()["shortCode"]).workspace == team.personal
    team_key = shlink(key_of(team.owner, workspace="acme"))
    assert _shlink_codes(team_key) == {"acme-sale"}
    assert team_key.get("/rest/v3/tags").json()["tags"]["data"] == ["launch"]


def test_shlink_a_token_acts_in_every_workspace(team):
    client = shlink(token_of(team.owner))
    assert _shlink_codes(client) == {"acme-sale", "own-note"}
    assert client.get("/rest/v3/short-urls/acme-sale").status_code == 200
    assert _shlink_edit(client, "acme-sale", "T").status_code == 200
    made = _shlink_create(client, "https://example.com/t")
    assert UrlLink.objects.get(code=made.json()["shortCode"]).workspace == team.personal


# --- YOURLS ------------------------------------------------------------------------------------


def yourls(credential: str, **params):
    return Client().get("/yourls-api.php", {"format": "json", "signature": credential, **params})


def test_yourls_a_viewers_key_reads_but_cannot_shorten(team):
    key = key_of(team.viewer, workspace="acme")
    assert yourls(key, action="expand", shorturl="acme-sale").json()["longurl"] == (
        team.link.long_url
    )
    assert yourls(key, action="url-stats", shorturl="acme-sale").json()["statusCode"] == 200
    refused = yourls(key, action="shorturl", url="https://example.com/v")
    assert refused.status_code == 403
    body = refused.json()
    assert body["errorCode"] == 403
    assert "Viewers of the workspace 'acme'" in body["message"]
    assert not UrlLink.objects.filter(long_url="https://example.com/v").exists()


def test_yourls_outsiders_get_not_found(team):
    key = key_of(team.outsider)
    assert yourls(key, action="expand", shorturl="acme-sale").json()["errorCode"] == 404
    assert yourls(key, action="url-stats", shorturl="acme-sale").json()["statusCode"] == 404


def test_yourls_an_editors_key_shortens_into_its_workspace(team):
    made = yourls(
        key_of(team.editor, workspace="acme"), action="shorturl", url="https://example.com/e"
    )
    assert made.json()["status"] == "success"
    link = UrlLink.objects.get(code=made.json()["url"]["keyword"])
    assert link.workspace == team.workspace


def test_yourls_a_pinned_key_cannot_reach_another_workspace_of_its_user(team):
    key = key_of(team.owner)  # personal
    assert yourls(key, action="expand", shorturl="acme-sale").json()["errorCode"] == 404
    assert yourls(key, action="url-stats", shorturl="acme-sale").json()["statusCode"] == 404
    assert yourls(key, action="db-stats").json()["db-stats"]["total_links"] == "1"
    ranked = yourls(key, action="stats", filter="last").json()["links"]
    assert [entry["shorturl"].rsplit("/", 1)[-1] for entry in ranked.values()] == ["own-note"]
    team_key = key_of(team.owner, workspace="acme")
    assert yourls(team_key, action="db-stats").json()["db-stats"]["total_links"] == "1"
    made = yourls(key, action="shorturl", url="https://example.com/k").json()
    assert UrlLink.objects.get(code=made["url"]["keyword"]).workspace == team.personal


def test_yourls_a_token_acts_in_every_workspace(team):
    token = token_of(team.owner)
    assert yourls(token, action="expand", shorturl="acme-sale").json()["longurl"] == (
        team.link.long_url
    )
    assert yourls(token, action="db-stats").json()["db-stats"]["total_links"] == "2"


# --- Bitly -------------------------------------------------------------------------------------


def bitly(credential: str, method: str, path: str, body: dict | None = None):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {credential}")
    if method in ("post", "patch"):
        return getattr(client, method)(f"/v4/{path}", body or {}, content_type="application/json")
    return getattr(client, method)(f"/v4/{path}")


ACME = f"bitlinks/{HOST}/acme-sale"


def test_bitly_a_viewers_key_reads_but_writes_are_forbidden(team):
    key = key_of(team.viewer, workspace="acme")
    assert bitly(key, "get", ACME).status_code == 200
    assert bitly(key, "get", f"{ACME}/clicks").status_code == 200
    assert bitly(key, "post", "expand", {"bitlink_id": f"{HOST}/acme-sale"}).status_code == 200
    for response in (
        bitly(key, "patch", ACME, {"title": "Mine"}),
        bitly(key, "post", "shorten", {"long_url": "https://example.com/v"}),
        bitly(key, "post", "bitlinks", {"long_url": "https://example.com/v"}),
    ):
        assert response.status_code == 403, response.content
        body = response.json()
        assert body["message"] == "FORBIDDEN"
        assert "Viewers of the workspace 'acme'" in body["description"]
    team.link.refresh_from_db()
    assert team.link.title == ""


def test_bitly_outsiders_get_not_found(team):
    key = key_of(team.outsider)
    for response in (
        bitly(key, "get", ACME),
        bitly(key, "patch", ACME, {"title": "x"}),
        bitly(key, "get", f"{ACME}/clicks"),
        bitly(key, "get", f"{ACME}/clicks/summary"),
        bitly(key, "post", "expand", {"bitlink_id": f"{HOST}/acme-sale"}),
    ):
        assert response.status_code == 404, response.content
        assert response.json()["message"] == "NOT_FOUND"


def test_bitly_an_editors_key_creates_and_changes_in_its_workspace(team):
    key = key_of(team.editor, workspace="acme")
    made = bitly(key, "post", "shorten", {"long_url": "https://example.com/e"})
    assert made.status_code == 201, made.content
    code = made.json()["id"].rsplit("/", 1)[-1]
    assert UrlLink.objects.get(code=code).workspace == team.workspace
    assert bitly(key, "patch", ACME, {"title": "Edited"}).json()["title"] == "Edited"


def test_bitly_a_pinned_key_cannot_reach_another_workspace_of_its_user(team):
    key = key_of(team.owner)  # personal
    for response in (
        bitly(key, "get", ACME),
        bitly(key, "patch", ACME, {"title": "x"}),
        bitly(key, "get", f"{ACME}/clicks"),
        bitly(key, "get", f"{ACME}/clicks/summary"),
    ):
        assert response.status_code == 404, response.content
    assert bitly(key, "get", f"bitlinks/{HOST}/own-note").status_code == 200
    made = bitly(key, "post", "shorten", {"long_url": "https://example.com/k"})
    code = made.json()["id"].rsplit("/", 1)[-1]
    assert UrlLink.objects.get(code=code).workspace == team.personal


def test_bitly_a_token_acts_in_every_workspace(team):
    token = token_of(team.owner)
    assert bitly(token, "get", ACME).status_code == 200
    assert bitly(token, "patch", ACME, {"title": "T"}).status_code == 200
