"""Social previews per link (issue #28): the rules (links.services.previews) and every channel
that sets or shows them: the API (create, PATCH, bulk), the create and edit forms, My links, the
link's settings, the admin, and the export that imports back."""

import csv
import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse

from links.models import UrlLink
from links.services.change import link_update
from links.services.create import link_create
from links.services.policy import LongUrlRules
from links.tests.helpers import client_for

pytestmark = pytest.mark.django_db

IMAGE = "https://cdn.example.com/spring.jpg"


def refusal(**preview) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as refused:
        link_create(user=preview.pop("user"), long_url="https://example.com/x", **preview)
    return refused.value.message_dict


# --- The rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize("image", ["http://cdn.example.com/a.jpg", "ftp://cdn.example.com/a.jpg"])
def test_the_image_is_an_https_url(user, image):
    errors = refusal(user=user, og_image=image)
    assert errors == {"og_image": ["The preview image must be an https:// URL."]}


@pytest.mark.parametrize(
    "image",
    ["https://127.0.0.1/a.jpg", "https://localhost/a.jpg", "javascript:alert(1)", "not a url"],
)
def test_the_image_is_refused_as_the_url_policy_refuses_a_long_url(user, image):
    with pytest.raises(ValidationError) as policy:
        LongUrlRules().check(image)
    errors = refusal(user=user, og_image=image)
    assert errors == {"og_image": policy.value.message_dict["long_url"]}


def test_the_image_follows_the_blocked_domains(user, settings):
    settings.SHORTURL_BLOCKED_DOMAINS = ["bad.example"]
    errors = refusal(user=user, og_image="https://img.bad.example/a.jpg")
    assert "not allowed" in errors["og_image"][0]


def test_a_bare_host_image_gets_https_as_a_long_url_does(user):
    link = link_create(
        user=user, long_url="https://example.com/x", og_image="cdn.example.com/a.jpg"
    )
    assert link.link.og_image == "https://cdn.example.com/a.jpg"


def test_texts_are_trimmed_and_bounded_every_problem_named_at_once(user):
    errors = refusal(
        user=user, og_title="t" * 201, og_description="d" * 501, og_image="http://x.io"
    )
    assert set(errors) == {"og_title", "og_description", "og_image"}
    assert "at most 200" in errors["og_title"][0] and "at most 500" in errors["og_description"][0]
    link = link_create(
        user=user, long_url="https://example.com/x", og_title="  Hi  ", og_description="t" * 500
    ).link
    assert (link.og_title, len(link.og_description), link.has_preview) == ("Hi", 500, True)
    assert not UrlLink.objects.filter(og_title="t" * 201).exists()


def test_a_link_with_a_preview_is_never_handed_back_as_the_owners_plain_link(user):
    plain = link_create(user=user, long_url="https://example.com/same").link
    previewed = link_create(user=user, long_url="https://example.com/same", og_title="Hi")
    assert previewed.created and previewed.link.pk != plain.pk


def test_a_change_sets_only_the_fields_given_and_checks_them(user):
    link = link_create(
        user=user, long_url="https://example.com/x", og_title="A", og_image=IMAGE
    ).link
    link_update(code=link.code, user=user, og_description="B")
    link.refresh_from_db()
    assert (link.og_title, link.og_description, link.og_image) == ("A", "B", IMAGE)
    with pytest.raises(ValidationError) as refused:
        link_update(code=link.code, user=user, og_image="http://cdn.example.com/a.jpg")
    assert list(refused.value.message_dict) == ["og_image"]
    link_update(code=link.code, user=user, og_title=None, og_description="", og_image="")
    link.refresh_from_db()
    assert not link.has_preview


# --- The API -----------------------------------------------------------------------------------


def test_the_api_creates_shows_changes_and_refuses_previews(user):
    api = client_for(user)
    made = api.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/api", "og_title": "Sale", "og_image": IMAGE},
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert (body["og_title"], body["og_description"], body["og_image"]) == ("Sale", "", IMAGE)
    code = body["code"]
    changed = api.patch(f"/api/v1/links/{code}/", {"og_description": "Now"}, format="json")
    assert (changed.status_code, changed.json()["og_description"]) == (200, "Now")
    listed = api.get("/api/v1/links/").json()["results"]
    assert [(item["code"], item["og_title"]) for item in listed] == [(code, "Sale")]
    refused = api.patch(
        f"/api/v1/links/{code}/", {"og_image": "http://x.example/a.png"}, format="json"
    )
    assert refused.status_code == 400 and list(refused.json()) == ["og_image"], refused.json()
    wrong_type = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/b", "og_title": 5}, format="json"
    )
    assert wrong_type.status_code == 400 and "og_title" in wrong_type.json()


