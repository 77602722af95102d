"""The files a node writes (the SQLite database and its companions, the state dir) are readable
by the node's own user alone, whatever the umask it was started with; files an older version
left readable are tightened when a process starts.

Each case runs the product in a subprocess started with the usual umask (022), as a shell or a
service manager starts it.
"""

import json
import os
import sqlite3
import stat
from pathlib import Path

from shorturl_project.tests.clean_env import python

# The product started under umask 022 (stated, not inherited from the test run), then what the
# case wants done; prints each file's mode under the temp dir.
PRELUDE = """
import json, os, stat, sys
from pathlib import Path
os.umask(0o022)
import django
django.setup()
"""
REPORT = """
root = Path(sys.argv[1])
print(json.dumps({
    str(path.relative_to(root)): oct(stat.S_IMODE(path.stat().st_mode))
    for path in [root, *root.rglob("*")] if path.name != "outside"
}))
"""


def _modes(tmp_path: Path, work: str) -> dict[str, str]:
    done = python(
        PRELUDE + work + REPORT,
        {
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
            "NODE_STATE_DIR": str(tmp_path / "state"),
        },
        str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    modes = json.loads(done.stdout.strip().splitlines()[-1])
    modes.pop(".")
    return modes


def test_a_fresh_node_creates_its_database_and_state_files_owner_only(tmp_path):
    modes = _modes(
        tmp_path,
        """
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
connection.ensure_connection()  # still open: the -wal and -shm files exist
from analytics.spool import mark_hours
from core.node_state import generations, state_dir
mark_hours(["1:0"])  # a plain open(…, "a") in the state dir, as several writers do
generations()
(state_dir() / "visit-caps").mkdir()
(state_dir() / "visit-caps" / "7").write_bytes(b"1")
""",
    )

    assert {"db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "state/hours.pending"} <= set(modes)
    assert {name: mode for name, mode in modes.items() if mode not in ("0o600", "0o700")} == {}
    assert modes["state"] == modes["state/visit-caps"] == "0o700"


def test_files_an_older_version_left_readable_are_tightened_at_start(tmp_path):
    old_umask = os.umask(0o022)
    try:
        with sqlite3.connect(tmp_path / "db.sqlite3") as database:
            database.execute("CREATE TABLE authtoken_token (key TEXT)")
        (tmp_path / "db.sqlite3-journal").write_bytes(b"")
        spool = tmp_path / "state" / "visit-caps"
        spool.mkdir(parents=True)
        (spool / "7").write_bytes(b"1")
        (tmp_path / "state" / "changes.pending").write_text("link:abc\n")
        # A link in the state dir to a file elsewhere: not the node's to change.
        (tmp_path / "outside").write_text("")
        (tmp_path / "state" / "link").symlink_to(tmp_path / "outside")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "db.sqlite3").stat().st_mode) == 0o644

    modes = _modes(tmp_path, "")

    modes.pop("state/link")  # reported through the link: the outside file's mode
    assert modes == {
        "db.sqlite3": "0o600",
        "db.sqlite3-journal": "0o600",
        "state": "0o700",
        "state/visit-caps": "0o700",
        "state/visit-caps/7": "0o600",
        "state/changes.pending": "0o600",
    }
    assert stat.S_IMODE((tmp_path / "outside").stat().st_mode) == 0o644
