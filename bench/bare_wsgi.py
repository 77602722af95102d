"""The baseline: the least a WSGI app can do to answer a redirect."""


def application(environ, start_response):
    start_response(
        "302 Found",
        [("Location", "https://example.com/landing"), ("Content-Length", "0")],
    )
    return [b""]
