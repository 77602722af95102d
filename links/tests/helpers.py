"""Helpers shared by the links tests (importable, unlike conftest files)."""

import io
import struct
import zlib
from wsgiref.util import setup_testing_defaults

from django.conf import settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from links.cache import LinkEntry

# Imported with the test module, not in a test: its first import runs django.setup(), whose
# logging configuration would drop the handlers a test's caplog put on the root logger.
from shorturl_project.wsgi import application


def client_for(user, **kwargs) -> APIClient:
    """An API client signed in with `user`'s token, as another system would call."""
    client = APIClient(**kwargs)
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def call_wsgi(
    path: str, method: str = "GET", query_string: str = "", extra: dict | None = None
) -> tuple[str, dict[str, str], bytes]:
    """(status line, headers, body) of one request to the production WSGI entry point, the way
    the server calls it: short codes take the fast path, everything else goes through Django."""
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, "wsgi.input": io.BytesIO()}
    setup_testing_defaults(environ)
    environ["QUERY_STRING"] = query_string
    environ["HTTP_HOST"] = "testserver"
    environ.update(extra or {})  # headers (HTTP_…), REMOTE_ADDR
    captured = {}

    def start_response(status, headers, exc_info=None):
        captured["status"], captured["headers"] = status, dict(headers)

    body = b"".join(application(environ, start_response))
    return captured["status"], captured["headers"], body


def read_png(data: bytes) -> dict:
    """What a PNG file says about itself: width, height, pixels per metre (None without a pHYs
    chunk), and for unfiltered 1-bit greyscale images (links.qr's) the pixel rows, 1 = white,
    decoded here independently of the writer."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), "not a PNG file"
    chunks, offset = {}, 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + body), f"bad CRC in {kind!r}"
        chunks[kind] = chunks.get(kind, b"") + body  # IDAT may come in several chunks
        offset += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    info = {"width": width, "height": height, "per_metre": None, "rows": None}
    if b"pHYs" in chunks:
        per_x, per_y, unit = struct.unpack(">IIB", chunks[b"pHYs"])
        assert unit == 1 and per_x == per_y
        info["per_metre"] = per_x
    if (depth, colour) == (1, 0):
        raw = zlib.decompress(chunks[b"IDAT"])
        stride = 1 + (width + 7) // 8
        assert len(raw) == stride * height
        lines = [raw[y * stride : (y + 1) * stride] for y in range(height)]
        if all(line[0] == 0 for line in lines):  # filter type 0 on every row: bits as they are
            info["rows"] = [
                [(line[1 + x // 8] >> (7 - x % 8)) & 1 for x in range(width)] for line in lines
            ]
    return info


def tagged_link(user, n: int, tags: list[str], workspace=None):
    """A new link of `user`'s (the n-th: its own URL) carrying `tags`."""
    from links.services.create import link_create

    return link_create(
        user=user, long_url=f"https://example.com/{n}", tags=tags, workspace=workspace
    ).link


def tag_names(link) -> list[str]:
    """The names of a link's tags, sorted."""
    return sorted(link.tags.values_list("name", flat=True))


def redis_calls(command: str) -> int:
    """How many times the Redis server has run `command` (INFO commandstats; 0 without Redis):
    a test reads it before and after to count a step's round trips."""
    from core.redis_conn import redis_client, uses_redis

    if not uses_redis():
        return 0
    stats = redis_client().info("commandstats").get(f"cmdstat_{command}", {})
    return int(stats.get("calls", 0))


# A cache entry with every gate (password, cap, rules, variants): the tests of its encoding
# (links/tests/test_cache.py) and of the fused read (serving/tests/test_fused_read.py).
GATED_ENTRY = LinkEntry(
    code="Gated12",
    link_id=7,
    location="https://example.com/main?x=1",
    redirect_type=302,
    expires_at=None,
    revoked=False,
    pass_query=False,
    password_hash="pbkdf2_sha256$1000000$salt$hash=",
    max_visits=10,
    rules=({"device": "mobile", "country": "CN", "location": "https://example.cn/m\tx"},),
    variants=(("https://example.com/a", 70), ("https://example.com/b", 30)),
)


def database_url() -> str:
    """The test database (MySQL) as a DATABASE_URL, for a process the test starts."""
    db = settings.DATABASES["default"]
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"mysql://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 3306}/{db['NAME']}"
