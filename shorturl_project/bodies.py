"""Request bodies read in the event loop, before a thread is taken; the WSGI app in a thread pool.

A WSGI server hands each request to a thread as soon as its headers arrive, and the app's
`wsgi.input.read()` then blocks that thread until the client has sent its body. A client that
announces a body and sends a byte every few seconds holds a thread for as long as it likes; a
handful of them (WEB_THREADS per process) stopped every redirect, the API and `/healthz`
(security round 3, finding 1). A deadline inside the thread cannot help: the read blocks in the
server's native code, and even a thread freed after N seconds is taken again by the next slow
client.

So the server runs this RSGI app (granian's native async interface): for a request with a body
it reads the whole body in the worker's event loop, where a slow client costs a few hundred
bytes and no thread, under

- a size cap (`max_bytes`): a bigger Content-Length is answered 413 before any byte is read;
- a deadline that follows a minimum rate: the body must arrive within `grace` seconds plus one
  second per `min_rate` bytes received so far (a client at least that fast is never cut off,
  one that stalls is cut off `grace` seconds after its last progress would have allowed);
- a bound on the bytes every body being buffered (or waiting for a thread) holds together in one
  process (`buffer_bytes`): past it a body is answered 503, so memory stays bounded whatever
  the number of uploads;

and answers 408/413/503 itself (JSON on the API and the other shorteners' API paths, a short
HTML page otherwise). Only then does it run the WSGI app, unchanged, on one of `threads`
threads with the body in memory and its CONTENT_LENGTH set (so a chunked body reaches Django
too: without a Content-Length it read an empty body). Requests without a body (the redirect)
go straight to the threads.

The environ is the one granian's own WSGI interface builds (see `_environ`), so the app cannot
tell the difference except for paths holding percent-encoded bytes that are not UTF-8, which
RSGI decodes as U+FFFD.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import io
import json
import queue
import sys
import threading
from collections.abc import Callable, Iterable

# The paths whose clients read JSON: our API and the other shorteners' APIs (compat/).
_JSON_PREFIXES = ("/api/", "/rest/", "/v4/", "/yourls-api.php")
_NO_BODY_METHODS = ("GET", "HEAD", "OPTIONS")
_PROTOCOLS = {"1": "HTTP/1", "1.1": "HTTP/1.1", "2": "HTTP/2", "3": "HTTP/3"}
# Header names seen so far → their environ keys; bounded, as clients choose the names. A body's
# Content-Length is set from the body read (a chunked one has none).
_HEADER_KEYS: dict[str, str] = {"content-type": "CONTENT_TYPE", "content-length": "CONTENT_LENGTH"}
_HEADER_KEYS_MAX = 512

_MESSAGES = {
    400: ("Bad Request", "The request body was cut short.", "Please send the request again."),
    408: (
        "Request Timeout",
        "The request body arrived too slowly.",
        "Please check your connection and send it again.",
    ),
    413: (
        "Request Entity Too Large",
        "The request body is too large.",
        "At most {max_bytes:,} bytes are accepted.",
    ),
    503: (
        "Service Unavailable",
        "The server is receiving too many uploads right now.",
        "Please try again in a moment.",
    ),
}


def _split_address(address: str) -> tuple[str, str]:
    """`1.2.3.4:80` or `[::1]:80` → (host, port), as granian's WSGI environ has them."""
    host, _, port = address.rpartition(":")
    if host.startswith("["):
        host = host[1:-1]
    return host, port


def _environ_key(name: str) -> str:
    key = _HEADER_KEYS.get(name)
    if key is None:
        key = "HTTP_" + name.upper().replace("-", "_")
        if len(_HEADER_KEYS) < _HEADER_KEYS_MAX:
            _HEADER_KEYS[name] = key
    return key


