"""Renaming and deleting a tag over HTTP against both deployments: after a rename the tag list
and the `?tag=` filter follow the new name (the old one finds nothing); after a delete the links
stay, carry no tag and still redirect, from every worker."""

from __future__ import annotations

import secrets
from urllib.parse import quote

import harness
from harness import HTTP_TIMEOUT, get_fresh


def _tags(dep: harness.Deployment) -> dict[str, int]:
    return {entry["name"]: entry["links"] for entry in harness.api_get(dep, "/api/v1/tags/")}


def test_rename_then_delete_a_tag_and_its_links_keep_redirecting(deployment):
    old, new = f"e2e-old {secrets.token_hex(4)}", f"E2E New/{secrets.token_hex(4)}"
    links = [
        harness.create_link(deployment, harness.unique_url(f"tag-manage-{n}"), tags=[old, "keep"])
        for n in range(2)
    ]
    codes = {link["code"] for link in links}
    for link in links:  # cached by the workers before the changes
        answer = get_fresh(deployment.port, f"/{link['code']}")
        assert (answer.status, answer.location) == (302, link["long_url"])

    with deployment.api() as api:
        renamed = api.patch(
            deployment.url(f"/api/v1/tags/{quote(old.upper(), safe='')}/"),
            json={"name": new},
            timeout=HTTP_TIMEOUT,
        )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json() == {"name": new, "links": 2, "merged": False}
    tags = _tags(deployment)
    assert tags.get(new) == 2 and old not in tags, tags
    assert harness.listed_codes(deployment, tag=new.lower()) == codes
    assert harness.listed_codes(deployment, tag=old) == set()
    assert {
        tuple(sorted(link["tags"]))
        for link in harness.api_get(deployment, "/api/v1/links/", tag=new)["results"]
    } == {tuple(sorted([new, "keep"]))}

    with deployment.api() as api:
        deleted = api.delete(
            deployment.url(f"/api/v1/tags/{quote(new, safe='')}/"), timeout=HTTP_TIMEOUT
        )
        again = api.delete(
            deployment.url(f"/api/v1/tags/{quote(new, safe='')}/"), timeout=HTTP_TIMEOUT
        )
    assert deleted.status_code == 204, deleted.text
    assert again.status_code == 404, again.text
    assert new not in _tags(deployment)
    assert harness.listed_codes(deployment, tag=new) == set()
    assert codes <= harness.listed_codes(deployment, tag="keep")
    for link in links:
        fetched = harness.api_get(deployment, f"/api/v1/links/{link['code']}/")
        assert fetched["tags"] == ["keep"] and fetched["is_active"] is True, fetched
        for _ in range(4):  # any worker
            answer = get_fresh(deployment.port, f"/{link['code']}")
            assert (answer.status, answer.location) == (302, link["long_url"])
