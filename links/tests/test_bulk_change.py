"""PATCH /api/v1/links/bulk/ and link_change_many: one change for many links, by the rules one
link's change follows, answered per code."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from links.models import UrlLink
from links.services.bulk_change import link_change_many
from links.services.domains import domain_save
from links.services.tags import MAX_TAGS_PER_LINK
from links.tests.factories import UrlLinkFactory, UserFactory
from links.tests.helpers import call_wsgi, client_for, tag_names, tagged_link
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = [pytest.mark.django_db, pytest.mark.backends]
BULK = "/api/v1/links/bulk/"


@pytest.fixture
def api(user):
    return client_for(user)


@pytest.fixture
def viewed(user, other_user):
    """A team of other_user's in which `user` is only a viewer, with one link."""
    team = workspace_create(user=other_user, name="Rivals", slug="rivals")
    member_add(by=other_user, workspace=team, username=user.username, role=Role.VIEWER)
    return UrlLinkFactory(owner=other_user, workspace=team, alias="viewed-only")


def patch(api, codes, changes):
    return api.patch(BULK, {"codes": codes, "set": changes}, format="json")


def test_each_code_is_answered_changed_unchanged_or_refused_with_the_reason(
    api, user, other_user, viewed
):
    mine = [UrlLinkFactory(owner=user) for _ in range(3)]
    UrlLinkFactory(owner=user, archived=True, alias="was-archived")
    theirs = UrlLinkFactory(owner=other_user, alias="not-yours")

    codes = [
        mine[0].code,
        "was-archived",
        theirs.code,
        viewed.code,
        "nosuchcode",
        *[link.code for link in mine[1:]],
    ]
    response = patch(api, [*codes, mine[0].code], {"archived": True})

    assert response.status_code == 200
    body = response.json()
    assert (body["changed"], body["unchanged"], body["refused"]) == (3, 1, 3)
    results = {result["code"]: result for result in body["results"]}
    assert [result["code"] for result in body["results"]] == codes  # once each, in order
    assert results["was-archived"] == {
        "code": "was-archived",
        "outcome": "unchanged",
        "errors": None,
    }
    assert results["not-yours"]["errors"] == {"code": ["No link with this code."]}
    assert results["nosuchcode"]["errors"] == {"code": ["No link with this code."]}
    assert results["viewed-only"]["outcome"] == "refused"
    assert "Viewers of the workspace 'rivals'" in results["viewed-only"]["errors"]["code"][0]
    assert all(UrlLink.objects.get(pk=link.pk).archived for link in mine)
    assert not UrlLink.objects.get(pk=theirs.pk).archived
    assert not UrlLink.objects.get(pk=viewed.pk).archived


# The redirect runs as the server runs it: its own connection, outside a test transaction.
@pytest.mark.django_db(transaction=True)
def test_a_bulk_revoke_answers_410_at_once_even_for_a_cached_link(api, user):
    links = [UrlLinkFactory(owner=user) for _ in range(3)]
    for link in links:  # the redirect has cached each entry
        assert call_wsgi(f"/{link.code}")[0].startswith("302")

    body = patch(api, [link.code for link in links], {"revoked": True}).json()

    assert body["changed"] == 3
    for link in links:
        assert call_wsgi(f"/{link.code}")[0].startswith("410")
    # A revoke is final: again, nothing changes; a new expiry is refused per code.
    assert patch(api, [links[0].code], {"revoked": True}).json()["unchanged"] == 1
    later = (timezone.now() + timedelta(days=3)).isoformat()
    refused = patch(api, [links[0].code], {"expires_at": later}).json()["results"][0]
    assert refused["outcome"] == "refused"
    assert "revoked" in refused["errors"]["expires_at"][0]


def test_a_revoke_keeps_an_earlier_expiry(user):
    soon = timezone.now() + timedelta(hours=1)
    link = UrlLinkFactory(owner=user, expires_at=timezone.now() - timedelta(days=1))
    other = UrlLinkFactory(owner=user, expires_at=soon)

    link_change_many(user=user, codes=[link.code, other.code], changes={"revoked": True})

    link.refresh_from_db()
    other.refresh_from_db()
    assert link.revoked_at is not None and link.expires_at < link.revoked_at
    assert other.revoked_at is not None and other.expires_at == other.revoked_at


# The redirect runs as the server runs it: its own connection, outside a test transaction.
@pytest.mark.django_db(transaction=True)
def test_a_new_expiry_follows_the_schedule_rule_per_link(api, user):
    now = timezone.now()
    starts_late = UrlLinkFactory(owner=user, valid_since=now + timedelta(days=10))
    plain = UrlLinkFactory(owner=user)
    expiry = now + timedelta(days=5)

    body = patch(api, [starts_late.code, plain.code], {"expires_at": expiry.isoformat()}).json()

    assert [result["outcome"] for result in body["results"]] == ["refused", "changed"]
    assert list(body["results"][0]["errors"]) == ["expires_at"]
    plain.refresh_from_db()
    starts_late.refresh_from_db()
    assert plain.expires_at == expiry
    assert starts_late.expires_at is None
    assert call_wsgi(f"/{plain.code}")[0].startswith("302")