class _Pool:
    """`size` threads running jobs for one event loop; results come back as asyncio futures.

    Leaner than `loop.run_in_executor` (no concurrent.futures.Future to chain), and the loop is
    woken once for every batch of finished jobs rather than once per job: under load most
    finish while the loop is already due to look. The redirect is ~10-30 µs of Python, so the
    hand-off's cost shows in its rate.
    """

    def __init__(self, size: int, loop: asyncio.AbstractEventLoop):
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._finished: collections.deque = collections.deque()
        self._wake_due = False  # a _settle is scheduled and has not started yet
        self._loop = loop
        for number in range(size):
            threading.Thread(target=self._work, name=f"web-{number}", daemon=True).start()

    def run(self, fn: Callable, *args) -> asyncio.Future:
        future = self._loop.create_future()
        self._jobs.put((fn, args, future))
        return future

    def _work(self) -> None:
        get, finished = self._jobs.get, self._finished
        while True:
            fn, args, future = get()
            try:
                finished.append((future, fn(*args), None))
            except BaseException as exc:  # noqa: BLE001 - the awaiting request raises it
                finished.append((future, None, exc))
            if not self._wake_due:
                self._wake_due = True
                self._loop.call_soon_threadsafe(self._settle)
            del fn, args, future

    def _settle(self) -> None:
        # Cleared first: a job finishing from here on schedules another _settle.
        self._wake_due = False
        finished = self._finished
        while finished:
            future, result, exc = finished.popleft()
            if future.done():  # the request was cancelled meanwhile
                continue
            if exc is None:
                future.set_result(result)
            else:
                future.set_exception(exc)


def _finish(awaitable) -> None:
    """Drive one of granian's already-completed awaitables (a stream send) from a thread."""
    with contextlib.suppress(StopIteration):
        awaitable.__await__().__next__()


