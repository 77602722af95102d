"""Social previews (issue #28) at the redirect: a link-preview fetcher gets a link's preview page
(200, Open Graph and Twitter Card tags, escaped, no destination), people the redirect, both entry
points alike; the fetch is stored as a social preview, never a click; links without a preview
are answered as before."""

import pytest
from django.core.management import call_command

from analytics.bots import BotKind, is_link_preview
from analytics.models import VisitRecord
from links import cache as link_cache
from links.services.change import link_update
from links.services.create import link_create
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
FACEBOOK = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
# What the issue names, as each app's fetcher sends it.
FETCHERS = [
    FACEBOOK,
    "Twitterbot/1.0",
    "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "TelegramBot (like TwitterBot)",
    "WhatsApp/2.23.20.0 A",
    # iMessage
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) "
    "Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
]
LONG_URL = "https://example.com/spring?secret=1"
# The fast path recycles the connection after a query, as Django would: committed rows.
FAST_PATH = pytest.mark.django_db(transaction=True)


def stored_visits(link) -> list[VisitRecord]:
    call_command("drain_visits", verbosity=0)  # services mode: store what the buffer holds
    return list(VisitRecord.objects.filter(link=link))


@pytest.fixture
def previewed(user):
    return link_create(
        user=user,
        long_url=LONG_URL,
        og_title='Spring <script>alert(1)</script> "sale"',
        og_description="Until Sunday & only online.",
        og_image="https://cdn.example.com/spring.jpg",
    ).link


@pytest.mark.parametrize("agent", FETCHERS)
def test_every_preview_fetcher_the_issue_names_is_one(agent):
    assert is_link_preview(agent)


@pytest.mark.parametrize("agent", [BROWSER, "", "curl/8.5.0", "Googlebot/2.1"])
def test_people_search_engines_and_scripts_are_not_preview_fetchers(agent):
    assert not is_link_preview(agent)


@FAST_PATH
@pytest.mark.parametrize("agent", FETCHERS)
def test_a_fetcher_gets_the_preview_page_on_the_fast_path(previewed, agent):
    status, headers, body = call_wsgi(f"/{previewed.code}", extra={"HTTP_USER_AGENT": agent})
    assert status == "200 OK"
    assert "Location" not in headers
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Cache-Control"] == "private, max-age=300"
    assert headers["Vary"] == "User-Agent"
    page = body.decode()
    assert (
        '<meta property="og:title" content="Spring &lt;script&gt;alert(1)&lt;/script&gt; '
        '&quot;sale&quot;">'
    ) in page
    assert "<script>" not in page
    assert '<meta property="og:description" content="Until Sunday &amp; only online.">' in page
    assert '<meta property="og:image" content="https://cdn.example.com/spring.jpg">' in page
    assert '<meta name="twitter:card" content="summary_large_image">' in page
    assert f'<meta property="og:url" content="http://testserver/{previewed.code}">' in page
    assert "example.com/spring?secret" not in page  # the destination is never named


@FAST_PATH
def test_people_get_the_redirect_unchanged(previewed):
    status, headers, body = call_wsgi(f"/{previewed.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert (status, headers["Location"], body) == ("302 Found", LONG_URL, b"")


def test_the_django_view_answers_the_same(client, previewed):
    page = client.get(f"/{previewed.code}", HTTP_USER_AGENT=FACEBOOK)
    assert page.status_code == 200 and "Location" not in page.headers
    assert b'property="og:title"' in page.content
    assert page["Cache-Control"] == "private, max-age=300"
    person = client.get(f"/{previewed.code}", HTTP_USER_AGENT=BROWSER)
    assert (person.status_code, person["Location"]) == (302, LONG_URL)


@FAST_PATH
def test_a_preview_is_stored_as_a_social_preview_never_as_a_click(previewed):
    call_wsgi(f"/{previewed.code}", extra={"HTTP_USER_AGENT": FACEBOOK})
    call_wsgi(f"/{previewed.code}", extra={"HTTP_USER_AGENT": BROWSER})
    visits = stored_visits(previewed)
    assert sorted((v.is_bot, v.bot_kind) for v in visits) == [
        (False, ""),
        (True, BotKind.SOCIAL.value),
    ]


@FAST_PATH
def test_a_head_from_a_fetcher_is_answered_and_not_counted(previewed):
    status, headers, body = call_wsgi(
        f"/{previewed.code}", "HEAD", extra={"HTTP_USER_AGENT": FACEBOOK}
    )
    assert (status, body, headers["Vary"]) == ("200 OK", b"", "User-Agent")
    assert stored_visits(previewed) == []


@FAST_PATH
def test_without_a_preview_fetchers_get_the_redirect_as_before(user):
    plain = link_create(user=user, long_url=LONG_URL).link
    assert not link_cache.LinkEntry.from_link(plain).gated  # the fused read still counts it
    status, headers, _ = call_wsgi(f"/{plain.code}", extra={"HTTP_USER_AGENT": FACEBOOK})
    assert (status, headers["Location"]) == ("302 Found", LONG_URL)


@FAST_PATH
def test_only_a_title_gives_a_summary_card_and_clearing_it_ends_the_preview(user):
    link = link_create(user=user, long_url=LONG_URL, og_title="Hello").link
    _, _, body = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": FACEBOOK})
    assert b'<meta name="twitter:card" content="summary">' in body
    assert b"og:image" not in body
    link_update(code=link.code, user=user, og_title="")
    status, headers, _ = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": FACEBOOK})
    assert (status, headers["Location"]) == ("302 Found", LONG_URL)


def test_the_cached_entry_keeps_the_preview(previewed):
    entry = link_cache.LinkEntry.from_link(previewed)
    again = link_cache.LinkEntry.parse(entry.key, entry.serialize())
    assert again == entry and again.preview and again.gated


@FAST_PATH
def test_a_password_protected_link_previews_without_giving_the_destination(user):
    link = link_create(
        user=user, long_url=LONG_URL, password="open sesame", og_title="Members only"
    ).link
    status, _, body = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": FACEBOOK})
    assert status == "200 OK" and b"Members only" in body and b"secret" not in body


def test_a_capped_link_used_up_answers_fetchers_410(client, user):
    link = link_create(user=user, long_url=LONG_URL, max_visits=1, og_title="Limited").link
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=FACEBOOK).status_code == 200
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER).status_code == 302
    assert client.get(f"/{link.code}", HTTP_USER_AGENT=FACEBOOK).status_code == 410


def test_a_revoked_link_answers_fetchers_410(client, user, previewed):
    from links.services.change import link_revoke

    link_revoke(code=previewed.code, user=user)
    assert client.get(f"/{previewed.code}", HTTP_USER_AGENT=FACEBOOK).status_code == 410
