"""QR codes: PNG at a size a marketer picks (up to print size) and SVG, on the pages and the API.

Every QR code encodes the short URL with `?qr=1`, so its scans are counted apart
(core/tests/test_channels.py); here: what the files hold and who may have them.
"""

import io

import pytest
import segno
from django.urls import reverse
from rest_framework.test import APIClient

from links import qr
from links.tests.factories import UrlLinkFactory
from links.tests.helpers import client_for, read_png

pytestmark = pytest.mark.django_db

SIZES = [256, 512, 1024, 2048]


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def _symbol_drawn(rows: list[list[int]]) -> tuple[list[list[int]], int, int]:
    """(modules, pixels a module, pixels of quiet zone) read back from a PNG's pixels: the top
    left finder pattern's first row is 7 dark modules, which gives where the symbol starts and
    its scale; each module is then read at its centre (1 = dark)."""
    first = next(y for y, row in enumerate(rows) if 0 in row)
    left = rows[first].index(0)
    run = next(x for x in range(left, len(rows[first])) if rows[first][x] == 1) - left
    scale = run // 7
    count = (len(rows) - 2 * left) // scale
    modules = [
        [
            1 - rows[left + y * scale + scale // 2][left + x * scale + scale // 2]
            for x in range(count)
        ]
        for y in range(count)
    ]
    return modules, scale, left


def _expected_modules(url: str) -> list[list[int]]:
    return [list(row) for row in segno.make(url, error="m", micro=False).matrix]


@pytest.mark.parametrize("size", SIZES)
def test_a_png_is_exactly_the_size_asked_for_and_draws_the_qr_url(logged_in, user, size):
    link = UrlLinkFactory(owner=user, alias="spring-sale")
    response = logged_in.get(reverse("link_qr", args=[link.code, "png"]), {"size": size})
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == (f'attachment; filename="spring-sale-qr-{size}.png"')
    image = read_png(response.content)
    assert (image["width"], image["height"]) == (size, size)
    modules, scale, margin = _symbol_drawn(image["rows"])
    assert modules == _expected_modules("http://testserver/spring-sale?qr=1")
    assert margin >= 4 * scale, "the standard's quiet zone of four modules"


def test_print_sizes_carry_300_dpi_so_a_document_places_them_at_their_printed_size(logged_in, user):
    link = UrlLinkFactory(owner=user)
    url = reverse("link_qr", args=[link.code, "png"])
    poster = read_png(logged_in.get(url, {"size": 2048}).content)
    assert poster["per_metre"] == 11811  # 300 dpi
    assert 2048 / poster["per_metre"] * 100 == pytest.approx(17.3, abs=0.05)  # cm
    assert read_png(logged_in.get(url, {"size": 512}).content)["per_metre"] is None


def test_without_a_size_the_png_is_drawn_as_before(logged_in, user):
    link = UrlLinkFactory(owner=user)
    image = read_png(logged_in.get(reverse("link_qr", args=[link.code, "png"])).content)
    # 10 px a module plus a four-module quiet zone on each side, whatever the URL's length.
    assert image["width"] == image["height"]
    assert image["width"] % 10 == 0 and 330 <= image["width"] <= 450


def test_the_svg_draws_the_qr_url_too(logged_in, user):
    link = UrlLinkFactory(owner=user, alias="spring-sale")
    response = logged_in.get(reverse("link_qr", args=[link.code, "svg"]), {"size": 2048})
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Content-Disposition"] == 'attachment; filename="spring-sale-qr.svg"'
    assert response.content == qr.svg("http://testserver/spring-sale")
    assert response.content != _svg_of("http://testserver/spring-sale")
    assert response.content == _svg_of("http://testserver/spring-sale?qr=1")


def _svg_of(url: str) -> bytes:
    buffer = io.BytesIO()
    segno.make(url, error="m", micro=False).save(
        buffer, kind="svg", scale=10, border=4, dark="#000", light="#fff"
    )
    return buffer.getvalue()


@pytest.mark.parametrize("size", ["300", "abc", "-1", "4096", "1024.0"])
def test_an_unknown_size_answers_400_with_the_qr_page_naming_the_sizes(logged_in, user, size):
    link = UrlLinkFactory(owner=user)
    response = logged_in.get(reverse("link_qr", args=[link.code, "png"]), {"size": size})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert 'role="alert"' in html
    assert "choose 256, 512, 1024 or 2048" in html
    assert 'data-qr-size="2048"' in html  # the sizes there are, one click away


def test_the_qr_page_offers_every_size_and_the_svg_and_says_how_scans_count(logged_in, user):
    link = UrlLinkFactory(owner=user, alias="spring-sale")
    response = logged_in.get(reverse("link_qr_page", args=[link.code]))
    assert response.status_code == 200
    html = response.content.decode()
    png = reverse("link_qr", args=[link.code, "png"])
    for size in SIZES:
        assert f'href="{png}?size={size}"' in html
    assert f'href="{reverse("link_qr", args=[link.code, "svg"])}"' in html
    assert "17.3 cm wide at 300 dpi" in html
    assert "<svg" in html  # the preview
    assert "http://testserver/spring-sale?qr=1" in html
    assert reverse("link_stats", args=[link.code]) in html


def test_my_links_and_the_stats_page_lead_to_the_qr_page(logged_in, user):
    link = UrlLinkFactory(owner=user)
    page = reverse("link_qr_page", args=[link.code])
    assert f'href="{page}"' in logged_in.get(reverse("dashboard")).content.decode()
    assert (
        f'href="{page}"' in logged_in.get(reverse("link_stats", args=[link.code])).content.decode()
    )


# --- API ----------------------------------------------------------------------------------------


def test_the_api_gives_the_qr_code_as_png_at_a_size_or_as_svg(user):
    link = UrlLinkFactory(owner=user, alias="spring-sale")
    api = client_for(user)
    url = f"/api/v1/links/{link.code}/qr/"
    png = api.get(url, {"format": "png", "size": "2048"})
    assert png.status_code == 200
    assert png["Content-Type"] == "image/png"
    assert png["Content-Disposition"] == 'attachment; filename="spring-sale-qr-2048.png"'
    image = read_png(png.content)
    assert (image["width"], image["height"]) == (2048, 2048)
    assert _symbol_drawn(image["rows"])[0] == _expected_modules(
        "http://testserver/spring-sale?qr=1"
    )
    svg = api.get(url, {"format": "svg"})
    assert svg["Content-Type"] == "image/svg+xml"
    assert svg.content == qr.svg("http://testserver/spring-sale")
    # PNG by default; an image-only Accept header (an <img> tag, curl -H) is fine too.
    default = api.get(url, HTTP_ACCEPT="image/png")
    assert default.status_code == 200
    assert default["Content-Type"] == "image/png"


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"size": "300"}, "size", "Choose a size of 256, 512, 1024 or 2048 (pixels wide)."),
        ({"format": "gif"}, "format", "Choose png or svg."),
    ],
)
def test_the_api_refuses_an_unknown_size_or_format_with_json(user, query, field, message):
    link = UrlLinkFactory(owner=user)
    response = client_for(user).get(
        f"/api/v1/links/{link.code}/qr/", query, HTTP_ACCEPT="image/png"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {field: [message]}


def test_the_api_qr_is_owner_scoped(user, other_user):
    theirs = UrlLinkFactory(owner=other_user)
    response = client_for(user).get(f"/api/v1/links/{theirs.code}/qr/")
    assert response.status_code == 404
    assert response.json() == {"detail": "No link with this code."}
    assert APIClient().get(f"/api/v1/links/{theirs.code}/qr/").status_code == 401


def test_the_qr_endpoint_is_in_the_published_schema(user):
    schema = client_for(user).get("/api/v1/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/links/{code}/qr/"]["get"]
    assert set(operation["responses"]["200"]["content"]) == {"image/png", "image/svg+xml"}
    size = next(p for p in operation["parameters"] if p["name"] == "size")
    assert size["schema"]["enum"] == SIZES