def test_bulk_items_take_previews_each_checked_alone(user):
    api = client_for(user)
    answer = api.post(
        "/api/v1/links/bulk/",
        {
            "items": [
                {"long_url": "https://example.com/1", "og_title": "One"},
                {"long_url": "https://example.com/2", "og_image": "http://x.example/a.png"},
            ]
        },
        format="json",
    )
    assert answer.status_code in (200, 207), answer.content
    results = answer.json()["results"]
    assert results[0]["link"]["og_title"] == "One"
    assert "og_image" in results[1]["errors"], results[1]


# --- The pages ---------------------------------------------------------------------------------


def test_the_create_form_has_a_social_preview_group_and_keeps_what_it_is_given(client, user):
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()
    assert "Social preview" in page and 'name="og_title"' in page and 'name="og_image"' in page
    base = {"long_url": "https://example.com/form", "redirect_type": "302", "pass_query": "on"}
    refused = client.post(reverse("home"), {**base, "og_image": "http://x.example/a.png"})
    assert refused.status_code == 200
    assert list(refused.context["form"].errors) == ["og_image"]
    assert 'id="social-preview" open' in refused.content.decode()  # the error is shown open
    made = client.post(reverse("home"), {**base, "og_title": "From the form", "og_image": IMAGE})
    assert made.status_code == 302, made.context and made.context["form"].errors
    link = UrlLink.objects.get(long_url="https://example.com/form")
    assert (link.og_title, link.og_image) == ("From the form", IMAGE)
    created = client.get(made["Location"]).content.decode()
    assert "<dt>Social preview</dt><dd>From the form</dd>" in created


def test_the_edit_form_shows_changes_and_clears_the_preview(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url="https://example.com/edit", og_title="Before").link
    url = reverse("link_edit", args=[link.code])
    page = client.get(url).content.decode()
    assert 'value="Before"' in page and 'id="social-preview" open' in page
    base = {"long_url": link.long_url, "title": "", "redirect_type": "302", "pass_query": "on"}
    assert client.post(url, {**base, "og_title": "After"}).status_code == 302
    link.refresh_from_db()
    assert link.og_title == "After"
    assert client.post(url, {**base, "og_title": ""}).status_code == 302
    link.refresh_from_db()
    assert not link.has_preview


def test_my_links_marks_the_links_with_a_preview(client, user):
    client.force_login(user)
    link_create(user=user, long_url="https://example.com/a", og_title="Shared")
    plain = link_create(user=user, long_url="https://example.com/b").link
    page = client.get(reverse("dashboard")).content.decode()
    assert page.count('data-testid="preview-badge"') == 1
    row = page.split(f'data-code="{plain.code}"')[1].split("</tr>")[0]
    assert "Social preview" not in row


def test_the_admin_shows_the_preview(admin_client, user):
    link = link_create(user=user, long_url="https://example.com/a", og_title="Shared").link
    page = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk]))
    text = page.content.decode()
    assert "social preview" in text.lower() and "Shared" in text


# --- Export and import -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_export_carries_the_preview_and_imports_it_back(user, other_user, tmp_path, fmt):
    link_create(
        user=user,
        long_url="https://example.com/exp",
        alias="shared",
        og_title="=Sale",  # a formula to a spreadsheet: guarded in the CSV, kept on import
        og_description="Two, lines",
        og_image=IMAGE,
    )
    target = tmp_path / f"links.{fmt}"
    out = io.StringIO()
    call_command(
        "export_links",
        "--user",
        "marketer",
        "--format",
        fmt,
        "--output",
        str(target),
        "--base",
        "https://testserver/",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = target.read_text()
    if fmt == "csv":
        row = next(csv.DictReader(io.StringIO(text)))
        assert (row["og_title"], row["og_image"]) == ("'=Sale", IMAGE)
    else:
        row = json.loads(text)["links"][0]
        assert (row["og_title"], row["og_image"]) == ("=Sale", IMAGE)
    call_command("import_links", str(target), "--user", "rival", stdout=io.StringIO())
    copied = UrlLink.objects.get(owner=other_user)
    assert (copied.og_title, copied.og_description, copied.og_image) == (
        "=Sale",
        "Two, lines",
        IMAGE,
    )
