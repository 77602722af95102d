"""WSGI entry point: short-code requests skip the middleware stack, everything else is plain Django.

A redirect needs no session, authentication, CSRF, messages or static-file lookup; the lean
handler serves `GET /<code>` straight from the URL resolver (see links/redirect.py).
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")

django_application = get_wsgi_application()

from links.hotpath import ShortCodeDispatcher  # noqa: E402 - needs Django set up first

application = ShortCodeDispatcher(django_application)
