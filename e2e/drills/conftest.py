"""The failover drills' cluster (e2e/cluster.py), started once for every drill, and the table
`make drills` prints at the end: one row per drill."""

from __future__ import annotations

import cluster as topology
import pytest
from load import ROWS

COLUMNS = (
    ("drill", "drill"),
    ("answered", "redirects answered"),
    ("stored", "visits stored"),
    ("unavailable", "503"),
    ("cut", "cut off"),
    ("server_errors", "other 5xx"),
    ("duplicates", "duplicates"),
    ("lost", "lost"),
    ("created", "links created"),
    ("retried", "conflicts retried"),
    ("visible", "fault seen by clients (s)"),
    ("recovered", "back in service (s)"),
    ("edit_everywhere", "edit on every node (s)"),
)


@pytest.fixture(scope="session")
def cluster(production_venv):
    try:
        started = topology.start_cluster(production_venv)
    except topology.HarnessError as error:
        pytest.fail(f"the cluster did not start: {error}", pytrace=False)
    yield started
    started.stop()


def pytest_terminal_summary(terminalreporter):
    if not ROWS:
        return
    cells = [[label for _, label in COLUMNS]]
    cells += [[str(row.get(key, "")) for key, _ in COLUMNS] for row in ROWS]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    terminalreporter.section("failover drills")
    for n, line in enumerate(cells):
        terminalreporter.write_line(
            " | ".join(
                cell.rjust(width) if n and i else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            )
        )
    text = "\n".join(" | ".join(line) for line in cells) + "\n"
    topology.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (topology.ARTIFACTS / "drills.txt").write_text(text)
