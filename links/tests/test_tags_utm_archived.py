"""Tags, UTM values and archived links (#15): the services' rules and the API contract."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.models import Tag, UrlLink
from links.services.bulk import link_create_many
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.tags import clean_tags
from links.services.utm import merge_utm, utm_in_url
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(user):
    return client_for(user)


def _tags(link: UrlLink) -> list[str]:
    return sorted(link.tags.values_list("name", flat=True))


# --- UTM ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "utm", "merged"),
    [
        ("https://ex.com/p", {"utm_source": "news"}, "https://ex.com/p?utm_source=news"),
        # The existing query is kept as written, new keys follow in the documented order.
        (
            "https://ex.com/p?b=2&a=x%20y",
            {"utm_medium": "email", "utm_source": "nl"},
            "https://ex.com/p?b=2&a=x%20y&utm_source=nl&utm_medium=email",
        ),
        # A given key replaces the same key where it stands; its repeats go.
        (
            "https://ex.com/?utm_source=old&x=1&utm_source=older",
            {"utm_source": "new"},
            "https://ex.com/?utm_source=new&x=1",
        ),
        # The fragment stays last; values are percent-encoded.
        (
            "https://ex.com/p?x=1#top",
            {"utm_campaign": "spring sale & more"},
            "https://ex.com/p?x=1&utm_campaign=spring%20sale%20%26%20more#top",
        ),
        ("https://ex.com/p", {}, "https://ex.com/p"),
    ],
)
def test_merge_utm_keeps_the_query_and_replaces_given_keys(url, utm, merged):
    assert merge_utm(url, utm) == merged


@pytest.mark.parametrize(
    ("url", "values"),
    [
        ("https://ex.com/p", {}),
        ("https://ex.com/p?x=1#utm_source=no", {}),
        (
            "https://ex.com/?utm_source=old&x=1&utm_source=older&utm_term=running+shoes",
            {"utm_source": "old", "utm_term": "running shoes"},
        ),
        (
            "https://ex.com/p?x=1&utm_campaign=spring%20sale%20%26%20more#top",
            {"utm_campaign": "spring sale & more"},
        ),
    ],
)
def test_utm_in_url_reads_what_merge_utm_wrote(url, values):
    assert utm_in_url(url) == values
    assert utm_in_url(merge_utm(url, values)) == values


def test_create_merges_utm_values_and_ignores_empty_ones(user):
    link = link_create(
        user=user,
        long_url="https://shop.example.com/sale?ref=a",
        utm={"utm_source": " newsletter ", "utm_medium": "", "utm_campaign": "spring"},
    ).link

    assert (
        link.long_url
        == "https://shop.example.com/sale?ref=a&utm_source=newsletter&utm_campaign=spring"
    )


def test_update_merges_utm_into_the_current_url(user):
    link = link_create(user=user, long_url="https://ex.com/p?utm_source=a&k=v").link

    link_update(code=link.code, user=user, utm={"utm_source": "b", "utm_term": "shoes"})

    link.refresh_from_db()
    assert link.long_url == "https://ex.com/p?utm_source=b&k=v&utm_term=shoes"


def test_a_too_long_utm_value_is_refused_by_name(user):
    with pytest.raises(ValidationError) as refusal:
        link_create(user=user, long_url="https://ex.com/", utm={"utm_content": "x" * 201})
    assert "utm_content" in refusal.value.message_dict


# --- Tags: rules -------------------------------------------------------------------------------


def test_tags_are_trimmed_and_each_kept_once_whatever_the_case():
    assert clean_tags([" Spring ", "spring", "News", "SPRING"]) == ["Spring", "News"]


@pytest.mark.parametrize(
    ("tags", "words"),
    [
        (["a,b"], "comma"),
        (["x" * 51], "at most 50"),
        ([f"t{i}" for i in range(21)], "at most 20 tags"),
        ([""], "empty"),
        ("spring", "list"),
    ],
)
def test_bad_tags_are_refused_with_a_reason(tags, words):
    with pytest.raises(ValidationError) as refusal:
        clean_tags(tags)
    assert words in " ".join(refusal.value.message_dict["tags"])


def test_tags_are_the_workspaces_and_one_per_name_whatever_the_case(user, other_user):
    first = link_create(user=user, long_url="https://ex.com/1", tags=["Spring"]).link
    second = link_create(user=user, long_url="https://ex.com/2", tags=["SPRING", "news"]).link
    theirs = link_create(user=other_user, long_url="https://ex.com/3", tags=["spring"]).link

    assert _tags(first) == ["Spring"]
    assert _tags(second) == ["Spring", "news"]  # the name as first typed
    assert Tag.objects.filter(workspace__personal_for=user).count() == 2
    assert Tag.objects.get(workspace__personal_for=other_user).links.get() == theirs


def test_a_tagged_create_is_not_answered_with_the_plain_link(user):
    plain = link_create(user=user, long_url="https://ex.com/same").link

    tagged = link_create(user=user, long_url="https://ex.com/same", tags=["x"])

    assert tagged.created and tagged.link != plain


def test_update_replaces_the_tags(user):
    link = link_create(user=user, long_url="https://ex.com/1", tags=["a", "b"]).link

    link_update(code=link.code, user=user, tags=["c", "A"])
    assert _tags(link) == ["a", "c"]  # the existing tag "a", not a second one

    link_update(code=link.code, user=user, tags=[])
    assert _tags(link) == []


def test_bulk_items_take_tags_utm_and_archived(user):
    results = link_create_many(
        user=user,
        items=[
            {"long_url": "https://ex.com/1", "tags": ["Bulk", "x"]},
            {"long_url": "https://ex.com/2", "tags": ["bulk"], "utm": {"utm_source": "csv"}},
            {"long_url": "https://ex.com/3", "archived": True},
            {"long_url": "https://ex.com/4", "tags": ["a,b"]},
        ],
    )

    assert _tags(results[0].link) == ["Bulk", "x"]
    assert _tags(results[1].link) == ["Bulk"]
    assert results[1].link.long_url == "https://ex.com/2?utm_source=csv"
    assert UrlLink.objects.get(pk=results[2].link.pk).archived
    assert "tags" in results[3].errors
    assert Tag.objects.filter(workspace__personal_for=user).count() == 2


# --- Archived ----------------------------------------------------------------------------------


def test_archive_and_tags_may_change_on_a_revoked_link(user):
    link = link_create(user=user, long_url="https://ex.com/r").link
    link_revoke(code=link.code, user=user)

    link_update(code=link.code, user=user, archived=True, tags=["old"])

    link.refresh_from_db()
    assert link.archived and _tags(link) == ["old"] and link.revoked_at is not None


# --- API ---------------------------------------------------------------------------------------


def test_api_create_with_tags_and_utm_shows_them(api):
    response = api.post(
        "/api/v1/links/",
        {
            "long_url": "https://ex.com/p?x=1",
            "tags": ["Spring", "news"],
            "utm_source": "nl",
            "utm_campaign": "spring",
        },
        format="json",
    )

    assert response.status_code == 201
    body = response.json()
    assert body["tags"] == ["news", "Spring"]  # A–Z, any case
    assert body["long_url"] == "https://ex.com/p?x=1&utm_source=nl&utm_campaign=spring"
    assert body["archived"] is False
    assert "utm_source" not in body  # write-only


def test_api_refuses_bad_tags_with_a_400(api):
    response = api.post(
        "/api/v1/links/", {"long_url": "https://ex.com/", "tags": ["a,b", 3]}, format="json"
    )

    assert response.status_code == 400
    assert "tags" in response.json()


def test_api_patch_replaces_tags_and_archives(api, user):
    link = link_create(user=user, long_url="https://ex.com/1", tags=["a"]).link

    body = api.patch(
        f"/api/v1/links/{link.code}/", {"tags": ["b"], "archived": True}, format="json"
    ).json()

    assert body["tags"] == ["b"] and body["archived"] is True


def test_api_list_filters_by_every_tag_given(api, user):
    both = link_create(user=user, long_url="https://ex.com/1", tags=["Spring", "mail"]).link
    link_create(user=user, long_url="https://ex.com/2", tags=["spring"])
    link_create(user=user, long_url="https://ex.com/3")

    def codes(query):
        return {item["code"] for item in api.get(f"/api/v1/links/{query}").json()["results"]}

    assert len(codes("?tag=SPRING")) == 2
    assert codes("?tag=spring&tag=MAIL") == {both.code}
    assert codes("?tag=nothing") == set()


def test_api_list_leaves_out_the_links_with_any_excluded_tag(api, user):
    both = link_create(user=user, long_url="https://ex.com/1", tags=["Spring", "mail"]).link
    spring = link_create(user=user, long_url="https://ex.com/2", tags=["spring"]).link
    bare = link_create(user=user, long_url="https://ex.com/3").link

    def codes(query):
        response = api.get(f"/api/v1/links/{query}")
        assert response.status_code == 200, response.content
        return {item["code"] for item in response.json()["results"]}

    assert codes("?exclude_tag=MAIL") == {spring.code, bare.code}
    assert codes("?exclude_tag=mail&exclude_tag=spring") == {bare.code}
    assert codes("?tag=spring&exclude_tag=mail") == {spring.code}
    assert codes("?exclude_tag=nothing") == {both.code, spring.code, bare.code}


def test_api_list_hides_archived_links_unless_asked(api, user):
    kept = link_create(user=user, long_url="https://ex.com/1").link
    archived = link_create(user=user, long_url="https://ex.com/2", archived=True).link

    def codes(query=""):
        return {item["code"] for item in api.get(f"/api/v1/links/{query}").json()["results"]}

    assert codes() == {kept.code}
    assert codes("?archived=true") == {kept.code, archived.code}
    assert api.get(f"/api/v1/links/{archived.code}/").json()["archived"] is True


def test_api_tags_lists_the_callers_tags_with_link_counts(api, user, other_user):
    link_create(user=user, long_url="https://ex.com/1", tags=["Spring", "mail"])
    link_create(user=user, long_url="https://ex.com/2", tags=["spring"])
    link_create(user=other_user, long_url="https://ex.com/3", tags=["theirs"])

    response = api.get("/api/v1/tags/")

    assert response.status_code == 200
    assert response.json() == [{"name": "mail", "links": 1}, {"name": "Spring", "links": 2}]


def test_api_tag_stats_sum_the_links_and_count_a_shared_visitor_once(api, user):
    first = link_create(user=user, long_url="https://ex.com/1", tags=["campaign"]).link
    second = link_create(user=user, long_url="https://ex.com/2", tags=["Campaign"]).link
    other = link_create(user=user, long_url="https://ex.com/3").link
    when = timezone.now() - timedelta(hours=1)
    add_visits(first, 2, when=when)
    add_visits(first, 1, when=when, client_id="shared")
    add_visits(second, 1, when=when, client_id="shared")
    add_visits(other, 5, when=when)

    response = api.get("/api/v1/tags/CAMPAIGN/stats/")

    assert response.status_code == 200
    body = response.json()
    assert body["tag"] == "campaign" and body["links"] == 2
    assert body["total_clicks"] == 4
    assert body["unique_visitors"] == 3  # "shared" visited both links: one person
    assert sum(point["clicks"] for point in body["series"]) == 4
    assert body["countries"][0]["clicks"] == 4


def test_api_tag_stats_of_an_unknown_tag_is_404(api, other_user):
    link_create(user=other_user, long_url="https://ex.com/3", tags=["theirs"])

    response = api.get("/api/v1/tags/theirs/stats/")

    assert response.status_code == 404
    assert "detail" in response.json()


def test_archived_link_still_redirects(client, user):
    link = link_create(user=user, long_url="https://ex.com/still", archived=True).link

    response = client.get(f"/{link.code}")

    assert response.status_code == 302
    assert response["Location"] == "https://ex.com/still"


def test_factory_links_are_not_archived(user):
    assert UrlLinkFactory(owner=user).archived is False
