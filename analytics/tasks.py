"""Celery tasks for the visit pipeline. Placeholders until the analytics pipeline lands."""

from celery import shared_task


@shared_task(ignore_result=True)
def flush_visits_task() -> int:
    return 0


@shared_task(ignore_result=True)
def aggregate_hourly_task() -> int:
    return 0
