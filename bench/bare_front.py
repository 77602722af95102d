"""The bare WSGI app of bare_wsgi.py behind the server's front (shorturl_project/bodies.py), as
scripts/serve runs the product: RSGI, the app on WEB_THREADS threads. Against bare_wsgi.py on
granian's own WSGI interface, in the same run, it shows what the front costs a redirect."""

import os

from bench.bare_wsgi import application as bare_wsgi
from shorturl_project.bodies import BufferedBodies

application = BufferedBodies(
    bare_wsgi,
    threads=int(os.environ.get("WEB_THREADS") or 4),
    max_bytes=6 * 1024 * 1024,
    grace=10.0,
    min_rate=16 * 1024,
    buffer_bytes=64 * 1024 * 1024,
)
