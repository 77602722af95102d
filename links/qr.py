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

import base64
import io
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import segno
from django.http import HttpResponse
from PIL import Image

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


@dataclass(frozen=True)
class QrStyle:
    """How a QR code looks (a link's QrDesign, checked by links.services.qr_design): dark
    modules in `foreground` on `background` (#rrggbb), an error-correction level (l, m, q, h)
    and an optional centre logo, a PNG file (an uploaded SVG is stored rasterised)."""

    foreground: str = "#000000"
    background: str = "#ffffff"
    error: str = "m"
    logo_png: bytes | None = None

    @property
    def plain(self) -> bool:
        return self == PLAIN


# Level M survives a smudged print; short URLs keep the symbol small anyway.
PLAIN = QrStyle()
# The logo's width as a share of the symbol's: about 5 % of its area once its plate is added,
# well inside what level Q (25 %) or H (30 %) rebuilds.
LOGO_SHARE = 0.2


def _symbol(short_url: str, style: QrStyle = PLAIN) -> segno.QRCode:
    return segno.make(qr_url(short_url), error=style.error, micro=False, boost_error=False)


def svg_inline(short_url: str, style: QrStyle = PLAIN) -> str:
    """An <svg> element to put in a page (segno writes it from the modules: nothing from the URL
    is echoed into the markup), in the style's colours and with its logo when it has one."""
    if style.plain:
        return _symbol(short_url).svg_inline(scale=5, border=2, dark="#1d2330", svgclass="qr-svg")
    return _styled_svg(short_url, style, scale=5, border=2, inline=True).decode("ascii")


def svg(short_url: str, style: QrStyle = PLAIN) -> bytes:
    """An SVG file, black on white (or the style's colours) with its quiet zone: a vector
    drawing, sharp at any size, so it has no size choice (10 units a module, as before). A logo
    is embedded as a PNG data URI (never as SVG markup: nothing in the file can run)."""
    return _styled_svg(short_url, style, scale=10, border=QUIET_ZONE, inline=False)


def _styled_svg(short_url: str, style: QrStyle, *, scale: int, border: int, inline: bool) -> bytes:
    buffer = io.BytesIO()
    symbol = _symbol(short_url, style)
    plain = style.plain
    options = {"xmldecl": False, "svgns": False, "nl": False, "svgclass": "qr-svg"}
    symbol.save(
        buffer,
        kind="svg",
        scale=scale,
        border=border,
        dark="#000" if plain else style.foreground,
        light="#fff" if plain else style.background,
        **(options if inline else {}),
    )
    body = buffer.getvalue()
    if style.logo_png is None:
        return body
    count = len(symbol.matrix)
    plate, logo_box = _logo_boxes(style.logo_png, count * scale)
    offset = border * scale
    px, py, pw, ph = (value + (offset if i < 2 else 0) for i, value in enumerate(plate))
    lx, ly, lw, lh = (value + (offset if i < 2 else 0) for i, value in enumerate(logo_box))
    data = base64.b64encode(style.logo_png).decode("ascii")
    overlay = (
        f'<rect x="{px}" y="{py}" width="{pw}" height="{ph}" fill="{style.background}"/>'
        f'<image x="{lx}" y="{ly}" width="{lw}" height="{lh}" '
        f'href="data:image/png;base64,{data}"/>'
    ).encode("ascii")
    return body.replace(b"</svg>", overlay + b"</svg>", 1)


def _logo_boxes(logo_png: bytes, symbol_px: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where the logo goes in a symbol `symbol_px` wide (quiet zone excluded): its plate (the
    background-coloured square that keeps modules from touching it) and the logo itself, both
    (x, y, width, height) from the symbol's corner, centred, the logo's aspect kept."""
    with Image.open(io.BytesIO(logo_png)) as logo:
        width, height = logo.size
    side = max(1, round(symbol_px * LOGO_SHARE))
    if width >= height:
        logo_w, logo_h = side, max(1, round(side * height / width))
    else:
        logo_w, logo_h = max(1, round(side * width / height)), side
    pad = max(1, round(symbol_px * 0.02))
    plate_w, plate_h = logo_w + 2 * pad, logo_h + 2 * pad
    plate = ((symbol_px - plate_w) // 2, (symbol_px - plate_h) // 2, plate_w, plate_h)
    logo_box = ((symbol_px - logo_w) // 2, (symbol_px - logo_h) // 2, logo_w, logo_h)
    return plate, logo_box


def _designed_png(symbol: segno.QRCode, style: QrStyle, size: int | None) -> bytes:
    """The style's colours and logo drawn with Pillow, module edges on whole pixels as below."""
    count = len(symbol.matrix)
    if size is None:
        scale = 10
        width = (count + 2 * QUIET_ZONE) * scale
    else:
        width = size
        scale = size // (count + 2 * QUIET_ZONE)
    margin = (width - count * scale) // 2
    mask = Image.new("L", (count, count), 0)
    mask.putdata([255 if dark else 0 for row in symbol.matrix for dark in row])
    mask = mask.resize((count * scale, count * scale), Image.Resampling.NEAREST)
    image = Image.new("RGB", (width, width), style.background)
    image.paste(Image.new("RGB", mask.size, style.foreground), (margin, margin), mask)
    if style.logo_png is not None:
        plate, (lx, ly, lw, lh) = _logo_boxes(style.logo_png, count * scale)
        px, py, pw, ph = plate
        image.paste(Image.new("RGB", (pw, ph), style.background), (margin + px, margin + py))
        with Image.open(io.BytesIO(style.logo_png)) as logo:
            logo = logo.convert("RGBA").resize((lw, lh), Image.Resampling.LANCZOS)
            image.paste(logo, (margin + lx, margin + ly), logo)
    buffer = io.BytesIO()
    extra = {}
    if size is not None and SIZES[size].print_size:
        extra["dpi"] = (PRINT_DPI, PRINT_DPI)
    image.save(buffer, format="PNG", optimize=True, **extra)
    return buffer.getvalue()


def png(short_url: str, size: int | None = None, style: QrStyle = PLAIN) -> bytes:
    """A PNG file `size` pixels square; without a size, 10 px a module (what the download gave
    before sizes existed, ~370 px for a short URL)."""
    symbol = _symbol(short_url, style)
    if not style.plain:
        return _designed_png(symbol, style, size)
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


def file_response(
    *,
    code: str,
    short_url: str,
    fmt: str,
    size: int | None,
    style: QrStyle = PLAIN,
    attachment: bool = True,
) -> HttpResponse:
    """The QR code of `code` as a file to download (the web page's and the API's), drawn in the
    link's design (`style`); `attachment=False` for the designer's live preview."""
    body = png(short_url, size, style) if fmt == "png" else svg(short_url, style)
    response = HttpResponse(body, content_type=CONTENT_TYPES[fmt])
    if attachment:
        response["Content-Disposition"] = f'attachment; filename="{filename(code, fmt, size)}"'
    # An SVG opened on its own is a document: it may show its embedded PNG and nothing else.
    response["Content-Security-Policy"] = (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
    )
    response["X-Content-Type-Options"] = "nosniff"
    # The short URL's host is in the image: with SHORT_URL_BASE unset it depends on the request.
    response["Cache-Control"] = "private, max-age=300"
    return response
