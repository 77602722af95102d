"""The floor for a redirect that records its visit: a bare WSGI app plus one Redis round trip."""

import os

import redis

_client = redis.Redis.from_url(os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3"))


def application(environ, start_response):
    _client.rpush("bench:floor", environ.get("PATH_INFO", ""))
    start_response(
        "302 Found",
        [("Location", "https://example.com/landing"), ("Content-Length", "0")],
    )
    return [b""]
