"""The periodic jobs, each listed once: in services mode Celery beat sends each one's task (the
schedule shorturl_project.celery builds from this list), in the embedded mode the node's runner
calls each one's function itself (shorturl_project.embedded). A job added here runs in both.

Strings only, no app imported: the Celery app reads this before Django's apps are ready. The
intervals are settings' (read when the schedule is built), so an environment variable changes
them in both modes.

The node runner's own jobs (the code filter and code set, visit caps, forwarding the spool,
starting uploaded imports) keep each node's memory and files in step, not the database: one per
node, not one per cluster, so beat has none of them (shorturl_project.embedded lists them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

# The embedded runner threads (each elected on its own lock file, shorturl_project.embedded).
RUNNER = "runner"
WEBHOOKS = "webhooks"
LINK_CHECKS = "link-checks"


@dataclass(frozen=True)
class PeriodicJob:
    name: str  # beat's entry, and the runner's name for it in its logs
    task: str  # the Celery task beat sends (services mode)
    function: str  # what the embedded runner calls: the task's own work
    every: str  # the setting that says how many seconds apart it runs
    # The embedded runner's setting, where it runs more often than beat (no broker in between).
    embedded_every: str = ""
    expires: int = 60  # beat: a run no worker has taken within this many seconds is dropped
    runner: str = RUNNER  # the embedded runner thread that runs it
    kwargs: dict = field(default_factory=dict)  # for the embedded call

    def seconds(self, *, embedded: bool = False) -> float:
        """Seconds between runs: beat's, or the embedded runner's."""
        name = self.embedded_every if embedded and self.embedded_every else self.every
        return float(getattr(settings, name))


PERIODIC_JOBS: tuple[PeriodicJob, ...] = (
    PeriodicJob(
        name="flush-visits",
        task="analytics.tasks.flush_visits_task",
        function="analytics.services.flush_pending",
        every="ANALYTICS_FLUSH_SECONDS",
        embedded_every="EMBEDDED_FLUSH_SECONDS",
        expires=10,
    ),
    PeriodicJob(
        name="aggregate-hourly",
        task="analytics.tasks.aggregate_hourly_task",
        function="analytics.services.aggregate_hourly",
        every="ANALYTICS_AGGREGATE_SECONDS",
        embedded_every="EMBEDDED_AGGREGATE_SECONDS",
        expires=60,
    ),
    # Raw visits past their workspace's retention (analytics.services.retention).
    PeriodicJob(
        name="apply-retention",
        task="analytics.tasks.apply_retention_task",
        function="analytics.services.apply_retention",
        every="ANALYTICS_RETENTION_SECONDS",
        expires=600,
    ),
    # Privacy modes "truncated" and "none": the secrets of ended visitor-id windows deleted
    # (analytics.services.privacy), in every deployment whatever its default mode, since a
    # workspace may choose one of them.
    PeriodicJob(
        name="sweep-visitor-keys",
        task="analytics.tasks.visitor_keys_sweep_task",
        function="analytics.services.visitor_keys_sweep",
        every="ANALYTICS_VISITOR_KEY_SWEEP_SECONDS",
        expires=60,
    ),
    PeriodicJob(
        name="refill-code-pool",
        task="links.tasks.refill_code_pool_task",
        function="links.codes.pool.pool_refill_if_low",
        every="SHORTURL_POOL_CHECK_SECONDS",
        expires=120,
    ),
    PeriodicJob(
        name="sweep-imports",
        task="links.tasks.sweep_imports_task",
        function="links.imports.service.link_import_sweep",
        every="IMPORT_SWEEP_SECONDS",
        expires=60,
    ),
    # A thread of its own in the embedded mode: a receiver that takes its whole timeout to
    # answer must never hold up storing visits (services mode: the webhooks queue's worker).
    PeriodicJob(
        name="deliver-due-webhooks",
        task="webhooks.tasks.deliver_due_webhooks_task",
        function="webhooks.services.webhook_deliver_due",
        every="WEBHOOK_CHECK_SECONDS",
        expires=30,
        runner=WEBHOOKS,
        kwargs={"max_seconds": 30.0},
    ),
    # Destination health (links.services.health): it waits on other people's servers too, in a
    # thread of its own (embedded mode) so that a slow destination never holds up webhooks;
    # services mode: the webhooks queue's worker (settings.CELERY_TASK_ROUTES).
    PeriodicJob(
        name="check-link-health",
        task="links.tasks.check_link_health_task",
        function="links.services.health.link_health_sweep",
        every="LINK_CHECK_SECONDS",
        expires=60,
        runner=LINK_CHECKS,
    ),
)


def beat_schedule() -> dict[str, dict]:
    """Celery beat's schedule (its `beat_schedule` setting), one entry per job."""
    return {
        job.name: {
            "task": job.task,
            "schedule": job.seconds(),
            "options": {"expires": job.expires},
        }
        for job in PERIODIC_JOBS
    }
