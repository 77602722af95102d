"""Security round 3, #6 and #7: what a hostile or broken upload on the import page can cost and
how every upload ends.

- #6: a small file of tiny rows (a 5 MB YOURLS dump of `(1),(1),…` is 1.3 million rows) used to
  be read whole into row objects, imported into a 200 MB report whose save failed, and leave
  its job "running" for good. Now the rows are read a batch at a time and counted against
  SHORTURL_IMPORT_MAX_ROWS first, a report lists SHORTURL_IMPORT_REPORT_ROWS rows of each
  outcome (every row counted), and a job always ends: done, or failed with why
  (link_import_fail), a dead process's job by the periodic sweep.
- #7: nested JSON and a 5,000-digit integer answered 500 (format told from the content) or left
  the job running (format named); a lone surrogate made the import page and its report.csv
  answer 500; a NUL was stored from a CSV while the API refuses it (the link rules,
  links/services/policy.py, now refuse it for every channel).

The memory bound of a 5 MB worst-shape upload, in the web and worker processes, is measured in
e2e/test_import_limits.py against `make serve`.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
import tracemalloc
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, connections
from django.utils import timezone

from links.imports import formats as importers
from links.imports import service as imports
from links.imports.report import ImportReport, Outcome
from links.models import ImportStatus, LinkImport, UrlLink
from shorturl_project.celery import app as celery_app
from workspaces.selectors import personal_workspace_of

pytestmark = pytest.mark.django_db

PAGE = "/dashboard/import/"
FIVE_MB = 5 * 1024 * 1024


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def post_file(client, name: str, content: bytes, file_format: str = ""):
    upload = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    return client.post(PAGE, {"file": upload, "file_format": file_format, "on_taken_code": "new"})


def run_uploads() -> LinkImport:
    """What the background runner does; the upload's job as it ended."""
    imports.link_import_run_queued()
    return LinkImport.objects.latest("id")


def tiny_rows_dump(size: int) -> bytes:
    """A YOURLS dump of `size` bytes whose rows are all `(1)`: the most rows per byte."""
    head = b"INSERT INTO `yourls_url` VALUES "
    rows = (size - len(head) - 1) // 4
    return head + b"(1)," * (rows - 1) + b"(1);"


# --- #6: rows per import, report size, and every job ending ------------------------------------


@pytest.mark.parametrize("cap", [5_000])
def test_a_dump_of_more_tiny_rows_than_the_cap_fails_before_importing_anything(
    signed_in, user, settings, cap
):
    settings.SHORTURL_IMPORT_MAX_ROWS = cap
    response = post_file(signed_in, "tiny.sql", tiny_rows_dump(4 * (cap * 4)))
    assert response.status_code == 302, response.content[:500]
    job = run_uploads()
    assert job.status == ImportStatus.FAILED
    assert f"more than {cap:,} links" in job.error and "nothing was imported" in job.error
    assert job.report == {} and bytes(job.data) == b""
    page = signed_in.get(f"/dashboard/import/{job.pk}/")
    assert page.status_code == 200 and f"more than {cap:,} links" in page.content.decode()


def test_the_five_megabyte_worst_dump_ends_failed_at_the_default_cap(signed_in, user):
    data = tiny_rows_dump(FIVE_MB)
    assert data.count(b"(1)") > 1_300_000
    assert post_file(signed_in, "tiny.sql", data).status_code == 302
    job = run_uploads()
    assert job.status == ImportStatus.FAILED, job.error
    assert f"more than {settings.SHORTURL_IMPORT_MAX_ROWS:,} links" in job.error
    assert not UrlLink.objects.filter(owner=user).exists()


def test_a_large_report_lists_the_first_rows_of_each_kind_and_counts_them_all(
    signed_in, user, settings
):
    settings.SHORTURL_IMPORT_REPORT_ROWS = 50
    lines = ["long_url,alias"] + [f"ftp://files.example.com/{n},old-{n}" for n in range(1200)]
    lines += [f"https://example.com/page/{n},kept-{n}" for n in range(60)]
    post_file(signed_in, "big.csv", "\n".join(lines).encode())
    job = run_uploads()
    assert job.status == ImportStatus.DONE
    report = ImportReport.from_dict(job.report)
    assert report.count(Outcome.SKIPPED) == 1200
    assert report.count(Outcome.IMPORTED) == 60
    assert len(report.entries) == 100  # 50 skipped and 50 imported rows listed
    assert report.summary().startswith("Imported 60 links (60 with their old codes); skipped 1,200")
    page = signed_in.get(f"/dashboard/import/{job.pk}/").content.decode()
    assert "Skipped (1200)" in page and "lists the first 50 rows of each kind" in page
    rows = list(
        csv.reader(
            io.StringIO(signed_in.get(f"/dashboard/import/{job.pk}/report.csv").content.decode())
        )
    )
    assert len(rows) == 1 + 100
    assert UrlLink.objects.filter(owner=user).count() == 60


