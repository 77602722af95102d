"""The tags page (/dashboard/tags/): every tag of the current workspace with its link count and
clicks, each opening its stats page and My links filtered by it; never another workspace's."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.services.create import link_create
from workspaces.models import Membership, Role
from workspaces.services import workspace_create

pytestmark = pytest.mark.django_db

PAGE = "/dashboard/tags/"


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def tagged(user, other_user):
    """The user's links: two tagged Spring (one also Mail, one archived), one Mail; another
    marketer's link under a Spring and a Secret tag of their own. Visits an hour and 40 days
    ago: all time counts both."""
    now = timezone.now()
    first = link_create(user=user, long_url="https://ex.com/1", tags=["Spring", "mail"]).link
    second = link_create(
        user=user, long_url="https://ex.com/2", tags=["spring"], archived=True
    ).link
    mail = link_create(user=user, long_url="https://ex.com/3", tags=["mail"]).link
    theirs = link_create(
        user=other_user, long_url="https://ex.com/4", tags=["Spring", "Secret"]
    ).link
    add_visits(first, 3, when=now - dt.timedelta(hours=1))
    add_visits(first, 1, when=now - dt.timedelta(days=40), bot=True)
    add_visits(second, 2, when=now - dt.timedelta(days=40))
    add_visits(mail, 5, when=now - dt.timedelta(hours=1))
    add_visits(theirs, 7, when=now - dt.timedelta(hours=1))
    return {"first": first, "second": second, "mail": mail, "theirs": theirs}


def _rows(response) -> list[tuple[str, int, int, int]]:
    return [
        (row["tag"].name, row["tag"].link_count, row["clicks"], row["bot_clicks"])
        for row in response.context["rows"]
    ]


def test_each_tag_of_the_workspace_with_its_links_and_all_time_clicks(logged_in, tagged):
    response = logged_in.get(PAGE)
    assert response.status_code == 200
    # A–Z; a link with two tags counts for both; the archived link is counted too.
    assert _rows(response) == [("mail", 2, 8, 1), ("Spring", 2, 5, 1)]
    html = response.content.decode()
    assert f'href="{reverse("tag_stats", args=["Spring"])}"' in html
    # My links filtered by the tag; archived links shown for the tag that has one.
    assert 'href="/dashboard/?tag=Spring&amp;archived=on"' in html
    assert 'href="/dashboard/?tag=mail"' in html
    # Renamed and deleted on the tag's page, where the tag management lives.
    assert 'href="/dashboard/tags/Spring/#tag-manage-heading"' in html
    assert 'data-testid="tag-clicks">8<' in html


def test_another_workspaces_tags_are_never_shown(client, user, other_user, staff_user, tagged):
    """Not the other marketer's (even a tag of the same name counts only this workspace's
    links), not a team's the user is not in, and staff see only their current workspace's."""
    client.force_login(user)
    html = client.get(PAGE).content.decode()
    assert "Secret" not in html
    assert 'data-testid="tag-clicks">7<' not in html  # their Spring link's clicks

    client.force_login(other_user)
    assert _rows(client.get(PAGE)) == [("Secret", 1, 7, 0), ("Spring", 1, 7, 0)]

    client.force_login(staff_user)
    response = client.get(PAGE)
    assert _rows(response) == []
    assert 'data-testid="tags-empty"' in response.content.decode()


def test_a_team_workspace_shows_its_own_tags_once_switched_to(client, user, other_user, tagged):
    team = workspace_create(user=other_user, name="Team")
    Membership.objects.create(workspace=team, user=user, role=Role.VIEWER)
    link_create(user=other_user, long_url="https://ex.com/team", tags=["launch"], workspace=team)
    client.force_login(user)
    client.post(reverse("workspace_switch"), {"workspace": team.slug})
    response = client.get(PAGE)
    assert _rows(response) == [("launch", 1, 0, 0)]
    html = response.content.decode()
    assert "The tags of the workspace" in html and "Team" in html
    # A viewer reads them; renaming and deleting are not offered.
    assert "tag-manage-link" not in html and "Rename or delete" not in html


def test_no_tags_yet_says_how_to_add_them(logged_in):
    response = logged_in.get(PAGE)
    html = response.content.decode()
    assert 'data-testid="tags-empty"' in html and "No tags yet." in html
    assert 'data-testid="tag-list"' not in html


def test_the_navigation_leads_here_and_strangers_sign_in_first(client, logged_in):
    assert f'href="{PAGE}">Tags</a>' in logged_in.get("/dashboard/").content.decode()
    logged_in.logout()
    response = client.get(PAGE)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_page_reads_in_a_few_queries_whatever_the_number_of_tags(
    logged_in, user, django_assert_max_num_queries
):
    for number in range(30):
        link = link_create(user=user, long_url=f"https://ex.com/{number}", tags=[f"t{number}"]).link
        add_visits(link, 1)
    logged_in.get(PAGE)  # the session's and workspace's first reads
    with django_assert_max_num_queries(6):
        response = logged_in.get(PAGE)
    assert len(response.context["rows"]) == 30
