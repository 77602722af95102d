"""`manage.py import_links` and `manage.py export_links` as an operator runs them: what they
print, the report file, their exit status, and an export that imports back elsewhere with its
codes."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, execute_from_command_line
from django.core.management.base import OutputWrapper
from django.urls import reverse
from django.utils import timezone

from analytics.tests.factories import add_visits
from core.progress import Progress
from links.models import DEFAULT_DOMAIN_ID, UrlLink
from links.selectors import link_export_rows
from links.services.change import link_revoke
from links.services.create import link_create
from links.services.domains import domain_save
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def command(name: str, *args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


# --- import_links ------------------------------------------------------------------------------


def test_the_import_prints_what_it_read_every_skipped_row_and_a_summary(user, other_user, tmp_path):
    link_create(user=other_user, long_url="https://rival.example.com/", alias="taken-code")
    report_file = tmp_path / "report.csv"
    out, err = command(
        "import_links",
        str(FIXTURES / "plain.csv"),
        "--user",
        "marketer",
        "--report",
        str(report_file),
        "--base",
        "https://s.example.com/",
    )
    lines = out.splitlines()
    assert lines[0] == f"Reading {FIXTURES / 'plain.csv'} as plain CSV: 9 links."
    assert "Imported with a new code:" in lines
    assert any(line.startswith("  line 9: taken-code → ") for line in lines)
    assert "Skipped:" in lines
    assert "  line 5: plain-ftp: Only http and https URLs can be shortened." in lines
    assert "  line 6: plain-empty: Enter the long URL to shorten." in lines
    assert (
        "  line 7: https://www.example.com/plain/2: Same long URL as line 3 of the file." in lines
    )
    assert lines[-1] == (
        "Imported 5 links (2 with their old codes, 2 with new codes, 1 without an old code); "
        "skipped 4 (3 refused by the link rules, 1 repeated in the file)."
    )
    assert err == ""  # one batch: no progress lines off a terminal

    with report_file.open() as report:
        rows = list(csv.DictReader(report))
    assert [row["line"] for row in rows] == [str(n) for n in range(2, 11)]
    assert {row["outcome"] for row in rows} == {"imported", "new code", "skipped"}
    one = rows[0]
    assert (one["old_code"], one["code"], one["short_url"]) == (
        "plain-one",
        "plain-one",
        "https://s.example.com/plain-one",
    )
    assert (
        rows[7]["reason"]
        == "The old code “taken-code” cannot be kept: “taken-code” is already taken on this domain."
    )


def _report_urls(report_file: Path) -> dict[str, str]:
    with report_file.open() as report:
        return {row["code"]: row["short_url"] for row in csv.DictReader(report) if row["code"]}


def test_the_report_carries_full_short_urls_as_the_export_does(user, settings, tmp_path):
    """Issue #27: the --report file gave `/plain-one` paths (and `https://go…` only for other
    domains) without SHORT_URL_BASE, as the export did before it took --base. Now the same
    base, the same rule (links.shortlinks.short_url_for): --base, else SHORT_URL_BASE, else
    the command stops before importing anything."""
    domain_save(host="go.example.test")
    settings.SHORT_URL_BASE = ""
    report_file = tmp_path / "report.csv"
    plain = str(FIXTURES / "plain.csv")
    with pytest.raises(CommandError, match=r"SHORT_URL_BASE is not set: .*--report file"):
        command("import_links", plain, "--user", "marketer", "--report", str(report_file))
    assert not UrlLink.objects.exists() and not report_file.exists()
    with pytest.raises(CommandError, match="--base must be an http or https URL"):
        command("import_links", plain, "--user", "marketer", "--base", "s.example.com")

    command(
        "import_links", plain, "--user", "marketer", "--report", str(report_file),
        "--base", "http://127.0.0.1:8000/",
    )  # fmt: skip
    urls = _report_urls(report_file)
    assert urls["plain-one"] == "http://127.0.0.1:8000/plain-one"
    assert all(url.startswith("http://127.0.0.1:8000/") for url in urls.values()), urls

    # On another domain: that domain's host, with the base's scheme.
    command(
        "import_links", str(FIXTURES / "kutt.json"), "--user", "marketer", "--domain",
        "go.example.test", "--report", str(report_file), "--base", "http://127.0.0.1:8000/",
    )  # fmt: skip
    urls = _report_urls(report_file)
    assert urls and all(url.startswith("http://go.example.test/") for url in urls.values()), urls

    # SHORT_URL_BASE set: no --base needed, and no run without --report asks for one.
    settings.SHORT_URL_BASE = "https://s.example.com/"
    UrlLink.objects.all().delete()
    command("import_links", plain, "--user", "marketer", "--report", str(report_file))
    assert _report_urls(report_file)["plain-one"] == "https://s.example.com/plain-one"
    settings.SHORT_URL_BASE = ""
    out, _ = command("import_links", plain, "--user", "marketer", "--dry-run")
    assert "Would import" in out


def test_a_dry_run_from_the_command_writes_nothing(user):
    out, _ = command("import_links", str(FIXTURES / "kutt.json"), "--user", "marketer", "--dry-run")
    assert "(dry run: nothing will be written)" in out.splitlines()[0]
    assert "Would import 4 links (4 with their old codes)" in out
    assert out.splitlines()[-1] == "Dry run: nothing was written."
    assert not UrlLink.objects.exists()


def test_the_format_and_the_domain_can_be_named(user):
    domain_save(host="go.example.test")
    out, _ = command(
        "import_links",
        str(FIXTURES / "yourls.csv"),
        "--user",
        "marketer",
        "--format",
        "yourls-csv",
        "--domain",
        "go.example.test",
        "--on-taken-code",
        "skip",
    )
    assert "as YOURLS CSV" in out
    assert UrlLink.objects.get(code="ozh").domain.host == "go.example.test"
    assert not UrlLink.objects.filter(long_url="https://www.example.com/two-letters").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.csv", "--user", "marketer"], "Cannot read missing.csv: No such file"),
        ([str(FIXTURES / "plain.csv"), "--user", "nobody"], "There is no user “nobody”."),
        (
            [str(FIXTURES / "plain.csv"), "--user", "marketer", "--domain", "no.example"],
            "“no.example” is not one of this service's short domains",
        ),
        (
            [str(FIXTURES / "plain.csv"), "--user", "marketer", "--format", "kutt"],
            "this is not valid JSON",
        ),
    ],
)
def test_a_file_or_option_that_cannot_be_used_stops_the_command(user, args, message):
    with pytest.raises(CommandError, match=message):
        command("import_links", *args)
    assert not UrlLink.objects.exists()


# Transactional: execute_from_command_line closes every connection when the command ends,
# which on MariaDB would end a wrapping test transaction.
@pytest.mark.django_db(transaction=True)
def test_an_unreadable_file_exits_with_status_1_and_skipped_rows_with_0(user, tmp_path, capsys):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\xff\xfe not a link file \xff")
    with pytest.raises(SystemExit) as stopped:
        execute_from_command_line(["manage.py", "import_links", str(garbage), "--user", "marketer"])
    assert stopped.value.code == 1
    assert "is not UTF-8 text" in capsys.readouterr().err
    # A file that was read, even with every row skipped, is a run that worked.
    bad = tmp_path / "bad.csv"
    bad.write_text("long_url\nftp://example.com/\n")
    execute_from_command_line(["manage.py", "import_links", str(bad), "--user", "marketer"])
    assert "skipped 1 (1 refused by the link rules)" in capsys.readouterr().out


def test_the_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    bar = Progress(OutputWrapper(screen), "rows")
    bar(1000, 2500)
    bar(2500, 2500)
    bar.finish()
    assert screen.getvalue() == (
        f"\r[{'#' * 12}{'.' * 18}] 1,000/2,500 rows\r[{'#' * 30}] 2,500/2,500 rows\n"
    )
    log = io.StringIO()
    lines = Progress(OutputWrapper(log), "rows")
    lines(1000, 2500)
    lines(2500, 2500)
    lines.finish()
    assert log.getvalue() == "1,000/2,500 rows\n2,500/2,500 rows\n"


# --- export_links ------------------------------------------------------------------------------

# The short URLs' base of these exports (the tests run without SHORT_URL_BASE); its host is one
# the test server serves the default domain on (ALLOWED_HOSTS), so the files import back.
BASE = "https://testserver/"


def export(*args) -> tuple[str, str]:
    return command("export_links", "--base", BASE, *args)


@pytest.fixture
def links(user):
    go = domain_save(host="go.example.test")
    sale = link_create(
        user=user,
        long_url="https://shop.example.com/sale",
        alias="spring-sale",
        title="Spring, sale",
        tags=["spring", "Promo"],
    ).link
    plain = link_create(user=user, long_url="https://www.example.com/plain").link
    archived = link_create(
        user=user, long_url="https://www.example.com/old", alias="old-one", archived=True
    ).link
    on_go = link_create(
        user=user, long_url="https://www.example.com/go", alias="go-link", domain=go.host
    ).link
    gone = link_create(user=user, long_url="https://www.example.com/gone", alias="gone").link
    link_revoke(code="gone", user=user)
    UrlLink.objects.filter(pk=sale.pk).update(
        created_at=dt.datetime(2021, 3, 1, 9, 0, tzinfo=dt.UTC)
    )
    add_visits(sale, 3)
    add_visits(sale, 2, client_id="same-person")
    add_visits(sale, 1, bot=True)
    return {"sale": sale, "plain": plain, "archived": archived, "go": on_go, "gone": gone}


def test_the_csv_export_has_every_link_with_its_totals(user, other_user, links, tmp_path):
    link_create(user=other_user, long_url="https://rival.example.com/x", alias="rivals")
    target = tmp_path / "links.csv"
    out, err = export("--user", "marketer", "--output", str(target))
    assert out == ""
    assert err == f"Exported 5 links to {target}.\n"
    with target.open() as written:
        rows = {row["code"]: row for row in csv.DictReader(written)}
    assert set(rows) == {"spring-sale", links["plain"].code, "old-one", "go-link", "gone"}
    sale = rows["spring-sale"]
    assert sale == {
        "code": "spring-sale",
        "short_url": "https://testserver/spring-sale",
        "long_url": "https://shop.example.com/sale",
        "title": "Spring, sale",
        "tags": "Promo, spring",
        "domain": "testserver",
        "created_at": "2021-03-01T09:00:00+00:00",
        "valid_since": "",
        "expires_at": "",
        "status": "active",
        "archived": "false",
        "clicks": "5",
        "unique_visitors": "4",
        "og_title": "",
        "og_description": "",
        "og_image": "",
        "expired_url": "",
        "ios_url": "",
        "android_url": "",
        "fallback_url": "",
        "health": "unknown",
        "track_conversions": "false",
    }
    assert rows["old-one"]["archived"] == "true"
    assert (rows["go-link"]["domain"], rows["go-link"]["short_url"]) == (
        "go.example.test",
        "https://go.example.test/go-link",
    )
    assert rows["gone"]["status"] == "revoked"
    assert rows[links["plain"].code]["clicks"] == "0"


def test_the_json_export_goes_to_stdout(user, links):
    out, err = export("--user", "marketer", "--format", "json")
    data = json.loads(out)
    assert dt.datetime.fromisoformat(data["exported_at"]) <= timezone.now()
    sale = next(link for link in data["links"] if link["code"] == "spring-sale")
    assert sale["tags"] == ["Promo", "spring"]
    assert (sale["clicks"], sale["unique_visitors"], sale["archived"]) == (5, 4, False)
    assert sale["expires_at"] is None and sale["valid_since"] is None
    assert err == "Exported 5 links to standard output.\n"


def test_the_export_reads_totals_in_bulk_not_per_link(user, django_assert_num_queries):
    for n in range(30):
        link_create(user=user, long_url=f"https://example.com/{n}", tags=["t"])
    # A page of links, its click sums, its people (which of them need their visits read, then
    # the roll-ups' sums), its tags; then the empty page that ends it.
    with django_assert_num_queries(6):
        assert len(list(link_export_rows(user=user))) == 30
    with django_assert_num_queries(11):
        assert len(list(link_export_rows(user=user, batch_size=20))) == 30


def test_without_short_url_base_the_command_asks_for_a_base_rather_than_write_paths(
    user, links, settings
):
    """Issue #27: without SHORT_URL_BASE the export's short URLs were `/spring-sale`, of no
    use outside the install, and the default domain's links had an empty domain."""
    settings.SHORT_URL_BASE = ""
    with pytest.raises(CommandError, match=r"SHORT_URL_BASE is not set: give .* --base"):
        command("export_links", "--user", "marketer")
    for wrong in ("s.example.com", "ftp://s.example.com/", "https://", "http://[::1"):
        with pytest.raises(CommandError, match="--base must be an http or https URL"):
            command("export_links", "--user", "marketer", "--base", wrong)
    out, _ = command("export_links", "--user", "marketer", "--base", "http://127.0.0.1:8000/")
    sale = next(row for row in csv.DictReader(io.StringIO(out)) if row["code"] == "spring-sale")
    assert (sale["short_url"], sale["domain"]) == ("http://127.0.0.1:8000/spring-sale", "127.0.0.1")


