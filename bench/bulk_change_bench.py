"""Bulk change of 1,000 links in one call (PATCH /api/v1/links/bulk/, #28) on MariaDB + Redis.

In-process, through the API's own view (DRF's test client: authentication, the serializers,
links.services.bulk_change and the cache drops on Redis, no HTTP server): the owner has
`--links` links (default 1,000: BULK_CHANGE_MAX) of which `--viewed` are in another user's team
where the owner is only a viewer, so each call names every code and has those refused per code.
Each kind of change runs `--rounds` times with a value that changes every link each round
(archived on/off, new tags, a new expiry, a move between two workspaces and back), then one
revoke of them all (final). Times are wall-clock per call; the goal (#28) is under 5 s.

It makes its own database with Django's test machinery (`test_<NAME>` of DATABASE_URL's NAME,
dropped at the end) and uses REDIS_URL's database for the cache (its keys expire):

    DATABASE_URL=mysql://root@127.0.0.1:3306/shorturl_h_bulk REDIS_URL=redis://127.0.0.1:6379/10 \\
        .venv/bin/python bench/bulk_change_bench.py [--links 1000] [--viewed 50] [--rounds 3]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--links", type=int, default=1000)
    parser.add_argument("--viewed", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("mysql://"):
        print("Set DATABASE_URL=mysql://… (MariaDB) and REDIS_URL.", file=sys.stderr)
        return 2
    os.environ.setdefault("SHOW_DEV_WARNING", "0")
    os.environ["API_WRITE_RATE"] = "1000000/min"  # a benchmark, not a client to slow down
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.test.utils import (
        setup_databases,
        setup_test_environment,
        teardown_databases,
        teardown_test_environment,
    )

    setup_test_environment()
    databases = setup_databases(verbosity=0, interactive=False)
    try:
        figures = measure(args)
    finally:
        teardown_databases(databases, verbosity=0)
        teardown_test_environment()
    report(figures, args)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    slowest = max(max(runs) for runs in figures["seconds"].values())
    return 0 if slowest < GOAL_SECONDS else 1


def measure(args) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from links.models import UrlLink
    from links.services.bulk import link_create_many
    from workspaces.models import Role
    from workspaces.services import member_add, workspace_create

    User = get_user_model()
    owner = User.objects.create_user("bulk-change-owner")
    rival = User.objects.create_user("bulk-change-rival")
    team = workspace_create(user=owner, name="Bench team", slug="bench-team")
    theirs = workspace_create(user=rival, name="Rival team", slug="rival-team")
    member_add(by=rival, workspace=theirs, username=owner.username, role=Role.VIEWER)
    own = args.links - args.viewed
    made = link_create_many(
        user=owner,
        items=[
            {"long_url": f"https://www.example.com/own/{n}", "tags": ["start"]} for n in range(own)
        ],
    )
    viewed = link_create_many(
        user=rival,
        workspace=theirs,
        items=[{"long_url": f"https://www.example.com/theirs/{n}"} for n in range(args.viewed)],
    )
    codes = [r.link.code for r in made] + [r.link.code for r in viewed]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")

    def call(changes: dict) -> float:
        started = time.perf_counter()
        response = client.patch(
            "/api/v1/links/bulk/", {"codes": codes, "set": changes}, format="json"
        )
        took = time.perf_counter() - started
        body = response.json()
        assert response.status_code == 200, body
        assert body["changed"] == own and body["refused"] == args.viewed, {
            k: body[k] for k in ("changed", "unchanged", "refused")
        }
        return took

    personal = UrlLink.objects.get(code=codes[0]).workspace.slug
    seconds: dict[str, list[float]] = {}
    for n in range(args.rounds):
        later = timezone.now() + timedelta(days=30 + n)
        steps = {
            "archived": {"archived": n % 2 == 0},
            "add_tags": {"add_tags": [f"wave-{n}"]},
            "tags (replace)": {"tags": [f"set-{n}", "campaign"]},
            "expires_at": {"expires_at": later.isoformat()},
            "workspace (move)": {"workspace": team.slug if n % 2 == 0 else personal},
        }
        for name, changes in steps.items():
            seconds.setdefault(name, []).append(call(changes))
    seconds["revoked"] = [call({"revoked": True})]
    return {
        "links": args.links,
        "refused_viewer_codes": args.viewed,
        "database": connection.vendor + " " + ".".join(map(str, connection.mysql_version)),
        "seconds": seconds,
    }


def report(figures: dict, args) -> None:
    print(
        f"Bulk change of {figures['links']} codes a call ({figures['refused_viewer_codes']} of "
        f"them a viewer's, refused per code), {figures['database']}, {args.rounds} rounds:"
    )
    for name, runs in figures["seconds"].items():
        print(
            f"  {name:18} median {statistics.median(runs) * 1000:7.0f} ms   "
            f"max {max(runs) * 1000:7.0f} ms   (goal < {GOAL_SECONDS:.0f} s)"
        )


if __name__ == "__main__":
    sys.exit(main())
