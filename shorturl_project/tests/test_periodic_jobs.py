"""One list of periodic jobs (shorturl_project.jobs) builds both Celery beat's schedule (services
mode, `make beat`) and the embedded runner's jobs: the two run the same jobs, each at the
interval its setting gives (#26)."""

from __future__ import annotations

import functools

from celery import current_app
from django.utils.module_loading import import_string

from shorturl_project import embedded
from shorturl_project.celery import app
from shorturl_project.jobs import PERIODIC_JOBS, beat_schedule


def _embedded_jobs(monkeypatch) -> dict[str, embedded.Job]:
    monkeypatch.setattr(embedded, "uses_redis", lambda: False)
    return {job.name: job for jobs in embedded._node_runners().values() for job in jobs}


def test_each_job_is_listed_once():
    names = [job.name for job in PERIODIC_JOBS]
    assert len(names) == len(set(names))


def test_beat_and_the_embedded_runner_run_the_same_jobs(monkeypatch):
    beat = app.conf.beat_schedule  # what `celery -A shorturl_project beat` reads
    runner = _embedded_jobs(monkeypatch)
    for job in PERIODIC_JOBS:
        assert beat[job.name]["task"] == job.task
        assert runner[job.name].run.func is import_string(job.function)
    assert set(beat) == {job.name for job in PERIODIC_JOBS}
    assert set(beat) <= set(runner)


def test_every_beat_entry_names_a_task_the_worker_has():
    app.loader.import_default_modules()  # the worker's autodiscovery
    for entry in app.conf.beat_schedule.values():
        assert entry["task"] in current_app.tasks, entry


def test_intervals_come_from_the_settings_in_both_modes(settings, monkeypatch):
    settings.ANALYTICS_FLUSH_SECONDS = 3.5
    settings.EMBEDDED_FLUSH_SECONDS = 0.5
    settings.IMPORT_SWEEP_SECONDS = 42.0
    schedule = beat_schedule()
    runner = _embedded_jobs(monkeypatch)
    assert schedule["flush-visits"]["schedule"] == 3.5
    assert runner["flush-visits"].every == 0.5  # no broker in between: more often
    assert schedule["sweep-imports"]["schedule"] == runner["sweep-imports"].every == 42.0
    assert schedule["flush-visits"]["options"] == {"expires": 10}


def test_the_embedded_webhook_job_has_a_thread_of_its_own_and_a_time_budget(monkeypatch):
    monkeypatch.setattr(embedded, "uses_redis", lambda: False)
    [job] = embedded._node_runners()[embedded.WEBHOOKS_LOCK]
    assert isinstance(job.run, functools.partial)
    assert job.run.keywords == {"max_seconds": 30.0}


def test_the_link_checker_runs_in_both_modes_in_a_lane_of_its_own(monkeypatch, settings):
    """Destination health (issue #29): in the embedded mode a thread of its own, so a slow
    destination never holds up webhooks or visits; in services mode beat's entry on the
    webhooks queue, never the worker that stores visits."""
    settings.LINK_CHECK_SECONDS = 7.0
    monkeypatch.setattr(embedded, "uses_redis", lambda: False)
    [job] = embedded._node_runners()[embedded.LINK_CHECKS_LOCK]
    assert job.name == "check-link-health" and job.every == 7.0
    entry = beat_schedule()["check-link-health"]
    assert entry["task"] == "links.tasks.check_link_health_task" and entry["schedule"] == 7.0
    route = app.amqp.router.route({}, "links.tasks.check_link_health_task")
    assert route["queue"].name == "webhooks"
