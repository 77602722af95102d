"""Celery tasks for webhooks: thin wrappers, the logic is in webhooks.services.

A delivery's task is sent when it is made; beat runs deliver_due_webhooks_task every few seconds
(shorturl_project.jobs) for the retries and any task lost. Both are safe to repeat.
Both go to the `webhooks` queue (settings.CELERY_TASK_ROUTES), whose own worker
(`make webhook-worker`) is the only one that waits on receivers.
"""

from celery import shared_task

from webhooks import services

# A sweep hands back the worker in time for the next beat tick.
SWEEP_MAX_SECONDS = 30.0


@shared_task(ignore_result=True)
def deliver_webhook_task(delivery_id: int) -> bool | None:
    return services.webhook_delivery_attempt(delivery_id=delivery_id)


@shared_task(ignore_result=True)
def deliver_due_webhooks_task() -> int:
    return services.webhook_deliver_due(max_seconds=SWEEP_MAX_SECONDS)
