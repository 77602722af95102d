"""A cached redirect through the production WSGI app, in-process (embedded mode): µs per call.

No server, no sockets: the Python cost of the redirect alone, which wrk's figures on this shared
2-core machine are too noisy to show in steps of a few per cent. Run it from the checkouts to
compare, alternating, in one session:

    .venv/bin/python bench/redirect_loop.py            # this checkout
    (cd ../other && /path/to/.venv/bin/python bench/redirect_loop.py)

It migrates a throw-away SQLite database, makes one link, warms every cache, then times 30,000
calls five times and prints the best.
"""

import io
import os
import sys
import tempfile
import time
from pathlib import Path

CALLS = 30_000
REPEATS = 5


def main() -> None:
    root = Path.cwd()
    workdir = tempfile.mkdtemp(prefix="redirect-loop-")
    os.environ.update(
        DATABASE_URL=f"sqlite:///{workdir}/db.sqlite3",
        NODE_STATE_DIR=f"{workdir}/state",
        DEBUG="0",
        SECRET_KEY="redirect-loop-" + "x" * 40,
        SHOW_DEV_WARNING="0",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DJANGO_SETTINGS_MODULE="shorturl_project.settings",
    )
    sys.path.insert(0, str(root))
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from links.services.create import link_create

    code = link_create(
        user=User.objects.create(username="loop"), long_url="https://example.com/landing"
    ).link.code
    import shorturl_project.embedded as embedded

    embedded.ensure_runner = lambda: None  # no background thread: only the redirect is timed
    from shorturl_project.wsgi import application

    def environ() -> dict:
        return {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": f"/{code}",
            "QUERY_STRING": "",
            "HTTP_HOST": "127.0.0.1:8000",
            "REMOTE_ADDR": "203.0.113.9",
            "HTTP_USER_AGENT": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
            "wsgi.input": io.BytesIO(),
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "wsgi.url_scheme": "http",
        }

    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    for _ in range(2000):
        application(environ(), start_response)
    assert statuses[-1].startswith("302"), statuses[-1]
    best = min(_timed(application, environ, start_response) for _ in range(REPEATS))
    print(f"{root}: {best:.2f} µs per cached redirect (best of {REPEATS} × {CALLS:,})")


def _timed(application, environ, start_response) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        application(environ(), start_response)
    return (time.perf_counter() - started) / CALLS * 1e6


if __name__ == "__main__":
    main()
