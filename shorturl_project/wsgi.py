"""WSGI entry point: short-code requests skip the middleware stack, everything else is plain Django.

A redirect needs no session, authentication, CSRF, messages or static-file lookup; the lean
handler serves `GET /<code>` straight from the URL resolver (see serving/redirect.py). Each process
also starts the node's background runner on its first request (after any fork): without Redis it
does what the Celery worker does in services mode; with Redis it forwards spooled visits and
applies other nodes' link changes (shorturl_project.embedded).
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")

django_application = get_wsgi_application()

# Imported after setup: they need Django's settings and apps.
from core.health import warn_if_static_files_are_not_collected  # noqa: E402
from serving.hotpath import ShortCodeDispatcher  # noqa: E402
from shorturl_project.embedded import WithBackgroundJobs  # noqa: E402

warn_if_static_files_are_not_collected()
# Always, in both modes: with Redis the node's runner also sends the Redis part of changes made
# while Redis was out of reach and loads the code set, whatever SHORTURL_LOCAL_REDIRECTS says.
application = WithBackgroundJobs(ShortCodeDispatcher(django_application))
