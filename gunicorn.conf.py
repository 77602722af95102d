"""gunicorn settings for `make serve` (scripts/serve), all from the environment.

WEB_CONCURRENCY processes (default: one per core, at least 2) with WEB_THREADS threads each
(default 4): the threads keep connections alive and overlap the waits on the database, while
separate processes use every core. HOST/PORT say where to listen.
"""

import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = f"{os.environ.get('HOST', '127.0.0.1')}:{_int('PORT', 8000)}"
workers = _int("WEB_CONCURRENCY", max(2, os.cpu_count() or 1))
threads = _int("WEB_THREADS", 4)
worker_class = "gthread"
keepalive = _int("WEB_KEEPALIVE", 5)
timeout = _int("WEB_TIMEOUT", 30)
graceful_timeout = _int("WEB_GRACEFUL_TIMEOUT", 20)
# Access logs cost a few percent of redirect throughput; a proxy in front usually keeps them.
accesslog = "-" if os.environ.get("ACCESS_LOG", "0") not in ("", "0") else None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
pidfile = os.environ.get("PIDFILE") or None
