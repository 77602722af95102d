"""The Celery app: settings come from Django's `CELERY_*` names, tasks from each app's tasks.py,
beat's schedule from the one list of periodic jobs (shorturl_project.jobs)."""

import os

from celery import Celery

# Its signal handlers stop a worker that stays up but consumes nothing (its docstring says why).
from shorturl_project import worker_watchdog  # noqa: F401

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")

app = Celery("shorturl")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _schedule_periodic_jobs(sender: Celery, **kwargs) -> None:
    """Beat's schedule, built when the configuration is first read: the jobs' intervals are
    Django settings, which the settings module cannot read from here while it is loading."""
    from shorturl_project.jobs import beat_schedule

    sender.conf.beat_schedule = beat_schedule()
