"""The server's entry point (scripts/serve: granian --interface rsgi): the WSGI application of
shorturl_project.wsgi, unchanged, behind `BufferedBodies`, which reads request bodies in the
event loop before a thread is taken (see shorturl_project/bodies.py).

WEB_THREADS keeps its meaning: the threads per process that run the app.
"""

import os

from django.conf import settings

from shorturl_project.bodies import BufferedBodies
from shorturl_project.wsgi import application as wsgi_application

application = BufferedBodies(
    wsgi_application,
    threads=int(os.environ.get("WEB_THREADS") or 4),
    max_bytes=settings.REQUEST_BODY_MAX_BYTES,
    grace=settings.REQUEST_BODY_TIMEOUT,
    min_rate=settings.REQUEST_BODY_MIN_RATE,
    buffer_bytes=settings.REQUEST_BODY_BUFFER_BYTES,
)
