"""A link's QR design (#28): every rule that keeps a designed QR code scannable and safe.

- Colours are `#rrggbb`. The dark modules must be darker than the background (most phone
  scanners look for dark on light; inverted codes are read by some apps only) and the WCAG
  contrast ratio of the two must be at least MIN_CONTRAST (4.5, WCAG's AA for text): below
  that, cameras in poor light start to miss modules. The tests decode designs at the limit.
- A logo is a PNG or SVG file of at most LOGO_MAX_BYTES. It is never stored or served as it
  came: a PNG is decoded and re-encoded (metadata and anything after the image dropped), an SVG
  is rasterised to PNG (no script, link or style of it survives; one that refers to anything
  outside itself, or declares a DOCTYPE, is refused before it is read). The stored PNG is at
  most LOGO_STORED_PX on its longer side.
- A logo hides modules: with one the error-correction level is H (30 % may be lost) whatever
  was asked, and the logo covers about 5 % of the symbol (links.qr.LOGO_SHARE).

Callers (the QR page, the API) find the link with link_get_changeable first.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from xml.etree import ElementTree

from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from PIL import Image, UnidentifiedImageError

from links import qr
from links.models import QrDesign, QrErrorLevel, UrlLink
from links.services.policy import ensure_changeable

logger = logging.getLogger("shorturl.links")

COLOUR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")
MIN_CONTRAST = 4.5
LOGO_MAX_BYTES = 200 * 1024
LOGO_MAX_SOURCE_PX = 4096  # a PNG's width or height (decompression bombs)
LOGO_STORED_PX = 512
LOGO_TYPES_TEXT = "a PNG or SVG file"

_UNSET = object()


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of `#rrggbb`."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio (1 to 21) of two `#rrggbb` colours."""
    lighter, darker = sorted(
        (relative_luminance(foreground), relative_luminance(background)), reverse=True
    )
    return (lighter + 0.05) / (darker + 0.05)


def colour_problems(foreground: str, background: str) -> dict[str, list[str]]:
    """Why these colours would not make a code that scans ({field: [messages]}; empty: fine)."""
    problems: dict[str, list[str]] = {}
    for field, value in (("foreground", foreground), ("background", background)):
        if not isinstance(value, str) or not COLOUR_RE.match(value):
            problems[field] = ["Give a colour as #rrggbb, e.g. #1d2330."]
    if problems:
        return problems
    if relative_luminance(foreground) >= relative_luminance(background):
        problems["foreground"] = [
            "The code must be darker than its background: many phone scanners cannot read "
            "light modules on a dark ground."
        ]
    elif (ratio := contrast_ratio(foreground, background)) < MIN_CONTRAST:
        problems["foreground"] = [
            f"These colours are too close to scan reliably (contrast {ratio:.1f}:1, at least "
            f"{MIN_CONTRAST:g}:1 is needed): darken the code or lighten the background."
        ]
    return problems


def style_from(
    *, foreground: str, background: str, error_level: str, logo_png: bytes | None = None
) -> qr.QrStyle:
    """A QrStyle from checked values; ValidationError when they would not scan (the designer's
    live preview asks this before anything is saved)."""
    problems = colour_problems(foreground, background)
    if error_level not in QrErrorLevel.values:
        problems["error_level"] = ["Choose an error-correction level: l, m, q or h."]
    if problems:
        raise ValidationError(problems)
    return qr.QrStyle(
        foreground=foreground.lower(),
        background=background.lower(),
        error=QrErrorLevel.H if logo_png is not None else error_level,
        logo_png=logo_png,
    )


def design_style(design: QrDesign | None) -> qr.QrStyle:
    """How a link's code is drawn: its saved design, else the plain code."""
    if design is None:
        return qr.PLAIN
    return qr.QrStyle(
        foreground=design.foreground,
        background=design.background,
        error=design.error_level,
        logo_png=logo_bytes(design),
    )


def logo_bytes(design: QrDesign) -> bytes | None:
    """The stored logo; None without one, or when its file is gone from the storage (the code
    is then drawn without it, and the log says so, rather than every download failing)."""
    if not design.logo:
        return None
    try:
        with default_storage.open(design.logo.name, "rb") as file:
            return file.read()
    except OSError:
        logger.warning(
            "The QR logo %s of link %s is missing from storage.", design.logo.name, design.link_id
        )
        return None


def link_design(link: UrlLink) -> QrDesign | None:
    """The link's saved design (not one a refused save left unsaved on it), or None."""
    try:
        design = link.qr_design
    except QrDesign.DoesNotExist:
        return None
    return design if design.pk is not None else None


def clean_logo(data: bytes, *, name: str = "") -> bytes:
    """An uploaded logo as the PNG that is stored: checked, rasterised or re-encoded."""
    if len(data) > LOGO_MAX_BYTES:
        raise ValidationError(
            {"logo": [f"The logo is {len(data) // 1024} KB: at most {LOGO_MAX_BYTES // 1024} KB."]}
        )
    head = data[:512].lstrip()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        image = _png_image(data)
    elif head.startswith((b"<?xml", b"<svg", b"<!--")) or name.lower().endswith(".svg"):
        image = _svg_image(data)
    else:
        raise ValidationError({"logo": [f"The logo must be {LOGO_TYPES_TEXT}."]})
    image.thumbnail((LOGO_STORED_PX, LOGO_STORED_PX))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _png_image(data: bytes) -> Image.Image:
    refused = ValidationError({"logo": ["This PNG file cannot be read."]})
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != "PNG":
                raise refused
            if max(image.size) > LOGO_MAX_SOURCE_PX:
                raise ValidationError(
                    {"logo": [f"The logo is larger than {LOGO_MAX_SOURCE_PX} pixels a side."]}
                )
            image.load()
            return image.convert("RGBA")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise refused from None