def test_tags_are_replaced_or_added_and_the_tag_limit_holds_per_link(api, user):
    full = tagged_link(user, 1, [f"t{n}" for n in range(MAX_TAGS_PER_LINK)])
    few = tagged_link(user, 2, ["Spring"])

    body = patch(api, [full.code, few.code], {"add_tags": ["spring", "launch"]}).json()

    assert [result["outcome"] for result in body["results"]] == ["refused", "changed"]
    assert "at most 20 tags" in body["results"][0]["errors"]["add_tags"][0]
    assert tag_names(few) == ["Spring", "launch"]  # one tag whatever its case
    assert len(tag_names(full)) == MAX_TAGS_PER_LINK

    body = patch(api, [full.code, few.code], {"tags": ["summer"]}).json()
    assert body["changed"] == 2
    assert tag_names(full) == tag_names(few) == ["summer"]
    assert patch(api, [few.code], {"tags": ["summer"]}).json()["unchanged"] == 1
    # The same tags in another case are the same tags: nothing changes, nothing is announced.
    assert patch(api, [few.code], {"tags": ["SUMMER"]}).json()["unchanged"] == 1
    assert tag_names(few) == ["summer"]


def test_links_move_only_between_workspaces_the_user_writes_in(api, user, other_user, viewed):
    team = workspace_create(user=user, name="Team", slug="team")
    kept = workspace_create(user=other_user, name="Kept", slug="kept")
    member_add(by=other_user, workspace=kept, username=user.username, role=Role.EDITOR)
    mine = tagged_link(user, 1, ["Spring"])
    domain = domain_save(host="go.example.com", workspace=team)
    on_teams_domain = UrlLinkFactory(owner=user, workspace=team, domain=domain)

    body = patch(api, [mine.code, on_teams_domain.code], {"workspace": "kept"}).json()

    assert [result["outcome"] for result in body["results"]] == ["changed", "refused"]
    assert "kept for another workspace" in body["results"][1]["errors"]["workspace"][0]
    mine.refresh_from_db()
    assert mine.workspace_id == kept.pk
    # Its tags' names came along, as the new workspace's tags.
    assert list(mine.tags.values_list("name", "workspace_id")) == [("Spring", kept.pk)]
    # Into a workspace the user only views: the whole call is refused.
    response = patch(api, [mine.code], {"workspace": "rivals"})
    assert response.status_code == 403
    response = patch(api, [mine.code], {"workspace": "nowhere"})
    assert response.status_code == 400
    assert "workspace" in response.json()["set"]
    mine.refresh_from_db()
    assert mine.workspace_id == kept.pk


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"codes": ["a" * 7] * 2 + [f"c{n}" for n in range(1001)], "set": {"archived": True}},
            "codes",
        ),
        ({"codes": [], "set": {"archived": True}}, "codes"),
        ({"codes": "abc", "set": {"archived": True}}, "codes"),
        ({"codes": ["abc"]}, "set"),
        ({"codes": ["abc"], "set": {}}, "set"),
        ({"codes": ["abc"], "set": {"colour": "red"}}, "set"),
        ({"codes": ["abc"], "set": {"archived": "yes"}}, "set"),
        ({"codes": ["abc"], "set": {"revoked": False}}, "set"),
        ({"codes": ["abc"], "set": {"expires_at": "2001-01-01T00:00:00Z"}}, "set"),
        ({"codes": ["abc"], "set": {"tags": ["a,b"]}}, "set"),
        ({"codes": ["abc"], "set": {"tags": ["a"], "add_tags": ["b"]}}, "set"),
    ],
)
def test_a_malformed_call_is_refused_whole_naming_the_field(api, user, body, field):
    link = UrlLinkFactory(owner=user, alias="abc")

    response = api.patch(BULK, body, format="json")

    assert response.status_code == 400
    assert field in response.json()
    link.refresh_from_db()
    assert not link.archived and link.revoked_at is None


