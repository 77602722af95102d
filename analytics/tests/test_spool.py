"""The embedded visit spool: every appended visit is stored once, whatever stops in between."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from analytics import services, spool
from analytics.models import HourlyClick, VisitRecord
from analytics.tests.visits import visit_message
from core.redis_conn import uses_redis


@pytest.fixture(autouse=True)
def _embedded_only():
    if uses_redis():
        pytest.skip("the spool is the embedded mode's buffer; this run has Redis")


def _spooled_lines() -> int:
    return sum(len(f.path.read_bytes().splitlines()) for f in spool.spool_files())


@pytest.mark.django_db
def test_appended_visits_are_stored_once_and_counted(make_link):
    link = make_link()
    for n in range(5):
        spool.append(visit_message(link, ip=f"198.51.100.{n}"))
    assert services.flush_pending() == 5
    assert services.flush_pending() == 0, "a second drain finds nothing new"
    services.aggregate_hourly()
    assert HourlyClick.objects.get(link=link).clicks == 5
    assert VisitRecord.objects.filter(link=link).count() == 5


@pytest.mark.django_db
def test_a_drain_that_lost_its_offset_does_not_count_twice(make_link):
    """The runner died after storing a batch but before noting how far it got."""
    link = make_link()
    for _ in range(3):
        spool.append(visit_message(link))
    services.flush_pending()
    for spooled in spool.spool_files():
        spooled.offset_path.unlink()
    spool.append(visit_message(link))
    assert services.flush_pending() == 1
    assert VisitRecord.objects.filter(link=link).count() == 4


@pytest.mark.django_db
def test_an_unfinished_line_waits_until_it_is_complete(make_link, settings):
    link = make_link()
    directory = Path(settings.NODE_STATE_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{spool.PREFIX}other{spool.SUFFIX}"
    full, partial = visit_message(link), visit_message(link)
    path.write_text(full + "\n" + partial[:20])
    # Held like a live writer holds its file.
    import fcntl

    with open(path, "a") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)
        assert services.flush_pending() == 1
        writer.write(partial[20:] + "\n")
        writer.flush()
        assert services.flush_pending() == 1
    assert VisitRecord.objects.filter(link=link).count() == 2
    assert path.exists(), "still there until a drain sees its writer gone"
    services.flush_pending()
    assert not path.exists(), "read to the end and abandoned: deleted"


@pytest.mark.django_db(transaction=True)
def test_visits_of_a_killed_process_are_stored(make_link, settings):
    """A web process appends, is SIGKILLed, and its file is stored and then removed."""
    link = make_link()
    script = textwrap.dedent(
        f"""
        import os, signal, django
        os.environ["DJANGO_SETTINGS_MODULE"] = "shorturl_project.settings"
        os.environ["NODE_STATE_DIR"] = {settings.NODE_STATE_DIR!r}
        django.setup()
        from analytics import spool
        for line in {[visit_message(link) for _ in range(50)]!r}:
            spool.append(line)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    env = {**os.environ, "SHOW_DEV_WARNING": "0"}
    result = subprocess.run([sys.executable, "-c", script], env=env, timeout=60, check=False)
    assert result.returncode == -9
    assert _spooled_lines() == 50
    assert services.flush_pending() == 50
    assert spool.spool_files() == [], "the dead process's file is gone once stored"
    assert VisitRecord.objects.filter(link=link).count() == 50


@pytest.mark.django_db
def test_a_process_moves_to_a_new_file_when_its_file_is_large(make_link, monkeypatch):
    link = make_link()
    monkeypatch.setattr(spool, "ROTATE_BYTES", 1)
    for _ in range(3):
        spool.append(visit_message(link))
    assert len(spool.spool_files()) == 3
    assert services.flush_pending() == 3
    # The file before the current one stays open (and locked) one rotation longer, in case a
    # thread was still writing to it: only the oldest is let go, and so deleted.
    assert len(spool.spool_files()) == 2
    spool.append(visit_message(link))
    assert services.flush_pending() == 1
    assert len(spool.spool_files()) == 2
    assert VisitRecord.objects.filter(link=link).count() == 4


def test_a_limited_drain_takes_a_backlog_in_steps_and_loses_nothing(settings):
    """The forwarder drains at most `limit` lines per run so that a backlog never holds up the
    node's runner; what it leaves is read by the next run, from where it stopped."""
    for n in range(25):
        spool.append(f'{{"n":{n}}}')
    seen: list[str] = []
    runs = []
    while True:
        read = spool.drain(seen.extend, batch_size=4, limit=10)
        if not read:
            break
        runs.append(read)
    assert runs == [12, 12, 1]  # whole batches of 4, stopping once 10 are read
    assert [line.strip() for line in seen] == [f'{{"n":{n}}}' for n in range(25)]