class BufferedBodies:
    """The RSGI app: see the module docstring. One per server process."""

    def __init__(
        self,
        application: Callable,
        *,
        threads: int,
        max_bytes: int,
        grace: float,
        min_rate: int,
        buffer_bytes: int,
    ):
        self.application = application
        self.threads = threads
        self.max_bytes = max_bytes
        self.grace = grace
        self.min_rate = min_rate
        self.buffer_bytes = buffer_bytes
        self.buffered = 0  # bytes held by bodies read or waiting for a thread (loop thread only)
        self._pool: _Pool | None = None
        self._server = ("", "", "")  # the listener's address: as given, host, port
        self._base_environ = {
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SCRIPT_NAME": "",
            "SERVER_SOFTWARE": "Granian",
            "wsgi.errors": sys.stderr,
            "wsgi.multiprocess": False,
            "wsgi.multithread": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
        }

    def __rsgi_init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._pool = _Pool(self.threads, loop)

    async def __rsgi__(self, scope, proto) -> None:
        if scope.proto != "http":  # websockets are off (--no-ws); nothing here speaks them
            return
        if self._pool is None:
            self._pool = _Pool(self.threads, asyncio.get_running_loop())
        headers = scope.headers
        if (
            "content-length" not in headers
            and "transfer-encoding" not in headers
            and scope.method in _NO_BODY_METHODS
        ):
            await self._pool.run(self._serve, scope, proto, headers, None)
            return
        await self._serve_with_body(scope, proto, headers)

    async def _serve_with_body(self, scope, proto, headers) -> None:
        declared = headers.get("content-length")
        if declared is not None:
            declared = int(declared) if declared.isdigit() else -1
            if declared > self.max_bytes:
                return self._refuse(scope, proto, 413)
        received = 0
        try:
            if declared == 0:
                body = b""
            else:
                status, received, body = await self._read_body(proto, declared)
                if status:
                    return self._refuse(scope, proto, status)
            await self._pool.run(self._serve, scope, proto, headers, body)
        finally:
            self.buffered -= received

    async def _read_body(self, proto, declared: int | None) -> tuple[int, int, bytes]:
        """(0, size, body) once the whole body is in, or (status, bytes counted, b"")."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        chunks: list[bytes] = []
        received = 0
        stream = proto.__aiter__()
        try:
            async with asyncio.timeout_at(start + self.grace) as deadline:
                while True:
                    chunk = await stream.__anext__()
                    if not chunk:  # the end (granian also ends a body this way on an error)
                        break
                    received += len(chunk)
                    self.buffered += len(chunk)
                    if received > self.max_bytes:
                        return 413, received, b""
                    if self.buffered > self.buffer_bytes:
                        return 503, received, b""
                    chunks.append(chunk)
                    deadline.reschedule(start + self.grace + received / self.min_rate)
        except TimeoutError:
            return 408, received, b""
        except StopAsyncIteration:
            pass
        except BaseException:  # cancelled: the caller never learns how much was counted
            self.buffered -= received
            raise
        if declared is not None and received != declared:
            return 400, received, b""
        return 0, received, b"".join(chunks)

    def _refuse(self, scope, proto, status: int) -> None:
        """Answer without the app, and close: the rest of the body is not worth reading."""
        reason, problem, advice = _MESSAGES[status]
        advice = advice.format(max_bytes=self.max_bytes)
        headers = [
            ("Connection", "close"),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
        ]
        if status in (408, 503):
            headers.append(("Retry-After", "5"))
        if scope.path.startswith(_JSON_PREFIXES):
            body = json.dumps({"detail": f"{problem} {advice}"})
            headers.append(("Content-Type", "application/json"))
        else:
            body = (
                '<!doctype html><html lang="en"><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>{reason} · shorturl</title></head>"
                '<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;'
                f'padding:0 1rem"><main><h1>{problem}</h1><p>{advice}</p>'
                '<p><a href="/">Home</a></p></main></body></html>'
            )
            headers += [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
            ]
        proto.response_str(status, headers, body)

    # --- on a pool thread ----------------------------------------------------------------------

    def _environ(self, scope, headers, body: bytes | None) -> dict:
        """What granian's WSGI interface builds (src/wsgi/callbacks.rs, build_wsgi). Lean: it
        costs as much as the redirect itself when written plainly."""
        environ = self._base_environ.copy()
        server = scope.server
        if server != self._server[0]:  # the same for every request of a listener
            self._server = (server, *_split_address(server))
        path = scope.path
        if not path.isascii():
            path = path.encode("utf-8").decode("latin-1")  # a WSGI string: bytes as latin-1
        client = scope.client
        environ["SERVER_PROTOCOL"] = _PROTOCOLS.get(scope.http_version, "HTTP/1")
        environ["SERVER_NAME"] = self._server[1]
        environ["SERVER_PORT"] = self._server[2]
        environ["REMOTE_ADDR"] = (
            client.rpartition(":")[0] if client[0] != "[" else client[1 : client.rindex("]")]
        )
        environ["REQUEST_METHOD"] = scope.method
        environ["PATH_INFO"] = path
        environ["QUERY_STRING"] = scope.query_string
        environ["wsgi.url_scheme"] = scope.scheme
        keys = _HEADER_KEYS
        for name, value in headers.items():
            key = keys.get(name) or _environ_key(name)
            if key in environ:  # a repeated header: one value, as granian joins them
                environ[key] += (";" if key == "HTTP_COOKIE" else ",") + value
            else:
                environ[key] = value
        if "HTTP_HOST" not in environ:
            environ["HTTP_HOST"] = scope.authority or ""
        if body is None:
            environ["wsgi.input"] = io.BytesIO()
        else:
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return environ

    def _serve(self, scope, proto, headers, body: bytes | None) -> None:
        # `headers` read once: each `scope.headers` is a copy of the whole map.
        environ = self._environ(scope, headers, body)
        response: list = []
        written: list[bytes] = []

        def start_response(status: str, headers: list, exc_info=None):
            if exc_info is not None and response:
                raise exc_info[1].with_traceback(exc_info[2])
            response[:] = [int(status[:3]), headers]
            return written.append

        result = self.application(environ, start_response)
        try:
            if isinstance(result, list) or getattr(result, "streaming", True) is False:
                content = b"".join(result)
                if written:
                    content = b"".join(written) + content
                proto.response_bytes(response[0], response[1], content)
            else:
                self._stream(proto, response, written, result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()

    @staticmethod
    def _stream(proto, response: list, written: list[bytes], result: Iterable[bytes]) -> None:
        """A streaming response (CSV exports, static files), iterated on this one thread: a
        generator may hold a database cursor of this thread's connection."""
        chunks = iter(result)
        first = next(chunks, b"")  # the app calls start_response at the latest here
        transport = proto.response_stream(response[0], response[1])
        for chunk in (*written, first):
            if chunk:
                _finish(transport.send_bytes(chunk))
        for chunk in chunks:
            if chunk:
                _finish(transport.send_bytes(chunk))