def test_a_key_pinned_to_a_workspace_changes_nothing_outside_it(user):
    from accounts.services import api_key_create

    team = workspace_create(user=user, name="Team", slug="team")
    mine = UrlLinkFactory(owner=user)
    teams = UrlLinkFactory(owner=user, workspace=team)
    _, raw = api_key_create(user=user, name="personal only")  # pinned to the personal one
    client = client_for(user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")

    body = patch(client, [mine.code, teams.code], {"archived": True}).json()

    assert [result["outcome"] for result in body["results"]] == ["changed", "refused"]
    assert not UrlLink.objects.get(pk=teams.pk).archived
    # Nor may it move its links out of it.
    assert patch(client, [mine.code], {"workspace": "team"}).status_code == 400


def test_queries_do_not_grow_with_the_number_of_links(user):
    def queries_for(n: int) -> int:
        links = [tagged_link(user, 1000 * n + i, ["old"]) for i in range(n)]
        with CaptureQueriesContext(connection) as captured:
            results = link_change_many(
                user=user,
                codes=[link.code for link in links],
                changes={"add_tags": ["new"], "archived": True},
            )
        assert {result.outcome for result in results} == {"changed"}
        return len(captured)

    queries_for(2)  # once per process: the domain table, the permission cache
    assert queries_for(3) == queries_for(30)


def test_staff_who_may_change_every_link_change_anyones(staff_user, other_user):
    theirs = UrlLinkFactory(owner=other_user)
    looker = UserFactory(username="looker", is_staff=True)  # staff without the permission
    assert (
        link_change_many(user=looker, codes=[theirs.code], changes={"archived": True})[0].outcome
        == "refused"
    )

    result = link_change_many(user=staff_user, codes=[theirs.code], changes={"archived": True})

    assert result[0].outcome == "changed"
    assert UrlLink.objects.get(pk=theirs.pk).archived


# --- My links' bulk bar and the admin's actions: the same service ------------------------------

BAR = "/dashboard/bulk/"


def test_my_links_bar_changes_the_ticked_links_and_shows_each_refusal(client, user, other_user):
    client.force_login(user)
    mine = [tagged_link(user, n, ["old"]) for n in range(2)]
    theirs = UrlLinkFactory(owner=other_user, alias="not-mine")
    page = client.get("/dashboard/").content.decode()
    assert 'id="bulk-form"' in page and f'name="ids" value="{mine[0].pk}"' in page

    response = client.post(
        BAR,
        {
            "action": "add_tags",
            "tags": "spring, <b>launch</b>",
            "ids": [mine[0].pk, mine[1].pk, theirs.pk],
            "next": "/dashboard/?q=x",
        },
    )

    assert response.status_code == 200
    text = response.content.decode()
    assert "<strong>2</strong> links changed" in text
    assert f"<code>{theirs.pk}</code>" in text and "No link with this code." in text
    assert 'href="/dashboard/?q=x"' in text
    assert tag_names(mine[0]) == ["<b>launch</b>", "old", "spring"]
    assert not theirs.tags.exists()


# The redirect runs as the server runs it: its own connection, outside a test transaction.
@pytest.mark.django_db(transaction=True)
def test_my_links_bar_asks_before_revoking(client, user):
    client.force_login(user)
    link = UrlLinkFactory(owner=user)

    asked = client.post(BAR, {"action": "revoke", "ids": [link.pk]})

    assert asked.status_code == 200
    assert "This cannot be undone." in asked.content.decode()
    assert UrlLink.objects.get(pk=link.pk).revoked_at is None
    done = client.post(BAR, {"action": "revoke", "ids": [link.pk], "confirm": "1"})
    assert "<strong>1</strong> link changed" in done.content.decode()
    assert call_wsgi(f"/{link.code}")[0].startswith("410")


def test_my_links_bar_refuses_a_bad_call_and_changes_nothing(client, user):
    client.force_login(user)
    link = UrlLinkFactory(owner=user)

    nothing_ticked = client.post(BAR, {"action": "archive"}, follow=True)
    assert "Tick the links to change first." in nothing_ticked.content.decode()
    past = client.post(
        BAR,
        {"action": "set_expiry", "expires_at": "2001-01-01T10:00", "ids": [link.pk]},
        follow=True,
    )
    assert "Nothing was changed: The expiry must be in the future." in past.content.decode()
    assert client.get(BAR).status_code == 405
    link.refresh_from_db()
    assert link.expires_at is None


def test_the_admin_actions_go_through_the_same_rules(admin_client, user):
    links = [tagged_link(user, n, ["old"]) for n in range(2)]
    revoked = UrlLinkFactory(owner=user, revoked=True)
    selected = [link.pk for link in [*links, revoked]]
    changelist = "/admin/links/urllink/"

    admin_client.post(
        changelist,
        {"action": "add_link_tags", "_selected_action": selected, "tags": "spring"},
        follow=True,
    )
    assert [tag_names(link) for link in links] == [["old", "spring"]] * 2
    later = (timezone.localtime() + timedelta(days=2)).strftime("%Y-%m-%d %H:%M")
    response = admin_client.post(
        changelist,
        {"action": "set_link_expiry", "_selected_action": selected, "expires_at": later},
        follow=True,
    )
    text = response.content.decode()
    assert "Changed the expiry of 2 link(s)." in text
    assert f"Left {revoked.code} as it was: {revoked.code} was revoked" in text
    assert all(UrlLink.objects.get(pk=link.pk).expires_at is not None for link in links)
    admin_client.post(changelist, {"action": "archive_links", "_selected_action": selected})
    assert UrlLink.objects.filter(pk__in=selected, archived=True).count() == 3
