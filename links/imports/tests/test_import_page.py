"""The import page (/dashboard/import/) as a marketer uses it: upload a file, watch it being
imported in the background, read the report; and the export downloads beside it. The background
run is the one each mode has: the embedded node runner's import thread, or the Celery task."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from core.redis_conn import uses_redis
from links import tasks
from links.imports import service as imports
from links.models import ImportStatus, LinkImport, UrlLink
from links.services.create import link_create
from shorturl_project import embedded
from workspaces.selectors import personal_workspace_of

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
PAGE = "/dashboard/import/"


def upload(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    data = content if content is not None else (FIXTURES / name).read_bytes()
    return SimpleUploadedFile(name, data, content_type="text/csv")


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def post_file(client, name: str, content: bytes | None = None, **fields):
    data = {"file": upload(name, content), "file_format": "", "on_taken_code": "new", **fields}
    return client.post(PAGE, data)


def test_the_page_needs_a_signed_in_user(client):
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_an_upload_is_imported_in_the_background_and_the_page_shows_its_report(
    signed_in, user, other_user, settings
):
    settings.SHORT_URL_BASE = ""
    link_create(user=other_user, long_url="https://rival.example.com/", alias="taken-code")
    page = signed_in.get(PAGE)
    assert page.status_code == 200
    assert b'enctype="multipart/form-data"' in page.content

    response = post_file(signed_in, "bitly_api_fields.csv")
    job = LinkImport.objects.get(owner=user)
    assert response.status_code == 302
    assert response["Location"] == f"/dashboard/import/{job.pk}/"
    # Nothing is imported while the request runs: the page says it waits, and follows it.
    waiting = signed_in.get(response["Location"]).content.decode()
    assert "Waiting to start" in waiting
    progress_url = f"/dashboard/import/{job.pk}/progress.json"
    assert f'data-progress-url="{progress_url}"' in waiting
    assert signed_in.get(progress_url).json() == {
        "status": "queued",
        "rows_done": 0,
        "rows_total": 0,
        "finished": False,
        "interrupted": False,
    }
    assert not UrlLink.objects.filter(owner=user).exists()

    assert imports.link_import_run_queued() == 1  # what the node runner does in the background
    assert signed_in.get(progress_url).json()["finished"] is True
    done = signed_in.get(response["Location"]).content.decode()
    assert "data-progress-url" not in done
    assert "Imported 6 links (3 with their old codes, 3 with new codes); skipped 5" in done
    assert "Only http and https URLs can be shortened." in done
    assert 'data-row="5"' in done and 'data-row="10"' in done
    assert "Repeats line 2 of the file." in done
    assert "“taken-code” is already taken on this domain." in done
    assert signed_in.get("/spring-sale")["Location"] == (
        "https://shop.example.com/spring?utm_source=bitly"
    )
    job.refresh_from_db()
    assert (job.status, job.rows_done, job.rows_total, bytes(job.data)) == (
        ImportStatus.DONE,
        11,
        11,
        b"",
    )

    report = signed_in.get(f"/dashboard/import/{job.pk}/report.csv")
    assert report["Content-Disposition"] == f'attachment; filename="import-{job.pk}-report.csv"'
    rows = list(csv.DictReader(io.StringIO(report.content.decode())))
    assert len(rows) == 11
    # Full short URLs on the page's host, SHORT_URL_BASE being unset (issue #27).
    kept = next(row for row in rows if row["code"] == "spring-sale")
    assert kept["short_url"] == "http://testserver/spring-sale"
    assert rows[3] == {
        "line": "5",
        "outcome": "skipped",
        "old_code": "ftp-files",
        "code": "",
        "short_url": "",
        "long_url": "ftp://files.example.com/brochure.pdf",
        "reason": "Only http and https URLs can be shortened.",
    }
    listed = signed_in.get(PAGE).content.decode()
    assert "bitly_api_fields.csv" in listed and "See the report" in listed


def test_the_upload_form_posts_only_with_its_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(PAGE, {"file": upload("plain.csv"), "on_taken_code": "new"})
    assert response.status_code == 403
    assert not LinkImport.objects.exists()


def test_a_file_too_large_or_of_no_known_format_is_refused_on_the_form(signed_in, settings):
    settings.SHORTURL_IMPORT_MAX_BYTES = 100
    response = post_file(signed_in, "kutt.json")
    assert response.status_code == 400
    assert "Files can be at most 100\xa0bytes here" in response.content.decode()
    settings.SHORTURL_IMPORT_MAX_BYTES = 5 * 2**20
    response = post_file(signed_in, "notes.txt", b"Just some notes.\nNothing else.\n")
    assert response.status_code == 400
    assert "The format could not be told from the content" in response.content.decode()
    assert not LinkImport.objects.exists()


def test_a_check_only_upload_reports_and_imports_nothing(signed_in, user):
    response = post_file(signed_in, "yourls_dump.sql", dry_run="on")
    imports.link_import_run_queued()
    page = signed_in.get(response["Location"]).content.decode()
    assert "Would import 8 links" in page
    assert "a check only: nothing is imported" in page
    assert not UrlLink.objects.exists()


def test_a_file_that_turns_out_unreadable_fails_with_the_reason(signed_in):
    response = post_file(signed_in, "plain.csv", file_format="kutt")
    imports.link_import_run_queued()
    page = signed_in.get(response["Location"]).content.decode()
    assert "Failed" in page
    assert "this is not valid JSON" in page


def test_an_import_whose_process_ended_shows_as_interrupted(signed_in, user):
    job = LinkImport.objects.create(
        owner=user,
        workspace=personal_workspace_of(user),
        file_name="big.csv",
        status=ImportStatus.RUNNING,
    )
    LinkImport.objects.filter(pk=job.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    page = signed_in.get(f"/dashboard/import/{job.pk}/").content.decode()
    assert "Interrupted" in page and "data-progress-url" not in page
    imports.link_import_sweep()  # the periodic sweep (beat, node runner)
    job.refresh_from_db()
    assert job.status == ImportStatus.FAILED and "interrupted" in job.error


def test_someone_elses_import_is_not_found(signed_in, other_user):
    job = LinkImport.objects.create(
        owner=other_user, workspace=personal_workspace_of(other_user), file_name="theirs.csv"
    )
    assert signed_in.get(f"/dashboard/import/{job.pk}/").status_code == 404
    assert signed_in.get(f"/dashboard/import/{job.pk}/report.csv").status_code == 404
    assert signed_in.get(f"/dashboard/import/{job.pk}/progress.json").status_code == 404


def test_services_mode_queues_the_celery_task_once_the_upload_is_committed(
    signed_in, user, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []
    monkeypatch.setattr(
        "links.imports.service.current_app.send_task",
        lambda name, args: sent.append((name, args)),
    )
    with django_capture_on_commit_callbacks(execute=True):
        post_file(signed_in, "plain.csv")
    job = LinkImport.objects.get()
    assert sent == [("links.tasks.link_import_task", [job.pk])]
    tasks.link_import_task(job.pk)  # what the worker runs
    job.refresh_from_db()
    assert job.status == ImportStatus.DONE
    assert UrlLink.objects.filter(owner=user, code="plain-one").exists()
    tasks.link_import_task(job.pk)  # delivered twice: the second does nothing
    assert UrlLink.objects.filter(owner=user).count() == 5


@pytest.mark.django_db(transaction=True)
def test_the_embedded_runner_imports_uploads_in_a_thread_of_their_own(user):
    if uses_redis():
        pytest.skip("the embedded mode's runner; with Redis a Celery task imports (tested above)")
    assert any(
        job.run is embedded.start_queued_imports
        for jobs in embedded._node_runners().values()
        for job in jobs
    )
    job = imports.link_import_queue(
        user=user, file_name="plain.csv", data=(FIXTURES / "plain.csv").read_bytes()
    )
    embedded.start_queued_imports()
    embedded._import_thread.join(timeout=60)
    job.refresh_from_db()
    assert job.status == ImportStatus.DONE
    assert UrlLink.objects.filter(owner=user, code="plain-one").exists()


def test_the_export_downloads_are_the_users_links_only(signed_in, user, other_user):
    link_create(user=user, long_url="https://www.example.com/mine", alias="mine-1", tags=["a"])
    link_create(user=other_user, long_url="https://www.example.com/theirs", alias="theirs")
    response = signed_in.get("/dashboard/export.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="links-')
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [(row["code"], row["tags"]) for row in rows] == [("mine-1", "a")]
    data = json.loads(b"".join(signed_in.get("/dashboard/export.json").streaming_content))
    assert [link["code"] for link in data["links"]] == ["mine-1"]
    assert Client().get("/dashboard/export.csv").status_code == 302