def test_the_stored_report_stays_small_whatever_the_rows_hold(signed_in, settings):
    # Every row refused with the longest texts a row can bring: a 100 KB URL cell each.
    settings.SHORTURL_IMPORT_REPORT_ROWS = 1000
    url = "https://example.com/" + "a" * 100_000
    post_file(
        signed_in,
        "wide.json",
        json.dumps({"data": [{"address": "x", "target": url}] * 40}).encode(),
    )
    job = run_uploads()
    assert job.status == ImportStatus.DONE, job.error
    size = len(json.dumps(job.report))
    assert size < 40 * 4000, size  # each row's text cut to a few KB, not 100 KB


def test_an_import_interrupted_by_its_process_dying_is_ended_by_the_periodic_sweep(user):
    job = LinkImport.objects.create(
        owner=user,
        workspace=personal_workspace_of(user),
        file_name="a.csv",
        status=ImportStatus.RUNNING,
    )
    LinkImport.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(minutes=11))
    assert "sweep-imports" in celery_app.conf.beat_schedule  # services mode: beat runs it
    assert imports.link_import_sweep() == 1
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and "interrupted" in job.error
    assert job.finished_at is not None


def test_ending_a_job_is_one_service_call_and_a_waiting_job_then_never_runs(signed_in, user):
    post_file(signed_in, "a.csv", b"long_url\nhttps://example.com/a\n")
    job = LinkImport.objects.get()
    assert imports.link_import_fail(job=job, reason="Stopped: its owner left the workspace.")
    assert not imports.link_import_fail(job=job, reason="again")  # already ended
    assert imports.link_import_run_queued() == 0
    job.refresh_from_db()
    assert (job.status, job.error) == (
        ImportStatus.FAILED,
        "Stopped: its owner left the workspace.",
    )
    assert not UrlLink.objects.filter(owner=user).exists()


# --- #7: files that used to answer 500 or never end --------------------------------------------

NESTED = b'{"data": ' + b"[" * 3000 + b"]" * 3000 + b"}"  # 6 KB
HUGE_NUMBER = b'{"data": [{"address": "a", "target": ' + b"7" * 5000 + b"}]}"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (NESTED, "nested too deeply"),
        (b"[" * 3000 + b"]" * 3000, "nested too deeply"),
        (HUGE_NUMBER, "number too long"),
    ],
)
def test_json_the_reader_cannot_build_is_refused_on_the_page_when_the_format_is_told(
    signed_in, content, message
):
    response = post_file(signed_in, "evil.json", content)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not LinkImport.objects.exists()


@pytest.mark.parametrize(
    ("name", "content", "file_format"),
    [
        ("nested.json", NESTED, "kutt"),
        ("number.json", HUGE_NUMBER, "kutt"),
        ("nested.json", b"[" * 3000 + b"]" * 3000, "shlink"),
        # A hex literal of 5,000 digits: an int too long to write out as text.
        (
            "hex.sql",
            b"INSERT INTO yourls_url VALUES (0x" + b"f" * 5000 + b",'https://example.com/',"
            b"'t','2020-01-01 00:00:00','1.2.3.4',0);",
            "yourls-sql",
        ),
    ],
)
def test_with_the_format_named_the_job_ends_and_says_why(signed_in, name, content, file_format):
    assert post_file(signed_in, name, content, file_format).status_code == 302
    job = run_uploads()
    assert job.status in (ImportStatus.DONE, ImportStatus.FAILED)
    if job.status == ImportStatus.DONE:
        report = ImportReport.from_dict(job.report)
        assert report.rows >= 1
    page = signed_in.get(f"/dashboard/import/{job.pk}/")
    assert page.status_code == 200


def test_an_unreadable_item_is_reported_and_the_others_are_imported(signed_in, user):
    content = (
        b'{"data": [{"address": "first", "target": "https://example.com/1"}, '
        + b"[" * 3000
        + b"]" * 3000
        + b', {"address": "third", "target": "https://example.com/3"}]}'
    )
    post_file(signed_in, "kutt.json", content, "kutt")
    job = run_uploads()
    assert job.status == ImportStatus.DONE, job.error
    report = ImportReport.from_dict(job.report)
    assert report.count(Outcome.IMPORTED) == 2
    [problem] = [e for e in report.entries if e.outcome == Outcome.SKIPPED]
    assert (problem.row, problem.kind) == (2, "unreadable")
    assert "nested too deeply" in problem.reason
    assert set(UrlLink.objects.filter(owner=user).values_list("code", flat=True)) == {
        "first",
        "third",
    }


def test_a_lone_surrogate_in_a_row_never_breaks_the_report_page_or_its_csv(signed_in, user):
    content = (
        b'{"data": [{"address": "bad\\ud800", "target": "https://example.com/\\udc00x", '
        b'"description": "t\\ud83d"}, {"address": "fine", "target": "https://example.com/f"}]}'
    )
    post_file(signed_in, "kutt.json", content)
    job = run_uploads()
    assert job.status == ImportStatus.DONE, job.error
    page = signed_in.get(f"/dashboard/import/{job.pk}/")
    assert page.status_code == 200
    assert "https://example.com/\\udc00x" in page.content.decode()  # shown as its escape
    report_csv = signed_in.get(f"/dashboard/import/{job.pk}/report.csv")
    assert report_csv.status_code == 200
    assert "https://example.com/\\udc00x" in report_csv.content.decode()
    assert list(UrlLink.objects.filter(owner=user).values_list("code", flat=True)) == ["fine"]


