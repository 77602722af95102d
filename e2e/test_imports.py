"""Issue #16's import and export against both deployments, the way an operator migrating from
YOURLS runs them: `manage.py import_links` on a YOURLS SQL dump (made by hand to its published
shape, links/imports/tests/fixtures/imports/) keeps the old keywords, which then redirect over
HTTP from every worker; the rows it cannot take are reported with their line and reason; a second
run imports nothing twice; `manage.py export_links` lists the imported links."""

from __future__ import annotations

import json
from pathlib import Path

import harness

FIXTURES = Path(__file__).resolve().parent.parent / "links/imports/tests/fixtures/imports"
DUMP = FIXTURES / "yourls_dump.sql"
# Keyword → URL of rows the dump holds (see the fixture).
KEPT = {
    "abc": "https://www.example.com/a?x=1&y=2",
    "xyz9": "https://www.example.com/z",
    "dup-a": "https://www.example.com/a?x=1&y=2",
}


def test_a_yourls_dump_imports_with_its_keywords_and_exports_again(deployment):
    out = deployment.manage("import_links", str(DUMP), "--user", "demo")
    assert "with their old codes" in out, out
    assert "line 54: ftp1: Only http and https URLs can be shortened." in out, out
    assert "docs → " in out and "“docs” is reserved" in out, out

    for keyword, url in KEPT.items():
        for index in range(8):  # fresh connections: every worker process answers
            answer = harness.get_fresh(
                deployment.port, f"/{keyword}", harness.visitor_headers(index)
            )
            assert (answer.status, answer.location) == (302, url), (keyword, answer)

    again = deployment.manage("import_links", str(DUMP), "--user", "demo")
    assert "Imported 0 links" in again, again

    exported = json.loads(
        deployment.manage(
            "export_links", "--user", "demo", "--format", "json", "--base", deployment.base_url
        )
    )
    codes = {link["code"]: link["long_url"] for link in exported["links"]}
    assert {keyword: codes.get(keyword) for keyword in KEPT} == KEPT
