"""The marketer's pages: log in, create a link, list, edit, revoke, QR codes."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from analytics.tests.factories import add_visits
from links.models import RedirectType, UrlLink
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, user):
    client.force_login(user)
    return client


def create(client, **data):
    # "pass_query": "on" is what a browser sends for the box, ticked by default.
    payload = {
        "long_url": "https://example.com/spring",
        "redirect_type": "302",
        "pass_query": "on",
        **data,
    }
    return client.post(reverse("home"), payload)


# --- Accounts ---------------------------------------------------------------------------------


def test_login_page_has_labelled_fields_and_logs_in(client, user):
    page = client.get(reverse("login"))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<label for="id_username">' in html
    assert '<label for="id_password">' in html

    response = client.post(reverse("login"), {"username": "marketer", "password": "s3cret-pass-1"})
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_login_with_wrong_password_says_so(client, user):
    response = client.post(reverse("login"), {"username": "marketer", "password": "nope"})
    assert response.status_code == 200
    assert "did not match" in response.content.decode()


def test_logout_is_a_post_and_ends_the_session(logged_in):
    response = logged_in.post(reverse("logout"))
    assert response.status_code == 302
    assert logged_in.get(reverse("dashboard")).status_code == 302  # back to the login page


def test_password_change_rejects_a_weak_password_with_a_message(logged_in):
    response = logged_in.post(
        reverse("password_change"),
        {"old_password": "s3cret-pass-1", "new_password1": "123", "new_password2": "123"},
    )
    assert response.status_code == 200
    assert "too short" in response.content.decode()


def test_password_change_works(logged_in, user):
    response = logged_in.post(
        reverse("password_change"),
        {
            "old_password": "s3cret-pass-1",
            "new_password1": "a-much-longer-phrase-42",
            "new_password2": "a-much-longer-phrase-42",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-much-longer-phrase-42")


@pytest.mark.parametrize(
    "name, args",
    [
        ("dashboard", []),
        ("link_edit", ["abc-1"]),
        ("link_revoke", ["abc-1"]),
        ("link_qr", ["abc-1", "png"]),
        ("link_qr_page", ["abc-1"]),
        ("password_change", []),
    ],
)
def test_marketer_pages_need_login(client, name, args):
    response = client.get(reverse(name, args=args))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_home_signed_out_offers_login(client):
    response = client.get(reverse("home"))
    assert response.status_code == 200
    assert reverse("login") in response.content.decode()


# --- Create -----------------------------------------------------------------------------------


def test_create_link_shows_short_url_copy_button_and_qr(logged_in, user):
    response = create(logged_in, alias="spring-sale", title="Spring sale")
    link = UrlLink.objects.get(owner=user)
    assert link.code == "spring-sale"
    assert response.status_code == 302  # redirect after POST: a reload cannot create twice

    page = logged_in.get(response["Location"])
    html = page.content.decode()
    assert "http://testserver/spring-sale" in html
    assert 'data-copy="http://testserver/spring-sale"' in html
    assert "<svg" in html  # the QR code, inline
    assert reverse("link_qr", args=["spring-sale", "png"]) + "?size=2048" in html
    assert reverse("link_qr", args=["spring-sale", "svg"]) in html
    assert "Your short link is ready." in html


def test_create_adds_https_when_the_scheme_is_missing(logged_in, user):
    create(logged_in, long_url="example.org/page")
    assert UrlLink.objects.get(owner=user).long_url == "https://example.org/page"


def test_create_301_with_expiry(logged_in, user):
    expiry = (timezone.localtime() + dt.timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    create(logged_in, redirect_type="301", expires_at=expiry)
    link = UrlLink.objects.get(owner=user)
    assert link.redirect_type == RedirectType.MOVED_PERMANENTLY
    assert link.expires_at is not None


def test_same_plain_url_twice_hands_back_the_existing_link(logged_in, user):
    create(logged_in)
    response = create(logged_in)
    assert UrlLink.objects.filter(owner=user).count() == 1
    page = logged_in.get(response["Location"])
    assert "already had a short link" in page.content.decode()


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"long_url": ""}, "long_url", "Enter the long URL to shorten."),
        ({"long_url": "ftp://example.com/file"}, "long_url", "Only http and https"),
        ({"long_url": "https://"}, "long_url", "host name"),
        ({"long_url": "http://testserver/abc"}, "long_url", "points back at this short-link"),
        ({"alias": "a!"}, "alias", "3 to 32 characters"),
        ({"alias": "admin"}, "alias", "reserved"),
        ({"alias": "x" * 40}, "alias", "at most 32"),
        ({"title": "t" * 201}, "title", "200 characters or fewer"),
        ({"expires_at": "yesterday-ish"}, "expires_at", "Enter a date and time"),
        ({"expires_at": "2001-01-01T10:00"}, "expires_at", "must be in the future"),
        ({"redirect_type": "307"}, "redirect_type", "Choose temporary (302)"),
        ({"redirect_type": "banana"}, "redirect_type", "Choose temporary (302)"),
    ],
)
def test_create_form_rejects_bad_input_beside_the_field(logged_in, user, data, field, message):
    response = create(logged_in, **data)
    assert response.status_code == 200
    form = response.context["form"]
    assert any(message in error for error in form.errors[field]), form.errors
    html = response.content.decode()
    assert f'id="id_{field}_error"' in html  # shown inline, next to its field
    assert not UrlLink.objects.filter(owner=user).exists()


def test_taken_alias_is_refused_with_a_message(logged_in, other_user):
    UrlLinkFactory(owner=other_user, alias="launch")
    response = create(logged_in, alias="launch")
    assert "already taken" in response.context["form"].errors["alias"][0]


def test_created_link_of_someone_else_is_not_shown(logged_in, other_user):
    theirs = UrlLinkFactory(owner=other_user, long_url="https://example.com/secret-campaign")
    page = logged_in.get(reverse("home") + f"?created={theirs.code}")
    assert page.status_code == 200
    assert "secret-campaign" not in page.content.decode()


def test_every_form_field_has_a_label(logged_in):
    html = logged_in.get(reverse("home")).content.decode()
    for field in ("long_url", "alias", "title", "expires_at"):
        assert f'<label for="id_{field}">' in html
    assert "<legend>Redirect type</legend>" in html


# --- QR codes ---------------------------------------------------------------------------------


def test_qr_png_and_svg_downloads(logged_in, user):
    link = UrlLinkFactory(owner=user)
    png = logged_in.get(reverse("link_qr", args=[link.code, "png"]))
    assert png.status_code == 200
    assert png["Content-Type"] == "image/png"
    assert png.content.startswith(b"\x89PNG")
    assert f'filename="{link.code}-qr.png"' in png["Content-Disposition"]
    svg = logged_in.get(reverse("link_qr", args=[link.code, "svg"]))
    assert svg["Content-Type"] == "image/svg+xml"
    assert b"<svg" in svg.content


def test_qr_of_another_marketers_link_is_404(logged_in, other_user):
    theirs = UrlLinkFactory(owner=other_user)
    assert logged_in.get(reverse("link_qr", args=[theirs.code, "png"])).status_code == 404
    assert logged_in.get(reverse("link_qr_page", args=[theirs.code])).status_code == 404


# --- My links ---------------------------------------------------------------------------------


def test_dashboard_empty_state(logged_in):
    html = logged_in.get(reverse("dashboard")).content.decode()
    assert "You have no short links yet." in html


def test_dashboard_lists_only_own_links_with_clicks(logged_in, user, other_user):
    mine = UrlLinkFactory(owner=user)
    theirs = UrlLinkFactory(owner=other_user)
    add_visits(mine, 3)
    response = logged_in.get(reverse("dashboard"))
    rows = response.context["rows"]
    assert [row["link"].code for row in rows] == [mine.code]
    assert rows[0]["clicks"] == 3
    assert rows[0]["unique_visitors"] == 3
    assert theirs.code not in response.content.decode()


def test_dashboard_search_filter_and_sort(logged_in, user):
    a = UrlLinkFactory(owner=user, long_url="https://example.com/alpha", alias="alpha-link")
    b = UrlLinkFactory(
        owner=user,
        long_url="https://example.com/beta",
        alias="beta-link",
        title="Beta launch",
        revoked=True,
    )

    def codes(**params):
        return [
            row["link"].code for row in logged_in.get(reverse("dashboard"), params).context["rows"]
        ]

    assert codes(q="launch") == [b.code]
    assert codes(q="alpha") == [a.code]
    assert codes(status="active") == [a.code]
    assert codes(status="expired") == [b.code]
    assert codes(order="code") == ["alpha-link", "beta-link"]
    assert codes(order="oldest") == [a.code, b.code]
    assert codes(order="newest") == [b.code, a.code]
    # The orders the Shlink layer offers too (links.selectors.LINK_ORDERS), in the sort menu.
    assert codes(order="code_desc") == ["beta-link", "alpha-link"]
    assert codes(order="title") == [a.code, b.code]  # untitled first, as ""
    assert codes(order="long_url_desc") == [b.code, a.code]
    menu = logged_in.get(reverse("dashboard")).content.decode()
    assert "Least clicked, bots included" in menu and "Long URL Z–A" in menu


def test_dashboard_no_match_state(logged_in, user):
    UrlLinkFactory(owner=user, long_url="https://example.com/alpha")
    html = logged_in.get(reverse("dashboard"), {"q": "zzz-nothing"}).content.decode()
    assert "No links match." in html


def test_dashboard_bad_filter_values_fall_back_with_a_message(logged_in, user):
    UrlLinkFactory(owner=user)
    response = logged_in.get(reverse("dashboard"), {"status": "weird", "order": "sideways"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Unknown filter; showing all links." in html
    assert "Unknown sort order; showing newest first." in html
    assert len(response.context["rows"]) == 1


def test_dashboard_paginates(logged_in, user):
    UrlLinkFactory.create_batch(23, owner=user)
    first = logged_in.get(reverse("dashboard"))
    assert len(first.context["rows"]) == 20
    assert "Page 1 of 2" in first.content.decode()
    second = logged_in.get(reverse("dashboard"), {"page": 2})
    assert len(second.context["rows"]) == 3
    # Nonsense page numbers land on a real page instead of an error.
    assert logged_in.get(reverse("dashboard"), {"page": "999"}).status_code == 200


def test_dashboard_query_count_does_not_grow_with_rows(
    logged_in, user, django_assert_max_num_queries
):
    def queries_for_page():
        with django_assert_max_num_queries(50) as captured:
            assert logged_in.get(reverse("dashboard")).status_code == 200
        return len(captured.captured_queries)

    add_visits(UrlLinkFactory(owner=user), 2)
    few = queries_for_page()
    for other in UrlLinkFactory.create_batch(15, owner=user):
        add_visits(other, 1)
    many = queries_for_page()
    assert many == few, (few, many)
    # One more than before workspaces: the person's memberships (the current workspace and the
    # header's switcher), read once per request; one more for the invitations waiting for the
    # person's answer (one indexed count, shown above the list); one more for the people
    # counted as the stats count them (the roll-ups' per-visitor sums, analytics.selectors).
    assert few <= 11


# --- Edit -------------------------------------------------------------------------------------


def test_edit_changes_url_and_title(logged_in, user, client):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/old")
    response = logged_in.post(
        reverse("link_edit", args=[link.code]),
        {"long_url": "https://example.com/new", "title": "New", "redirect_type": "302"},
    )
    assert response.status_code == 302
    link.refresh_from_db()
    assert (link.long_url, link.title) == ("https://example.com/new", "New")
    # The redirect follows the change at once (cached entry refreshed by the service).
    assert client.get(f"/{link.code}")["Location"] == "https://example.com/new"


def test_edit_keeps_an_expiry_in_the_past_when_only_the_title_changes(logged_in, user):
    link = UrlLinkFactory(owner=user, expires_at=timezone.now() - dt.timedelta(days=1))
    form_expiry = timezone.localtime(link.expires_at).strftime("%Y-%m-%dT%H:%M")
    response = logged_in.post(
        reverse("link_edit", args=[link.code]),
        {
            "long_url": link.long_url,
            "title": "renamed",
            "expires_at": form_expiry,
            "redirect_type": "302",
        },
    )
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.title == "renamed"


@pytest.mark.parametrize(
    "data, field, message",
    [
        ({"long_url": "javascript:alert(1)"}, "long_url", "Only http and https"),
        ({"long_url": ""}, "long_url", "Enter the long URL"),
        ({"expires_at": "2001-01-01T00:00"}, "expires_at", "must be in the future"),
        ({"expires_at": "31/12/2030"}, "expires_at", "Enter a date and time"),
        ({"redirect_type": "999"}, "redirect_type", "Choose temporary (302)"),
    ],
)
def test_edit_form_rejects_bad_input(logged_in, user, data, field, message):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/keep")
    payload = {"long_url": link.long_url, "title": "", "redirect_type": "302", **data}
    response = logged_in.post(reverse("link_edit", args=[link.code]), payload)
    assert response.status_code == 200
    assert any(message in e for e in response.context["form"].errors[field])
    link.refresh_from_db()
    assert link.long_url == "https://example.com/keep"


def test_edit_of_another_marketers_link_is_404(logged_in, other_user):
    theirs = UrlLinkFactory(owner=other_user, long_url="https://example.com/theirs")
    url = reverse("link_edit", args=[theirs.code])
    assert logged_in.get(url).status_code == 404
    response = logged_in.post(url, {"long_url": "https://evil.example/", "redirect_type": "302"})
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.long_url == "https://example.com/theirs"


def test_edit_unknown_code_is_a_friendly_404(logged_in):
    response = logged_in.get(reverse("link_edit", args=["nope-nope"]))
    assert response.status_code == 404


# --- Revoke -----------------------------------------------------------------------------------


def test_revoke_asks_first_then_revokes_on_post(logged_in, user, client):
    link = UrlLinkFactory(owner=user)
    url = reverse("link_revoke", args=[link.code])
    confirm = logged_in.get(url)
    assert "Revoke this short link?" in confirm.content.decode()
    link.refresh_from_db()
    assert link.revoked_at is None  # looking at the question changes nothing

    response = logged_in.post(url)
    assert response.status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert client.get(f"/{link.code}").status_code == 410
    assert "is revoked" in logged_in.get(reverse("dashboard")).content.decode()


def test_revoke_needs_the_csrf_token(user):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    link = UrlLinkFactory(owner=user)
    response = strict.post(reverse("link_revoke", args=[link.code]))
    assert response.status_code == 403
    assert "Please try again" in response.content.decode()  # a friendly page
    link.refresh_from_db()
    assert link.revoked_at is None


def test_revoke_of_another_marketers_link_is_404(logged_in, other_user):
    theirs = UrlLinkFactory(owner=other_user)
    url = reverse("link_revoke", args=[theirs.code])
    assert logged_in.get(url).status_code == 404
    assert logged_in.post(url).status_code == 404
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_revoked_link_cannot_be_edited(logged_in, user):
    link = UrlLinkFactory(owner=user, revoked=True)
    response = logged_in.get(reverse("link_edit", args=[link.code]), follow=True)
    assert "can no longer be changed" in response.content.decode()


def test_output_is_escaped(logged_in, user):
    UrlLinkFactory(
        owner=user, long_url="https://example.com/?q=<script>alert(1)</script>", title="<b>bold</b>"
    )
    html = logged_in.get(reverse("dashboard")).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html