# Attributes that may point outside the file: an SVG logo may only point inside itself (`#id`)
# or hold a PNG or JPEG inline (`data:image/png;base64,…`).
_LINK_ATTRIBUTES = ("href", "{http://www.w3.org/1999/xlink}href", "src")
_INSIDE = ("#", "data:image/png;", "data:image/jpeg;")
# url(…) in a style or presentation attribute that does not name an element of the file.
_OUTSIDE_URL = re.compile(r"url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)
_REFERS_OUT = "The SVG refers to another file or address: embed everything."


def _refers_outside(element: ElementTree.Element) -> bool:
    for attribute in _LINK_ATTRIBUTES:
        target = (element.get(attribute) or "").strip()
        if target and not target.startswith(_INSIDE):
            return True
    texts = [*element.attrib.values(), element.text or ""]
    return any(_OUTSIDE_URL.search(text) or "@import" in text for text in texts)


def _svg_image(data: bytes) -> Image.Image:
    import resvg_py  # a compiled renderer: imported only when an SVG logo is uploaded

    refused = ValidationError({"logo": ["This SVG file cannot be read."]})
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise refused from None
    if "<!DOCTYPE" in text.upper() or "<!ENTITY" in text.upper():
        # Entities can expand without bound or pull in local files.
        raise ValidationError({"logo": ["SVG logos with a DOCTYPE or entities are refused."]})
    try:
        # No DOCTYPE (checked above): no entity to expand, so expat's known attacks are out.
        root = ElementTree.fromstring(text)  # noqa: S314
    except ElementTree.ParseError:
        raise refused from None
    if root.tag not in ("svg", "{http://www.w3.org/2000/svg}svg"):
        raise refused
    if any(_refers_outside(element) for element in root.iter()):
        raise ValidationError({"logo": [_REFERS_OUT]})
    width, height = _svg_size(root)
    if max(width / height, height / width) > 8:
        raise ValidationError({"logo": ["A logo may be at most 8 times as wide as high."]})
    longer = {"width": LOGO_STORED_PX} if width >= height else {"height": LOGO_STORED_PX}
    try:
        rendered = resvg_py.svg_to_bytes(svg_string=text, **longer)
    except ValueError:
        raise refused from None
    return _png_image(bytes(rendered))


def _svg_size(root: ElementTree.Element) -> tuple[float, float]:
    """The SVG's width and height from its viewBox, else its width and height (1 by 1 when
    neither says: only the aspect is used)."""
    numbers = re.split(r"[\s,]+", (root.get("viewBox") or "").strip())
    try:
        if len(numbers) == 4 and float(numbers[2]) > 0 and float(numbers[3]) > 0:
            return float(numbers[2]), float(numbers[3])
        width = float(re.sub(r"[a-z%]+$", "", root.get("width", "")))
        height = float(re.sub(r"[a-z%]+$", "", root.get("height", "")))
        if width > 0 and height > 0:
            return width, height
    except ValueError:
        pass
    return 1.0, 1.0


@transaction.atomic
def qr_design_save(
    *,
    link: UrlLink,
    foreground=_UNSET,
    background=_UNSET,
    error_level=_UNSET,
    logo: bytes | None = None,
    logo_name: str = "",
    remove_logo: bool = False,
) -> QrDesign:
    """Set a link's QR design; what is not given stays as it is (or the plain default).
    `logo`: an uploaded file's bytes (replaces the logo); `remove_logo` drops it."""
    ensure_changeable(link)
    design = link_design(link) or QrDesign(link=link)
    foreground = design.foreground if foreground is _UNSET else foreground
    background = design.background if background is _UNSET else background
    error_level = design.error_level if error_level is _UNSET else error_level
    logo_png = None if remove_logo else (clean_logo(logo, name=logo_name) if logo else None)
    has_logo = logo_png is not None or (bool(design.logo) and not remove_logo)
    # The colours and level are checked as the code will be drawn (a logo forces level H).
    style = style_from(foreground=foreground, background=background, error_level=error_level or "")
    old_logo = design.logo.name if design.logo and (remove_logo or logo_png) else ""
    design.foreground, design.background = style.foreground, style.background
    design.error_level = QrErrorLevel.H if has_logo else style.error
    if remove_logo:
        design.logo = ""
    if logo_png is not None:
        name = f"qr-logos/{hashlib.sha256(logo_png).hexdigest()[:32]}.png"
        if not default_storage.exists(name):
            name = default_storage.save(name, ContentFile(logo_png))
        design.logo = name
    design.save()
    if old_logo and old_logo != design.logo.name:
        transaction.on_commit(lambda: _delete_unused(old_logo))
    return design


def qr_design_reset(*, link: UrlLink) -> None:
    """Back to the plain black-on-white code; the logo file goes too."""
    ensure_changeable(link)
    design = link_design(link)
    if design is None:
        return
    old_logo = design.logo.name if design.logo else ""
    design.delete()
    link._state.fields_cache.pop("qr_design", None)  # the deleted row is no longer its design
    if old_logo:
        transaction.on_commit(lambda: _delete_unused(old_logo))


def _delete_unused(name: str) -> None:
    """Logos are named by content, so two links may share a file: only an unused one goes."""
    if not QrDesign.objects.filter(logo=name).exists():
        default_storage.delete(name)
