"""Issue #14's QR codes over HTTP against both deployments: the API's QR code at print size, and
scans through the QR code's own URL (`/<code>?qr=1`) counted apart from clicks on the short link,
without the marker ever reaching the destination."""

from __future__ import annotations

import struct
from urllib.parse import parse_qsl, urlsplit

import harness
from harness import HTTP_TIMEOUT

SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
)
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def _png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR", data[:32]
    return struct.unpack(">II", data[16:24])


def test_the_api_gives_the_qr_code_at_print_size_and_as_svg(deployment):
    code = harness.create_link(deployment, harness.unique_url("qr-file"))["code"]
    with deployment.api() as api:
        png = api.get(
            deployment.url(f"/api/v1/links/{code}/qr/"),
            params={"format": "png", "size": "2048"},
            timeout=HTTP_TIMEOUT,
        )
        svg = api.get(
            deployment.url(f"/api/v1/links/{code}/qr/"),
            params={"format": "svg"},
            timeout=HTTP_TIMEOUT,
        )
        refused = api.get(
            deployment.url(f"/api/v1/links/{code}/qr/"),
            params={"size": "300"},
            timeout=HTTP_TIMEOUT,
        )
    assert png.status_code == 200, png.text[:300]
    assert png.headers["Content-Type"] == "image/png"
    assert f'filename="{code}-qr-2048.png"' in png.headers["Content-Disposition"]
    assert _png_size(png.content) == (2048, 2048)
    assert svg.status_code == 200 and svg.headers["Content-Type"] == "image/svg+xml"
    assert b"<svg" in svg.content
    assert refused.status_code == 400
    assert refused.json() == {"size": ["Choose a size of 256, 512, 1024 or 2048 (pixels wide)."]}


def test_qr_scans_are_counted_apart_and_the_marker_never_reaches_the_destination(deployment):
    long_url = harness.unique_url("qr-scans")  # …?run=<hex>
    code = harness.create_link(deployment, long_url)["code"]
    run = long_url.rsplit("=", 1)[1]
    scans = [  # (path, visitor): two people scan, one of them with a campaign tag on top
        (f"/{code}?qr=1", {"X-Forwarded-For": "81.2.69.1", "User-Agent": SAFARI_IPHONE}),
        (
            f"/{code}?utm_source=poster&qr=1",
            {"X-Forwarded-For": "81.2.69.2", "User-Agent": SAFARI_IPHONE},
        ),
    ]
    for path, headers in scans:
        answer = harness.get_fresh(deployment.port, path, headers)
        assert answer.status == 302, f"GET {path} → {answer.status}"
        query = dict(parse_qsl(urlsplit(answer.location).query))
        assert "qr" not in query, f"GET {path} → {answer.location}: the marker was passed on"
        assert query["run"] == run
    assert query.get("utm_source") == "poster", "the visitor's own parameters still go on"
    click = harness.get_fresh(
        deployment.port, f"/{code}", {"X-Forwarded-For": "81.2.69.3", "User-Agent": SAFARI_IPHONE}
    )
    assert (click.status, click.location) == (302, long_url)
    bot = harness.get_fresh(deployment.port, f"/{code}?qr=1", {"User-Agent": GOOGLEBOT})
    assert bot.status == 302

    seen = harness.wait_for_visits(deployment, code, 4, timeout=40)
    assert seen.stored == 4, f"stored {seen.stored} of 4: {seen.history}"
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["bot_clicks"]) == (3, 1), stats
    assert stats["channels"] == [
        {"name": "QR code", "clicks": 2, "share": 66.7, "channel": "qr"},
        {"name": "Short link", "clicks": 1, "share": 33.3, "channel": "link"},
    ], f"how people came: {stats['channels']}"
