"""Issue #15's tags, UTM values and archived links over HTTP against both deployments: a link
made with tags and UTM values, the list filtered by tag, a tag's stats summed over its links
with a visitor of both counted once, and an archived link hidden from the list but redirecting."""

from __future__ import annotations

import secrets

import harness
from harness import HTTP_TIMEOUT, get_fresh


def test_tags_and_utm_on_create_and_the_list_filtered_by_tag(deployment):
    tag = f"E2E-{secrets.token_hex(4)}"
    long_url = harness.unique_url("utm")  # …?run=<hex>
    link = harness.create_link(
        deployment, long_url, tags=[tag, "e2e-other"], utm_source="mail", utm_campaign="spring sale"
    )
    assert link["long_url"] == long_url + "&utm_source=mail&utm_campaign=spring%20sale", link
    assert sorted(link["tags"]) == sorted([tag, "e2e-other"]), link
    answer = get_fresh(deployment.port, f"/{link['code']}")
    assert (answer.status, answer.location) == (302, link["long_url"])

    untagged = harness.create_link(deployment, harness.unique_url("untagged"), title="x")
    assert harness.listed_codes(deployment, tag=tag.lower()) == {link["code"]}
    assert harness.listed_codes(deployment, tag=[tag, "E2E-OTHER"]) == {link["code"]}
    assert untagged["code"] not in harness.listed_codes(deployment, tag=tag)
    tags = {entry["name"]: entry["links"] for entry in harness.api_get(deployment, "/api/v1/tags/")}
    assert tags[tag] == 1, tags

    bad = None
    with deployment.api() as api:
        bad = api.post(
            deployment.url("/api/v1/links/"),
            json={"long_url": harness.unique_url("bad-tag"), "tags": ["a,b"]},
            timeout=HTTP_TIMEOUT,
        )
    assert bad.status_code == 400 and "comma" in bad.json()["tags"][0], bad.text


def test_tag_stats_sum_two_links_and_count_a_shared_visitor_once(deployment):
    tag = f"stats-{secrets.token_hex(4)}"
    first = harness.create_link(deployment, harness.unique_url("tag-a"), tags=[tag])["code"]
    second = harness.create_link(deployment, harness.unique_url("tag-b"), tags=[tag.upper()])[
        "code"
    ]
    shared = harness.visitor_headers(1)  # one person (IP + browser) visits both links
    for code, headers in ((first, shared), (first, harness.visitor_headers(2)), (second, shared)):
        answer = get_fresh(deployment.port, f"/{code}", headers)
        assert answer.status == 302, f"/{code} → {answer.status}"
    assert harness.wait_for_visits(deployment, first, 2, timeout=40).reached
    assert harness.wait_for_visits(deployment, second, 1, timeout=40).reached

    stats = harness.api_get(deployment, f"/api/v1/tags/{tag.upper()}/stats/")

    assert (stats["tag"], stats["links"]) == (tag, 2), stats
    assert stats["total_clicks"] == 3, stats
    assert stats["unique_visitors"] == 2, f"the shared visitor must count once: {stats}"
    assert sum(point["clicks"] for point in stats["series"]) == 3


def test_an_archived_link_leaves_the_list_and_still_redirects(deployment):
    long_url = harness.unique_url("archived")
    code = harness.create_link(deployment, long_url, title="to archive")["code"]
    for _ in range(3):  # cached by the workers before the change
        assert get_fresh(deployment.port, f"/{code}").location == long_url
    with deployment.api() as api:
        changed = api.patch(
            deployment.url(f"/api/v1/links/{code}/"), json={"archived": True}, timeout=HTTP_TIMEOUT
        )
    assert changed.status_code == 200 and changed.json()["archived"] is True, changed.text

    assert code not in harness.listed_codes(deployment)
    assert code in harness.listed_codes(deployment, archived="true")
    for _ in range(6):  # any worker
        answer = get_fresh(deployment.port, f"/{code}")
        assert (answer.status, answer.location) == (302, long_url)

    sess = harness.login(deployment, "demo", "demo")
    page = sess.get(deployment.url("/dashboard/"), timeout=HTTP_TIMEOUT).text
    assert f'data-code="{code}"' not in page
    page = sess.get(deployment.url("/dashboard/?archived=on"), timeout=HTTP_TIMEOUT).text
    assert f'data-code="{code}"' in page


def test_the_create_form_takes_tags_and_utm_values(deployment):
    sess = harness.login(deployment, "demo", "demo")
    home = sess.get(deployment.url("/"), timeout=HTTP_TIMEOUT).text
    assert 'id="advanced"' in home and 'name="utm_source"' in home
    tag = f"form-{secrets.token_hex(4)}"
    long_url = harness.unique_url("form-utm")
    response = harness.post_create_form(
        deployment, sess, home, long_url, tags=f"{tag}, second", utm_medium="email"
    )
    assert response.status_code == 302, response.text[:500]
    links = harness.api_get(deployment, "/api/v1/links/", tag=tag)["results"]
    assert len(links) == 1 and links[0]["long_url"] == long_url + "&utm_medium=email", links
    assert sorted(links[0]["tags"]) == sorted([tag, "second"])
