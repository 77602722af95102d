"""The QR designer (#28) against both deployments, as an API client would use it: a design with
colours and an uploaded PNG logo is PUT over the API (multipart), then the PNG and SVG downloads
come from the QR endpoint in that design. The PNG decodes to the short URL with its `?qr=1`
marker (zxing-cpp, a dev dependency of this test process; the server's install has
requirements.txt alone), the SVG is a well-formed drawing with the logo embedded as a PNG, and
the logo is kept by the server's storage (read back after a second request).
"""

from __future__ import annotations

import io
import struct
import zlib
from xml.etree import ElementTree

import harness
import zxingcpp
from harness import HTTP_TIMEOUT
from PIL import Image

NAVY, CREAM = "#1d2a5c", "#fff4d6"


def _logo_png(size: int = 64) -> bytes:
    """A red square with a white cross, as a PNG written by hand (8-bit RGB)."""
    rows = []
    for y in range(size):
        row = bytearray()
        for x in range(size):
            cross = abs(x - size // 2) < size // 8 or abs(y - size // 2) < size // 8
            row += b"\xff\xff\xff" if cross else b"\xe1\x1d\x48"
        rows.append(b"\x00" + bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


def test_a_design_put_over_the_api_is_downloaded_as_png_and_svg(deployment):
    made = harness.create_link(deployment, harness.unique_url("qr-designer"))
    code, short_url = made["code"], made["short_url"]
    design_path = f"/api/v1/links/{code}/qr-design/"

    with deployment.api() as api:
        too_pale = api.put(
            deployment.url(design_path), json={"foreground": "#dddddd"}, timeout=HTTP_TIMEOUT
        )
        assert too_pale.status_code == 400, too_pale.text
        assert "too close to scan" in too_pale.json()["foreground"][0]

        answer = api.put(
            deployment.url(design_path),
            data={"foreground": NAVY, "background": CREAM, "error_level": "m"},
            files={"logo": ("brand.png", _logo_png(), "image/png")},
            timeout=HTTP_TIMEOUT,
        )
        assert answer.status_code == 200, answer.text
        design = answer.json()
        assert (design["has_logo"], design["error_level"]) == (True, "h"), design

        png = api.get(design["png_url"] + "&size=512", timeout=HTTP_TIMEOUT)
        svg = api.get(design["svg_url"], timeout=HTTP_TIMEOUT)
        again = api.get(deployment.url(design_path), timeout=HTTP_TIMEOUT).json()

    assert png.status_code == 200 and png.headers["Content-Type"] == "image/png", png.text[:300]
    assert png.headers["Content-Disposition"] == f'attachment; filename="{code}-qr-512.png"'
    with Image.open(io.BytesIO(png.content)) as image:
        assert image.size == (512, 512)
        rgb = image.convert("RGB")
        assert rgb.getpixel((2, 2)) == (0xFF, 0xF4, 0xD6)  # the cream quiet zone
        found = [hit.text for hit in zxingcpp.read_barcodes(rgb)]
    assert found == [f"{short_url}?qr=1"], found

    assert svg.status_code == 200 and svg.headers["Content-Type"] == "image/svg+xml"
    assert "default-src 'none'" in svg.headers["Content-Security-Policy"]
    root = ElementTree.fromstring(svg.content)  # noqa: S314  # our own server's answer
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    images = [el for el in root.iter() if el.tag.endswith("image")]
    assert len(images) == 1 and images[0].get("href", "").startswith("data:image/png;base64,")
    assert not [el for el in root.iter() if el.tag.endswith("script")]
    assert NAVY in svg.text and CREAM in svg.text

    assert again["has_logo"] is True and again["foreground"] == NAVY  # kept in storage