def test_with_short_url_base_the_command_needs_no_base(user, links, settings):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    out, _ = command("export_links", "--user", "marketer", "--format", "json")
    rows = {row["code"]: row for row in json.loads(out)["links"]}
    assert (rows["spring-sale"]["short_url"], rows["spring-sale"]["domain"]) == (
        "https://s.example.com/spring-sale",
        "s.example.com",
    )
    assert (rows["go-link"]["short_url"], rows["go-link"]["domain"]) == (
        "https://go.example.test/go-link",
        "go.example.test",
    )


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_pages_export_gives_full_short_urls_on_the_pages_own_host(
    client, user, links, settings, fmt
):
    """The My links export page (links_export), SHORT_URL_BASE unset: the request's host."""
    settings.SHORT_URL_BASE = ""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "short.testserver"]
    client.force_login(user)
    response = client.get(reverse("links_export", args=[fmt]), HTTP_HOST="short.testserver")
    body = b"".join(response.streaming_content).decode()
    if fmt == "json":
        rows = {row["code"]: row for row in json.loads(body)["links"]}
    else:
        rows = {row["code"]: row for row in csv.DictReader(io.StringIO(body))}
    assert (rows["spring-sale"]["short_url"], rows["spring-sale"]["domain"]) == (
        "http://short.testserver/spring-sale",
        "short.testserver",
    )
    plain = links["plain"].code
    assert rows[plain]["short_url"] == f"http://short.testserver/{plain}"
    assert (rows["go-link"]["short_url"], rows["go-link"]["domain"]) == (
        "http://go.example.test/go-link",
        "go.example.test",
    )


