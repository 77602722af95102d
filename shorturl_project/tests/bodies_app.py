"""A granian target for test_request_bodies.py (beside it): a WSGI app that tells what it received,
behind the server's BufferedBodies with the limits from the environment (small, for fast tests).
Django is not involved: the front is plain RSGI + WSGI."""

import json
import os

from shorturl_project.bodies import BufferedBodies


def echo(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (f"line {number}\n".encode() for number in range(1000))
    body = environ["wsgi.input"].read()
    if body and os.environ.get("BODIES_LOG"):
        with open(os.environ["BODIES_LOG"], "a") as log:
            log.write(f"{len(body)}\n")
    keys = ("CONTENT_LENGTH", "CONTENT_TYPE", "PATH_INFO", "QUERY_STRING", "REMOTE_ADDR")
    seen = {key: environ.get(key) for key in keys}
    seen |= {key: value for key, value in environ.items() if key.startswith("HTTP_")}
    seen["body"] = body.decode("latin-1")
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(seen).encode()]


def make_app():
    return BufferedBodies(
        echo,
        threads=int(os.environ["BODIES_THREADS"]),
        max_bytes=int(os.environ["BODIES_MAX_BYTES"]),
        grace=float(os.environ["BODIES_GRACE"]),
        min_rate=int(os.environ["BODIES_MIN_RATE"]),
        buffer_bytes=int(os.environ["BODIES_BUFFER_BYTES"]),
    )
