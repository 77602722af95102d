"""The QR designer (#28): colours, error level and a centre logo, on the QR page and the API.

A designed code must still scan: each one is decoded here with zxing-cpp (a dev dependency,
requirements-dev.txt), the same reader family phone apps use, and must give the short URL with
its `?qr=1` marker. The rules live in links.services.qr_design; these check what a marketer and
an API client notice.
"""

from __future__ import annotations

import base64
import io
import re

import pytest
import zxingcpp
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.urls import reverse
from PIL import Image, ImageDraw

from core.channels import qr_url
from links import qr
from links.models import QrDesign
from links.services import qr_design
from links.services.change import link_revoke
from links.services.create import link_create
from links.services.policy import LinkRevoked
from links.shortlinks import link_short_url
from links.tests.factories import UserFactory
from links.tests.helpers import client_for
from workspaces.models import Role
from workspaces.services import member_add, workspace_create

pytestmark = pytest.mark.django_db

NAVY, CREAM = "#1d2a5c", "#fff4d6"


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    """Logos go to this test's own storage folder."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def link(user):
    return link_create(user=user, long_url="https://example.com/spring-sale").link


def _decoded(png: bytes) -> list[str]:
    """The texts of the QR codes found in a PNG."""
    with Image.open(io.BytesIO(png)) as image:
        return [found.text for found in zxingcpp.read_barcodes(image.convert("RGB"))]


def _logo_png(size=(300, 300), colour=(220, 30, 60, 255)) -> bytes:
    """A busy logo: a filled disc with a bar, on transparency."""
    image = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.ellipse((10, 10, size[0] - 10, size[1] - 10), fill=colour)
    draw.rectangle((size[0] // 3, 0, size[0] // 2, size[1]), fill=(20, 20, 20, 255))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


LOGO_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
    b'<circle cx="50" cy="50" r="45" fill="#e11d48"/>'
    b'<rect x="30" y="20" width="15" height="60" fill="#111"/></svg>'
)


def _short(link) -> str:
    return link_short_url(link)


# --- Designed codes scan ------------------------------------------------------------------------


def test_a_designed_code_with_colours_and_a_png_logo_decodes_to_the_short_url(link):
    qr_design.qr_design_save(
        link=link, foreground=NAVY, background=CREAM, error_level="m", logo=_logo_png()
    )
    style = qr_design.design_style(qr_design.link_design(link))
    assert style.error == "h"  # the logo forced the highest level
    for size in (None, *qr.SIZES):
        png = qr.png(_short(link), size, style)
        assert _decoded(png) == [qr_url(_short(link))], size
    with Image.open(io.BytesIO(qr.png(_short(link), 512, style))) as image:
        assert image.size == (512, 512)
        corner, centre = image.convert("RGB").getpixel((2, 2)), image.getpixel((256, 256))
    assert corner == (0xFF, 0xF4, 0xD6)  # the cream quiet zone
    assert centre != corner  # the logo sits in the middle


def test_an_svg_logo_is_stored_as_a_png_and_the_svg_download_embeds_no_markup_of_it(link):
    hostile = LOGO_SVG.replace(b"</svg>", b"<script>alert(1)</script></svg>")
    design = qr_design.qr_design_save(link=link, logo=hostile, logo_name="brand.svg")
    stored = qr_design.logo_bytes(design)
    assert stored.startswith(b"\x89PNG") and design.logo.name.endswith(".png")
    svg = qr.svg(_short(link), qr_design.design_style(design)).decode()
    assert "<script" not in svg and "alert" not in svg
    assert re.search(r'<image [^>]*href="data:image/png;base64,', svg)
    # The SVG download draws the same symbol: rasterised, it decodes too.
    import resvg_py

    png = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=600))
    assert _decoded(png) == [qr_url(_short(link))]


def test_colours_alone_keep_the_chosen_level_and_decode(link):
    design = qr_design.qr_design_save(
        link=link, foreground="#0b5d1e", background="#ffffff", error_level="q"
    )
    assert design.error_level == "q"
    png = qr.png(_short(link), 256, qr_design.design_style(design))
    assert _decoded(png) == [qr_url(_short(link))]


# --- What is refused ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("foreground", "background", "says"),
    [
        ("#777777", "#999999", "too close to scan"),  # 1.6:1
        ("#ffffff", "#000000", "darker than its background"),  # inverted
        ("#767676", "#ffffff", None),  # 4.54:1: just enough
        ("navy", "#ffffff", "#rrggbb"),
        ("#12345", "#ffffff", "#rrggbb"),
    ],
)
def test_colours_that_would_not_scan_are_refused(link, foreground, background, says):
    if says is None:
        qr_design.qr_design_save(link=link, foreground=foreground, background=background)
        png = qr.png(_short(link), 256, qr_design.design_style(qr_design.link_design(link)))
        assert _decoded(png) == [qr_url(_short(link))]
        return
    with pytest.raises(ValidationError) as refused:
        qr_design.qr_design_save(link=link, foreground=foreground, background=background)
    assert says in str(refused.value)
    assert not QrDesign.objects.exists()


@pytest.mark.parametrize(
    ("logo", "name", "says"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\0" * (qr_design.LOGO_MAX_BYTES), "big.png", "at most 200 KB"),
        (b"GIF89a" + b"\0" * 100, "logo.gif", "PNG or SVG"),
        (b"\x89PNG\r\n\x1a\nnot really", "broken.png", "cannot be read"),
        (
            LOGO_SVG.replace(b"<circle", b'<image href="file:///etc/passwd"/><circle'),
            "a.svg",
            "refers to another file",
        ),
        (
            LOGO_SVG.replace(
                b"<circle", b'<rect style="fill:url(https://x.test/a.svg#p)"/><circle'
            ),
            "d.svg",
            "refers to another file",
        ),
        (
            b'<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg"/>',
            "b.svg",
            "DOCTYPE",
        ),
        (b"<svg xmlns='http://www.w3.org/2000/svg'><unclosed></svg>", "c.svg", "cannot be read"),
    ],
)
def test_oversized_or_invalid_logos_are_refused(link, logo, name, says):
    with pytest.raises(ValidationError) as refused:
        qr_design.qr_design_save(link=link, logo=logo, logo_name=name)
    assert says in str(refused.value)
    assert not QrDesign.objects.exists()


def test_a_revoked_links_design_cannot_change(user, link):
    link_revoke(code=link.code, user=user)
    link.refresh_from_db()
    with pytest.raises(LinkRevoked):
        qr_design.qr_design_save(link=link, foreground=NAVY)


def test_reset_drops_the_design_and_its_logo_file(link, django_capture_on_commit_callbacks):
    design = qr_design.qr_design_save(link=link, logo=_logo_png())
    name = design.logo.name
    assert default_storage.exists(name)
    with django_capture_on_commit_callbacks(execute=True):
        qr_design.qr_design_reset(link=link)
    assert not QrDesign.objects.exists()
    assert not default_storage.exists(name)
    style = qr_design.design_style(qr_design.link_design(link))
    assert qr.png(_short(link), 256, style) == qr.png(_short(link), 256)


def test_a_logo_file_two_links_share_stays_while_one_uses_it(user, link):
    other = link_create(user=user, long_url="https://example.com/other").link
    qr_design.qr_design_save(link=link, logo=_logo_png())
    name = qr_design.qr_design_save(link=other, logo=_logo_png()).logo.name
    assert QrDesign.objects.get(link=link).logo.name == name  # named by content: one file
    qr_design.qr_design_reset(link=link)
    qr_design._delete_unused(name)
    assert default_storage.exists(name)


# --- The QR page -------------------------------------------------------------------------------


def test_the_page_saves_a_design_and_the_downloads_use_it(client, user, link):
    client.force_login(user)
    page = reverse("link_qr_page", args=[link.code])
    upload = io.BytesIO(_logo_png())
    upload.name = "brand.png"
    answer = client.post(
        page,
        {"foreground": NAVY, "background": CREAM, "error_level": "m", "logo": upload},
        follow=True,
    )
    assert "QR design saved" in answer.content.decode()
    png = client.get(reverse("link_qr", args=[link.code, "png"]), {"size": 1024})
    assert png["Content-Disposition"] == f'attachment; filename="{link.code}-qr-1024.png"'
    short = link_short_url(link, request=answer.wsgi_request)
    assert _decoded(png.content) == [qr_url(short)]
    svg = client.get(reverse("link_qr", args=[link.code, "svg"]))
    assert svg["Content-Type"] == "image/svg+xml"
    assert CREAM in svg.content.decode()
    assert "default-src 'none'" in svg["Content-Security-Policy"]


def test_the_page_shows_why_low_contrast_is_refused_and_saves_nothing(client, user, link):
    client.force_login(user)
    answer = client.post(
        reverse("link_qr_page", args=[link.code]),
        {"foreground": "#888888", "background": "#aaaaaa", "error_level": "m"},
    )
    assert answer.status_code == 400
    assert "too close to scan" in answer.content.decode()
    assert not QrDesign.objects.exists()


def test_the_live_preview_follows_the_form_without_saving(client, user, link):
    client.force_login(user)
    preview = reverse("link_qr_preview", args=[link.code])
    drawn = client.get(preview, {"foreground": NAVY, "background": CREAM, "error_level": "h"})
    assert drawn.status_code == 200 and drawn["Content-Type"] == "image/svg+xml"
    assert NAVY in drawn.content.decode()
    assert "Content-Disposition" not in drawn
    refused = client.get(preview, {"foreground": "#eeeeee", "background": "#ffffff"})
    assert refused.status_code == 400
    assert "too close to scan" in refused.json()["foreground"][0]
    assert not QrDesign.objects.exists()


def test_reset_on_the_page_gives_the_plain_code_back(client, user, link):
    qr_design.qr_design_save(link=link, foreground=NAVY, background=CREAM)
    client.force_login(user)
    client.post(reverse("link_qr_page", args=[link.code]), {"action": "reset"})
    assert not QrDesign.objects.exists()
    plain = client.get(reverse("link_qr", args=[link.code, "png"]))
    assert plain.content == qr.png(link_short_url(link, request=plain.wsgi_request))


def test_a_viewer_sees_the_design_but_cannot_change_it(client, user, link):
    workspace = workspace_create(user=user, name="Acme", slug="acme")
    shared = link_create(user=user, long_url="https://example.com/a", workspace=workspace).link
    UserFactory(username="vi")
    viewer = member_add(by=user, workspace=workspace, username="vi", role=Role.VIEWER).user
    client.force_login(viewer)
    page = client.get(reverse("link_qr_page", args=[shared.code])).content.decode()
    assert 'data-testid="qr-preview"' in page and 'data-testid="qr-designer"' not in page
    refused = client.post(
        reverse("link_qr_page", args=[shared.code]), {"foreground": NAVY, "background": CREAM}
    )
    assert refused.status_code == 403
    assert not QrDesign.objects.exists()


# --- The API -----------------------------------------------------------------------------------


def test_the_api_sets_reads_and_resets_a_design(user, link):
    api = client_for(user)
    url = f"/api/v1/links/{link.code}/qr-design/"
    assert api.get(url).json()["designed"] is False
    logo = base64.b64encode(LOGO_SVG).decode()
    answer = api.put(
        url,
        {"foreground": NAVY, "background": CREAM, "logo_base64": logo, "logo_name": "b.svg"},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body | {"png_url": "", "svg_url": ""} == {
        "foreground": NAVY,
        "background": CREAM,
        "error_level": "h",
        "has_logo": True,
        "designed": True,
        "png_url": "",
        "svg_url": "",
    }
    png = api.get(body["png_url"])
    assert png.status_code == 200
    assert _decoded(png.content) == [qr_url(link_short_url(link, request=png.wsgi_request))]
    assert api.get(body["svg_url"])["Content-Type"] == "image/svg+xml"
    assert api.delete(url).status_code == 204
    assert api.get(url).json()["designed"] is False


def test_the_api_takes_a_logo_file_in_multipart_and_refuses_low_contrast(user, link):
    api = client_for(user)
    url = f"/api/v1/links/{link.code}/qr-design/"
    upload = io.BytesIO(_logo_png())
    upload.name = "brand.png"
    answer = api.put(url, {"logo": upload, "error_level": "q"}, format="multipart")
    assert answer.status_code == 200, answer.content
    assert answer.json()["has_logo"] is True and answer.json()["error_level"] == "h"
    refused = api.put(url, {"foreground": "#cccccc"}, format="json")
    assert refused.status_code == 400
    assert "too close to scan" in refused.json()["foreground"][0]
    assert QrDesign.objects.get().foreground == "#000000"


def test_others_cannot_read_or_set_a_links_design(other_user, link):
    api = client_for(other_user)
    url = f"/api/v1/links/{link.code}/qr-design/"
    assert api.get(url).status_code == 404
    assert api.put(url, {"foreground": NAVY}, format="json").status_code == 404
    assert not QrDesign.objects.exists()


def test_the_admin_shows_a_design(admin_client, link):
    qr_design.qr_design_save(link=link, foreground=NAVY, background=CREAM, logo=_logo_png())
    listing = admin_client.get(reverse("admin:links_qrdesign_changelist")).content.decode()
    assert NAVY in listing and link.code in listing
    design = QrDesign.objects.get()
    page = admin_client.get(reverse("admin:links_qrdesign_change", args=[design.pk]))
    assert "data:image/png;base64," in page.content.decode()
