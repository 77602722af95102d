from celery import shared_task

from links.codes import pool
from links.imports import service as imports
from links.services import health


@shared_task(ignore_result=True, soft_time_limit=120, time_limit=150)
def refill_code_pool_task() -> int:
    """Top the code pool up when it is under its low-water mark (beat and shorten ask for it)."""
    return pool.pool_refill_if_low()


@shared_task(ignore_result=True, soft_time_limit=1800, time_limit=1900)
def link_import_task(import_id: int) -> None:
    """Import a file uploaded on the import page (services mode; the embedded mode's node runner
    runs them itself)."""
    imports.link_import_run(import_id=import_id)


@shared_task(ignore_result=True, soft_time_limit=60, time_limit=90)
def sweep_imports_task() -> int:
    """End the imports whose worker died mid-run, and send again those still waiting (beat, every
    IMPORT_SWEEP_SECONDS)."""
    return imports.link_import_sweep()


@shared_task(ignore_result=True, soft_time_limit=120, time_limit=150)
def check_link_health_task() -> int:
    """One tick of the destination health checker (beat, every LINK_CHECK_SECONDS), on the
    webhooks queue: it waits on other people's servers, never on the visits' worker."""
    return health.link_health_sweep()