def test_every_owners_links_are_for_staff_only(user, other_user, staff_user, links):
    link_create(user=other_user, long_url="https://rival.example.com/x", alias="rivals")
    with pytest.raises(CommandError, match="Only staff"):
        export("--user", "marketer", "--all")
    out, _ = export("--user", "staffer", "--all")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 6
    assert {row["owner"] for row in rows} == {"marketer", "rival"}


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_export_imports_into_another_user_on_another_domain_with_its_codes(
    client, settings, user, other_user, links, tmp_path, fmt
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "promo.example.test"]
    domain_save(host="promo.example.test")
    exported = tmp_path / f"links.{fmt}"
    export("--user", "marketer", "--format", fmt, "--output", str(exported))
    out, _ = command(
        "import_links", str(exported), "--user", "rival", "--domain", "promo.example.test"
    )
    assert ("as plain CSV" if fmt == "csv" else "as shorturl JSON export") in out
    copied = {link.code: link for link in UrlLink.objects.filter(owner=other_user)}
    # Aliases are kept on the new domain, with titles, tags, dates and the archived flag.
    for alias in ("spring-sale", "old-one", "go-link"):
        assert copied[alias].domain.host == "promo.example.test"
        response = client.get(f"/{alias}", HTTP_HOST="promo.example.test")
        assert (response.status_code, response["Location"]) == (
            302,
            UrlLink.objects.get(owner=user, code=alias).long_url,
        )
    sale = copied["spring-sale"]
    assert sale.title == "Spring, sale"
    assert sorted(sale.tags.values_list("name", flat=True)) == ["Promo", "spring"]
    assert sale.created_at == dt.datetime(2021, 3, 1, 9, 0, tzinfo=dt.UTC)
    assert copied["old-one"].archived is True
    # A generated code is unique across every domain: the copy gets its own, and says why.
    assert links["plain"].code not in copied
    assert f"{links['plain'].code} → " in out
    assert "are kept for generated codes" in out
    # The revoked link stays behind.
    assert "gone: Not imported: revoked in the source." in out
    assert "gone" not in copied


