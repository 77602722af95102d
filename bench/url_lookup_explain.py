"""How MariaDB (or MySQL) reads "the active links to this URL" in a workspace, before and after
the index on (workspace, long_url_hash) (links migration 0012, issue #27).

links.selectors._active_links_to is behind Shlink's findIfExists (link_find_existing: one
workspace) and YOURLS's unique URLs (link_for_long_url: an API key's workspace, or every
workspace of the user). Both filter by workspace and hash; only (owner, long_url_hash) was
indexed, so a lookup read every link of the workspace.

Runs against the database DATABASE_URL names (MySQL/MariaDB only; give it a database of its own,
e.g. mysql://root@127.0.0.1:3306/shorturl_h_misc: it must hold no links, and is left holding the
benchmark's). Migrates it, fills it (`--team-links` links in each of three team workspaces made
by ten members, fifty in each of `--loners` personal ones; one popular URL in every team and in a
quarter of the personal workspaces), then for each state of the index (links migrated back to
0011, then forward to 0012): ANALYZE TABLE, the SQL each selector runs (captured from the real
call), its EXPLAIN, and its median time over `--reps` runs. Nothing else is touched.

    DATABASE_URL=mysql://root@127.0.0.1:3306/shorturl_h_misc \\
        .venv/bin/python bench/url_lookup_explain.py [--team-links 20000] [--loners 200] [--reps 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POPULAR = "https://www.example.com/"
BEFORE, AFTER = "0012_urllink_valid_since", "0013_link_workspace_url_hash"


def fill(team_links: int, loners: int) -> dict:
    from django.contrib.auth import get_user_model

    from links.models import DEFAULT_DOMAIN_ID, CodeType, UrlLink
    from links.services.policy import url_hash
    from workspaces.models import Membership, Role
    from workspaces.selectors import personal_workspace_of
    from workspaces.services import workspace_create

    users = get_user_model().objects
    members = [users.create_user(f"member-{n}") for n in range(10)]
    teams = [workspace_create(user=members[0], name=f"Team {n}") for n in range(3)]
    for team in teams:
        Membership.objects.bulk_create(
            Membership(workspace=team, user=member, role=Role.EDITOR) for member in members[1:]
        )
    loners = [users.create_user(f"loner-{n}") for n in range(loners)]
    rows, serial = [], 0

    def link(url: str, owner, workspace) -> UrlLink:
        nonlocal serial
        serial += 1
        return UrlLink(
            code=f"b{serial:07d}",
            long_url=url,
            long_url_hash=url_hash(url),
            owner=owner,
            workspace=workspace,
            code_type=CodeType.CUSTOM,
            domain_id=DEFAULT_DOMAIN_ID,
        )

    for t, team in enumerate(teams):
        rows.append(link(POPULAR, members[t], team))
        for n in range(team_links - 1):
            rows.append(link(f"https://shop.example.com/t{t}/p{n}", members[n % 10], team))
    for n, loner in enumerate(loners):
        personal = personal_workspace_of(loner)
        if n % 4 == 0:
            rows.append(link(POPULAR, loner, personal))
        for m in range(49 if n % 4 == 0 else 50):
            rows.append(link(f"https://blog.example.com/u{n}/post{m}", loner, personal))
    UrlLink.objects.bulk_create(rows, batch_size=5000)
    return {"member": members[1], "team": teams[1], "links": len(rows)}


def lookup_sql(call) -> str:
    """The SQL of the query of `call` that reads links by hash, as sent to the server."""
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    reset_queries()  # DEBUG's log of the fill's queries is past its limit
    with CaptureQueriesContext(connection) as queries:
        call()
    found = [q["sql"] for q in queries.captured_queries if "long_url_hash" in q["sql"]]
    assert len(found) == 1, found
    return found[0]


def explain(sql: str) -> list[dict]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def median_ms(sql: str, reps: int) -> float:
    from django.db import connection

    times = []
    with connection.cursor() as cursor:
        for _ in range(reps):
            started = time.perf_counter()
            cursor.execute(sql)
            cursor.fetchall()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def report(label: str, data: dict, reps: int) -> None:
    from django.db import connection

    from links.selectors import link_find_existing, link_for_long_url

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE TABLE links_urllink")
        cursor.fetchall()
        cursor.execute("SHOW INDEX FROM links_urllink WHERE Key_name LIKE '%%url_hash'")
        indexes = sorted({row[2] for row in cursor.fetchall()})
    print(f"\n=== {label}: url-hash indexes {', '.join(indexes)}")
    member, team = data["member"], data["team"]
    calls = {
        "link_find_existing (Shlink findIfExists, one workspace)": lambda: link_find_existing(
            user=member, long_url=POPULAR, workspace_id=team.pk
        ),
        "link_for_long_url, a key's workspace (YOURLS unique URLs)": lambda: link_for_long_url(
            user=member, long_url=POPULAR, workspace_id=team.pk
        ),
        "link_for_long_url, every workspace of the user (a token)": lambda: link_for_long_url(
            user=member, long_url=POPULAR
        ),
    }
    for name, call in calls.items():
        sql = lookup_sql(call)
        print(f"\n-- {name}: median {median_ms(sql, reps):.2f} ms over {reps} runs")
        print("   " + sql)
        for row in explain(sql):
            print(
                "   {table:<28} type={type:<7} key={key} rows={rows} ref={ref} "
                "Extra={Extra}".format(**row)
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--team-links", type=int, default=20000)
    parser.add_argument("--loners", type=int, default=200, help="users with a personal workspace")
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("mysql://"):
        print("Give DATABASE_URL=mysql://… (a database of its own).", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from links.models import UrlLink

    call_command("migrate", verbosity=0)
    if UrlLink.objects.exists():
        print("The database holds links: give the benchmark one of its own.", file=sys.stderr)
        return 2
    data = fill(args.team_links, args.loners)
    print(f"{data['links']:,} links; a team workspace holds {args.team_links:,}.")
    call_command("migrate", "links", BEFORE, verbosity=0)
    report(f"before (links {BEFORE})", data, args.reps)
    call_command("migrate", "links", AFTER, verbosity=0)
    report(f"after (links {AFTER})", data, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
