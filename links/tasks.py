from celery import shared_task

from .codes import pool


@shared_task(ignore_result=True, soft_time_limit=120, time_limit=150)
def refill_code_pool_task() -> int:
    """Top the code pool up when it is under its low-water mark (beat and shorten ask for it)."""
    return pool.pool_refill_if_low()