@pytest.mark.skipif(
    connection.vendor != "sqlite", reason="MariaDB's JSON check never stored such a report"
)
def test_a_report_stored_with_a_lone_surrogate_still_shows(signed_in, user):
    # Reports saved before the rule (SQLite stored them): the page and the CSV clean them when
    # read.
    job = LinkImport.objects.create(
        owner=user,
        workspace=personal_workspace_of(user),
        file_name="old.json",
        status=ImportStatus.DONE,
        finished_at=timezone.now(),
        report={
            "format": "kutt",
            "unit": "item",
            "entries": [
                {
                    "row": 1,
                    "outcome": "skipped",
                    "long_url": "https://example.com/\ud800",
                    "old_code": "a\ud800",
                    "reason": "This is not a valid URL.",
                    "kind": "refused",
                }
            ],
        },
    )
    assert signed_in.get(f"/dashboard/import/{job.pk}/").status_code == 200
    assert signed_in.get(f"/dashboard/import/{job.pk}/report.csv").status_code == 200


def test_a_nul_in_a_csv_row_is_refused_as_the_api_refuses_it(signed_in, user):
    content = (
        b"long_url,alias,title\n"
        b"https://example.com/a\x00b,with-nul,fine\n"
        b"https://example.com/ok,ok-url,ti\x00tle\n"
    )
    post_file(signed_in, "nul.csv", content)
    job = run_uploads()
    assert job.status == ImportStatus.DONE, job.error
    stored = UrlLink.objects.values_list("long_url", "title")
    assert not [texts for texts in stored if "\x00" in "".join(texts)]
    link = UrlLink.objects.get(owner=user)
    assert (link.code, link.long_url, link.title) == ("ok-url", "https://example.com/ok", "")
    report = ImportReport.from_dict(job.report)
    [refused] = [e for e in report.entries if e.outcome == Outcome.SKIPPED]
    assert refused.old_code == "with-nul" and refused.kind == "refused"
    assert signed_in.get(f"/dashboard/import/{job.pk}/").status_code == 200
    assert signed_in.get(f"/dashboard/import/{job.pk}/report.csv").status_code == 200


# --- streamed reading ----------------------------------------------------------------------------


def peak_bytes(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_telling_the_format_of_a_large_json_reads_only_its_first_item():
    text = (
        "[" + ",".join(['{"address": "a", "target": "https://e.com/"}'] + ["{}"] * 1_800_000) + "]"
    )
    assert len(text) > FIVE_MB
    # json.loads of the whole file built 1.7 million dicts (well over 100 MB); the first item
    # alone is a few bytes. The bound leaves room for the regexes' and the decoder's own.
    assert peak_bytes(lambda: importers.detect_format(text)) < 5 * 2**20


def test_reading_a_file_holds_one_row_at_a_time():
    data = tiny_rows_dump(FIVE_MB)
    parsed = importers.open_file(data, "yourls-sql")
    rows = iter(parsed.rows)
    next(rows)

    def take_a_hundred_thousand():
        for _ in range(100_000):
            next(rows)

    # Rows taken and dropped: memory does not grow with them.
    assert peak_bytes(take_a_hundred_thousand) < 2 * 2**20


@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="the in-memory test database locks whole tables across threads (shared cache, no "
    "busy wait), unlike the embedded mode's file database (WAL, busy timeout); MariaDB runs it",
)
@pytest.mark.django_db(transaction=True)
def test_a_running_import_ended_from_elsewhere_stops_at_its_next_batch(user):
    # The run in one thread, as a worker or the node runner has it; the job ended from another
    # (what stopping a departed member's imports does) while it runs.
    rows = "\n".join(f"https://example.com/stop/{n}" for n in range(20_000))
    job = imports.link_import_queue(
        user=user, file_name="many.csv", data=f"long_url\n{rows}\n".encode()
    )
    runner = threading.Thread(target=imports.link_import_run, kwargs={"import_id": job.pk})
    runner.start()
    try:
        deadline = time.monotonic() + 120
        while not LinkImport.objects.filter(pk=job.pk, rows_done__gt=0).exists():
            assert time.monotonic() < deadline, "the import never started"
            time.sleep(0.05)
        assert imports.link_import_fail(job=job, reason="Stopped: its owner left.")
    finally:
        runner.join(timeout=300)
        connections.close_all()
    job.refresh_from_db()
    assert (job.status, job.error) == (ImportStatus.FAILED, "Stopped: its owner left.")
    assert job.report == {}
    made = UrlLink.objects.filter(owner=user).count()
    assert 0 < made < 20_000 and made <= job.rows_done + 1000  # at most the batch under way
