"""The lookups of "the active links to this URL" in a workspace (links.selectors._active_links_to,
behind Shlink's findIfExists and YOURLS's unique URLs) read the (workspace, long_url_hash,
created_at) index on both databases: with only (owner, long_url_hash) MariaDB reached them
through a scan of every user (docs/performance.md, bench/url_lookup_explain.py)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from links.models import DEFAULT_DOMAIN_ID, CodeType, UrlLink
from links.selectors import link_find_existing, link_for_long_url
from links.services.policy import url_hash
from links.tests.factories import UserFactory
from workspaces.models import Membership, Role
from workspaces.services import workspace_create

# Transactional: MariaDB's ANALYZE TABLE commits, which would end a test's wrapping transaction.
pytestmark = pytest.mark.django_db(transaction=True)

URL = "https://www.example.com/"
INDEX = "link_workspace_url_hash"


@pytest.fixture
def team():
    """A team of 20 members with 600 links, one of them to URL, and 40 other users' links."""
    members = [UserFactory() for _ in range(20)]
    team = workspace_create(user=members[0], name="Team")
    Membership.objects.bulk_create(
        Membership(workspace=team, user=member, role=Role.EDITOR) for member in members[1:]
    )
    others = [UserFactory() for _ in range(40)]
    rows = [(URL, members[3], team)]
    rows += [(f"https://shop.example.com/p{n}", members[n % 20], team) for n in range(599)]
    rows += [(URL, user, user.memberships.get().workspace) for user in others]
    UrlLink.objects.bulk_create(
        UrlLink(
            code=f"idx{n:05d}",
            long_url=url,
            long_url_hash=url_hash(url),
            owner=owner,
            workspace=workspace,
            code_type=CodeType.CUSTOM,
            domain_id=DEFAULT_DOMAIN_ID,
        )
        for n, (url, owner, workspace) in enumerate(rows)
    )
    if connection.vendor == "mysql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE TABLE links_urllink")
            cursor.fetchall()
    return members[1], team


def _plan(call) -> tuple[object, str]:
    """What `call` returns, and how the database reads its query by hash."""
    with CaptureQueriesContext(connection) as queries:
        found = call()
    (sql,) = [q["sql"] for q in queries.captured_queries if "long_url_hash" in q["sql"]]
    with connection.cursor() as cursor:
        if connection.vendor == "mysql":
            cursor.execute("EXPLAIN " + sql)
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            (link_row,) = [row for row in rows if row["table"] == "links_urllink"]
            return found, str(link_row["key"])
        cursor.execute("EXPLAIN QUERY PLAN " + sql, [])
        return found, " | ".join(str(row[-1]) for row in cursor.fetchall())


@pytest.mark.parametrize("reader", ["find_existing", "for_long_url"])
def test_the_lookup_in_a_workspace_reads_the_workspace_and_hash_index(team, reader):
    member, workspace = team
    select = link_find_existing if reader == "find_existing" else link_for_long_url
    found, plan = _plan(lambda: select(user=member, long_url=URL, workspace_id=workspace.pk))
    assert found is not None and found.workspace_id == workspace.pk and found.long_url == URL
    assert INDEX in plan, plan
