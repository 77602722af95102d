"""Health checks for operators and load balancers.

`/healthz`: the database, cache and broker, each `ok` or `down` (200 only when all are): what
monitoring watches. `/healthz/node`: only what this node needs of its own to serve redirects and
keep their visits (its state directory takes a write): what a load balancer in front of several
nodes checks. The database and Redis are shared by every node, so when they fail they fail
for all at once, and a balancer that took nodes out for it would answer 503 for every redirect
the nodes could still serve from their own link entries (their visits wait in each node's spool).

The answer is public, so it says no more than that: why a component is down (exception text
with host names, ports, database user names) goes to the log, where the operator reads it.
"""

import logging
import os
import threading

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse

from core.node_state import state_dir
from core.redis_conn import redis_client

logger = logging.getLogger("shorturl")


def static_files_collected() -> bool:
    """With DEBUG off, pages link hashed assets listed in collectstatic's manifest."""
    from django.contrib.staticfiles.storage import staticfiles_storage

    manifest = getattr(staticfiles_storage, "manifest_name", None)
    return manifest is None or staticfiles_storage.exists(manifest)


def warn_if_static_files_are_not_collected() -> None:
    if not settings.DEBUG and not static_files_collected():
        logger.warning(
            "Static files were not collected: pages render without their stylesheets. "
            "Run `python manage.py collectstatic --noinput` (make serve does it before starting)."
        )


OK, DOWN = "ok", "down"


def check_database() -> str | None:
    """None when the database answers, else why not (for the log)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - any failure is the answer
        return f"{exc.__class__.__name__}: {exc}"
    return None


def check_cache() -> str | None:
    try:
        # The cache swallows Redis errors (IGNORE_EXCEPTIONS), so ask the raw client directly.
        client = redis_client()
        if client is not None:
            client.ping()
        else:
            cache.set("healthz", "1", 5)
            if cache.get("healthz") != "1":
                return "the cache did not keep a value"
    except Exception as exc:  # noqa: BLE001
        return f"{exc.__class__.__name__}: {exc}"
    return None


def check_broker() -> str | None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    try:
        # The project's Celery app (shorturl_project.celery, loaded with the settings' package).
        with current_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001
        return f"{exc.__class__.__name__}: {exc}"
    return None


def check_node_state() -> str | None:
    """None when this node's state directory (visit spool, generation table) takes a write."""
    try:
        probe = state_dir() / f".healthz-{os.getpid()}-{threading.get_ident()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return None


CHECKS = {"db": check_database, "cache": check_cache, "broker": check_broker}
NODE_CHECKS = {"node_state": check_node_state}


def healthz(request: HttpRequest) -> JsonResponse:
    return _answer(CHECKS)


def node_healthz(request: HttpRequest) -> JsonResponse:
    return _answer(NODE_CHECKS)


def _answer(checks: dict) -> JsonResponse:
    report = {}
    for component, check in checks.items():
        problem = check()
        if problem is not None:
            logger.warning("Health check: %s is down: %s", component, problem)
        report[component] = OK if problem is None else DOWN
    healthy = all(value == OK for value in report.values())
    report["mode"] = "eager" if settings.CELERY_TASK_ALWAYS_EAGER else "services"
    return JsonResponse(report, status=200 if healthy else 503)
