"""Social previews per link (issue #28) over HTTP against both deployments: a link made over the
API with og_title answers a link-preview fetcher (`curl -A 'facebookexternalhit/1.1'`) with a 200
HTML page carrying og:title and the other tags (escaped), never the destination; a browser gets
the redirect as before; the stats count the fetch apart, as a social preview, and the person's
visit as the one click. A link with no preview set sends fetchers on, as before.
"""

from __future__ import annotations

import html

import harness

FETCHER = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
TITLE = 'Spring sale <b>"30%"</b> & more'


def test_a_preview_fetcher_gets_the_preview_people_the_redirect(deployment):
    long_url = harness.unique_url("social-preview")
    made = harness.create_link(
        deployment,
        long_url,
        og_title=TITLE,
        og_description="Until Sunday.",
        og_image="https://example.com/img/spring.jpg",
    )
    code = made["code"]
    assert (made["og_title"], made["og_image"]) == (TITLE, "https://example.com/img/spring.jpg")

    fetched = harness.get_fresh(deployment.port, f"/{code}", {"User-Agent": FETCHER})
    assert fetched.status == 200, fetched
    assert fetched.location is None and fetched.content_type.startswith("text/html"), fetched
    page = fetched.body.decode()
    assert f'<meta property="og:title" content="{html.escape(TITLE)}">' in page, page
    assert "<b>" not in page  # escaped, never markup
    assert '<meta property="og:image" content="https://example.com/img/spring.jpg">' in page
    assert '<meta name="twitter:card" content="summary_large_image">' in page
    assert f"/{code}" in page and long_url not in page  # og:url is the short URL

    person = harness.get_fresh(deployment.port, f"/{code}", harness.visitor_headers(0))
    assert (person.status, person.location) == (302, long_url), person

    counted = harness.wait_for_visits(deployment, code, 2, timeout=60)
    assert counted.reached, f"the preview and the click never stored: {counted}"
    stats = harness.stats(deployment, code)
    assert (stats["total_clicks"], stats["bot_clicks"]) == (1, 1), stats
    kinds = {kind["kind"]: kind["clicks"] for kind in stats["bot_kinds"]}
    assert kinds == {"social": 1}, stats["bot_kinds"]


def test_a_link_without_a_preview_sends_fetchers_on(deployment):
    long_url = harness.unique_url("no-preview")
    code = harness.create_link(deployment, long_url)["code"]
    fetched = harness.get_fresh(deployment.port, f"/{code}", {"User-Agent": FETCHER})
    assert (fetched.status, fetched.location) == (302, long_url), fetched
