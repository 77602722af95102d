"""Celery tasks for the visit pipeline: thin wrappers, the logic is in analytics.services.

Beat runs flush_visits_task every ANALYTICS_FLUSH_SECONDS (0.5 s) and aggregate_hourly_task every
ANALYTICS_AGGREGATE_SECONDS (10 s), as shorturl_project.jobs lists them. Both are safe to run
concurrently and to repeat.
"""

from celery import shared_task

from analytics import services

# A flush keeps taking batches while there is a backlog, but hands back the worker in time for
# the next beat tick; a parallel tick finds the lock taken and returns at once.
FLUSH_MAX_SECONDS = 10.0


@shared_task(ignore_result=True)
def flush_visits_task() -> int:
    return services.flush_pending(max_seconds=FLUSH_MAX_SECONDS)


@shared_task(ignore_result=True)
def aggregate_hourly_task() -> int:
    return services.aggregate_hourly()


@shared_task(ignore_result=True)
def apply_retention_task() -> int:
    return services.apply_retention().visits


@shared_task(ignore_result=True)
def visitor_keys_sweep_task() -> int:
    return services.visitor_keys_sweep()
