"""QR codes of short links, as PNG at a chosen size or as SVG.

Every QR code made here encodes the short URL with the QR marker (`?qr=1`, core.channels),
so the redirect counts its scans apart from clicks on the short link and drops the marker
before the destination sees it.

A PNG is exactly the size asked for: whole pixels per module (a module split over uneven pixel
counts can blur when printed or scaled) and the rest of the width added to the quiet zone, which
is at least the four modules the standard asks for. segno draws the symbol; the PNG file is
written here (segno's own PNG writer only takes a whole-module scale, so 2048 px would come out
anywhere from 1,850 to 2,040 px).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import segno
from django.http import HttpResponse

from core.channels import qr_url

QUIET_ZONE = 4  # modules of white around the symbol (ISO/IEC 18004)
# Print sizes carry their resolution (pHYs): placed in a document they come out at the printed
# size they are meant for rather than at the program's screen default.
PRINT_DPI = 300
_INCH_CM = 2.54


@dataclass(frozen=True)
class QrSize:
    pixels: int
    use: str
    print_size: bool = False

    @property
    def printed_cm(self) -> float:
        """Width in centimetres printed at PRINT_DPI."""
        return round(self.pixels / PRINT_DPI * _INCH_CM, 1)

    @property
    def label(self) -> str:
        if self.print_size:
            return f"{self.pixels} px for {self.use} ({self.printed_cm:g} cm at {PRINT_DPI} dpi)"
        return f"{self.pixels} px for {self.use}"


# The sizes offered: a marketer picks by use, not by number.
SIZES = {
    size.pixels: size
    for size in (
        QrSize(256, "screens and e-mail"),
        QrSize(512, "slides and web pages"),
        QrSize(1024, "flyers and cards", print_size=True),
        QrSize(2048, "posters and banners", print_size=True),
    )
}
*_FIRST_SIZES, _LAST_SIZE = SIZES
SIZE_CHOICES_TEXT = f"{', '.join(map(str, _FIRST_SIZES))} or {_LAST_SIZE}"  # "256, … or 2048"
FORMATS = ("png", "svg")
CONTENT_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


class UnknownSize(ValueError):
    """A size that is not one of SIZES (or not a number at all)."""

    def __init__(self, asked: str):
        super().__init__(
            f"There is no QR code size “{asked}”: choose {SIZE_CHOICES_TEXT} (pixels wide)."
        )


def parse_size(value: str | None) -> int | None:
    """The size a `?size=` parameter asks for; None when it asks for none (the default)."""
    if value is None or not value.strip():
        return None
    text = value.strip().removesuffix("px")
    if not text.isdigit() or int(text) not in SIZES:
        raise UnknownSize(value.strip()[:20])
    return int(text)


def _symbol(short_url: str) -> segno.QRCode:
    # Level M survives a smudged print; short URLs keep the symbol small anyway.
    return segno.make(qr_url(short_url), error="m", micro=False)


def svg_inline(short_url: str) -> str:
    """An <svg> element to put in a page (segno writes it from the modules: nothing from the URL
    is echoed into the markup)."""
    return _symbol(short_url).svg_inline(scale=5, border=2, dark="#1d2330", svgclass="qr-svg")


def svg(short_url: str) -> bytes:
    """An SVG file, black on white with its quiet zone: a vector drawing, sharp at any size, so
    it has no size choice (10 units a module, as before)."""
    buffer = io.BytesIO()
    _symbol(short_url).save(
        buffer, kind="svg", scale=10, border=QUIET_ZONE, dark="#000", light="#fff"
    )
    return buffer.getvalue()


def png(short_url: str, size: int | None = None) -> bytes:
    """A PNG file `size` pixels square; without a size, 10 px a module (what the download gave
    before sizes existed, ~370 px for a short URL)."""
    symbol = _symbol(short_url)
    if size is None:
        buffer = io.BytesIO()
        symbol.save(buffer, kind="png", scale=10, border=QUIET_ZONE)
        return buffer.getvalue()
    rows = [bytes(row) for row in symbol.matrix]
    dpi = PRINT_DPI if SIZES[size].print_size else None
    return _png_file(size, _pixel_rows(rows, size), dpi=dpi)


def _pixel_rows(modules: list[bytes], size: int) -> Iterator[bytes]:
    """The image's rows, 1 bit a pixel (1 = white), for a `size`-pixel square holding the
    symbol `modules` (1 = dark) centred, as many whole pixels a module as fit with its quiet
    zone."""
    count = len(modules)
    scale = size // (count + 2 * QUIET_ZONE)
    margin = (size - count * scale) // 2  # the quiet zone and the spare pixels
    white = _packed("1" * size)
    for _ in range(margin):
        yield white
    for row in modules:
        bits = "".join("0" * scale if dark else "1" * scale for dark in row)
        line = _packed("1" * margin + bits + "1" * (size - margin - len(bits)))
        for _ in range(scale):
            yield line
    for _ in range(size - margin - count * scale):
        yield white


def _packed(bits: str) -> bytes:
    """A row of '0'/'1' pixels as PNG packs them: 8 a byte, first pixel in the high bit, the
    last byte padded."""
    padded = bits + "1" * (-len(bits) % 8)
    return int(padded, 2).to_bytes(len(padded) // 8, "big")


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_file(size: int, rows: Iterator[bytes], *, dpi: int | None) -> bytes:
    """A greyscale 1-bit PNG (the smallest a two-colour image gets: ~20 KB at 2048 px)."""
    header = struct.pack(">IIBBBBB", size, size, 1, 0, 0, 0, 0)  # 1-bit greyscale, no interlace
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 (None) on every row
    chunks = [_chunk(b"IHDR", header)]
    if dpi is not None:
        per_metre = round(dpi / _INCH_CM * 100)
        chunks.append(_chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)))
    chunks += [_chunk(b"IDAT", zlib.compress(raw, 9)), _chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def filename(code: str, fmt: str, size: int | None) -> str:
    """`<code>-qr-1024.png`; `<code>-qr.png` without a size, `<code>-qr.svg` always. Codes
    are letters, digits, '-' and '_' only, so the name needs no quoting in a header."""
    suffix = f"-{size}" if size and fmt == "png" else ""
    return f"{code}-qr{suffix}.{fmt}"


def file_response(*, code: str, short_url: str, fmt: str, size: int | None) -> HttpResponse:
    """The QR code of `code` as a file to download (the web page's and the API's)."""
    body = png(short_url, size) if fmt == "png" else svg(short_url)
    response = HttpResponse(body, content_type=CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename(code, fmt, size)}"'
    # The short URL's host is in the image: with SHORT_URL_BASE unset it depends on the request.
    response["Cache-Control"] = "private, max-age=300"
    return response