def test_text_a_spreadsheet_would_run_is_guarded_in_the_csv_and_comes_back_as_it_was(
    user, other_user, tmp_path
):
    formula = '=HYPERLINK("https://evil.example/","Click")'
    link_create(user=user, long_url="https://www.example.com/f", alias="formula-1", title=formula)
    exported = tmp_path / "links.csv"
    export("--user", "marketer", "--output", str(exported))
    with exported.open() as rows:
        [row] = list(csv.DictReader(rows))
    assert row["title"] == "'" + formula
    out, _ = command("import_links", str(exported), "--user", "rival")
    copy = UrlLink.objects.get(owner=other_user)
    assert copy.title == formula, out
    # The file names the default domain by its host (testserver): the copy lands on it.
    assert (copy.domain_id, copy.domain_host) == (DEFAULT_DOMAIN_ID, ""), out


def test_the_file_can_come_on_standard_input(user, monkeypatch):
    data = (FIXTURES / "yourls.csv").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    out, _ = command("import_links", "-", "--user", "marketer")
    assert out.startswith("Reading - as YOURLS CSV: 6 links.")
    assert UrlLink.objects.filter(owner=user, code="ozh").exists()


# --- workspaces --------------------------------------------------------------------------------


def test_the_commands_import_into_and_export_from_a_named_workspace(user, other_user):
    team = workspace_create(user=user, name="Growth team")
    member_add(by=user, workspace=team, username=other_user.username, role="viewer")
    out, _ = command(
        "import_links",
        str(FIXTURES / "kutt.json"),
        "--user",
        user.username,
        "--workspace",
        "growth-team",
    )
    assert "Imported 4 links" in out
    assert set(UrlLink.objects.values_list("workspace__slug", flat=True)) == {"growth-team"}
    # A viewer of the workspace reads its links but cannot import into it.
    exported, _ = export("--user", other_user.username, "--workspace", "growth-team")
    assert len(list(csv.DictReader(io.StringIO(exported)))) == 4
    with pytest.raises(CommandError, match="Viewers of the workspace 'growth-team'"):
        command(
            "import_links", str(FIXTURES / "kutt.json"), "--user", other_user.username,
            "--workspace", "growth-team",
        )  # fmt: skip
    # The user's own export stays their personal workspace's: empty.
    mine, _ = export("--user", user.username)
    assert list(csv.DictReader(io.StringIO(mine))) == []
    with pytest.raises(CommandError, match="in no workspace"):
        export("--user", user.username, "--workspace", "nobody-s")
