"""Destination health (issue #29): the rule (K failed checks in a row make a destination broken,
one success recovers it, each change announced once even when two checkers race), the checker
against real local servers (errors, a short deadline, redirects each checked against the
address rule, TLS, soft-404 hints), the sweep's per-host pace, failover through both redirect
entry points with the cached entry refreshed, the API and `manage.py check_links`."""

from __future__ import annotations

import http.server
import json
import socket
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from analytics.models import VisitRecord
from links import cache as link_cache
from links import checker, events
from links.cache import LinkEntry
from links.checker import CheckResult
from links.models import CheckError, HealthStatus, LinkCheck, UrlLink
from links.services import health
from links.services.change import link_update
from links.services.create import link_create
from links.tests.destinations import start_destination
from links.tests.helpers import call_wsgi, client_for
from webhooks.tests.tls_server import served_over_tls

pytestmark = pytest.mark.django_db

BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"
TARGET = "https://example.com/spring"
FALLBACK = "https://example.com/spring-elsewhere"


@pytest.fixture(autouse=True)
def _checker_settings(settings):
    settings.LINK_CHECK_FAILURES = 2
    settings.LINK_CHECK_HOST_SECONDS = 0.0
    settings.LINK_CHECK_FETCH_SECONDS = 5.0


@pytest.fixture
def allow_private(settings):
    """The checker's test-only allowance: our destination servers run on loopback."""
    settings.LINK_CHECK_ALLOW_PRIVATE = True


@pytest.fixture
def destination(allow_private):
    destination, server = start_destination()
    yield destination
    server.shutdown()
    server.server_close()


@pytest.fixture
def announced():
    heard: list[tuple[str, str]] = []

    def listen(sender, *, event, links, **kwargs):
        heard.extend((event, link.code) for link in links)

    events.link_changed.connect(listen, dispatch_uid="test_health")
    yield heard
    events.link_changed.disconnect(dispatch_uid="test_health")


def _pointing_at(user, url: str, **options) -> UrlLink:
    """A link whose long URL is `url`: a loopback URL is set on the row, since the long-URL
    policy (rightly) refuses one."""
    link = link_create(user=user, long_url=TARGET, **options).link
    UrlLink.objects.filter(pk=link.pk).update(long_url=url)
    link.refresh_from_db()
    link_cache.drop(link_cache.key_of_link(link))
    return link


def _failed(url: str = TARGET) -> CheckResult:
    return CheckResult(url=url, ok=False, status_code=500, error="http", detail="answered 500.")


def _fine(url: str = TARGET, **extra) -> CheckResult:
    return CheckResult(url=url, ok=True, status_code=200, **extra)


# --- The rule ----------------------------------------------------------------------------------


def test_broken_after_two_failures_in_a_row_and_recovered_by_one_success(
    user, announced, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url=TARGET).link
    assert link.health_status == HealthStatus.UNKNOWN
    with django_capture_on_commit_callbacks(execute=True):
        assert health.record_checks(link=link, results=[_fine()]) == HealthStatus.OK
        assert health.record_checks(link=link, results=[_failed()]) == HealthStatus.OK
        assert "failed once" in link.health_reason
        assert health.record_checks(link=link, results=[_failed()]) == HealthStatus.BROKEN
        broken_since = link.health_since
        assert health.record_checks(link=link, results=[_failed()]) == HealthStatus.BROKEN
        assert link.health_since == broken_since  # still the same spell
        assert health.record_checks(link=link, results=[_fine()]) == HealthStatus.OK
    assert announced == [("link.broken", link.code), ("link.recovered", link.code)]
    row = UrlLink.objects.get(pk=link.pk)
    assert row.health_status == HealthStatus.OK and row.health_checked_at is not None
    assert LinkCheck.objects.filter(link=link).count() == 5


def test_a_failure_between_successes_never_breaks_the_link(user, announced):
    link = link_create(user=user, long_url=TARGET).link
    for result in (_failed(), _fine(), _failed(), _fine(), _failed()):
        health.record_checks(link=link, results=[result])
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.OK
    assert announced == []


def test_two_checkers_racing_announce_the_change_once(
    user, announced, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url=TARGET).link
    health.record_checks(link=link, results=[_fine()])
    health.record_checks(link=link, results=[_failed()])
    # Two checkers read the link while it was still fine, and both see its second failure.
    first, second = UrlLink.objects.get(pk=link.pk), UrlLink.objects.get(pk=link.pk)
    with django_capture_on_commit_callbacks(execute=True):
        health.record_checks(link=first, results=[_failed()])
        health.record_checks(link=second, results=[_failed()])
    assert announced == [("link.broken", link.code)]
    assert second.health_status == HealthStatus.BROKEN  # the loser reads what won
    # And recovering: two checkers that both read it broken.
    first, second = UrlLink.objects.get(pk=link.pk), UrlLink.objects.get(pk=link.pk)
    with django_capture_on_commit_callbacks(execute=True):
        health.record_checks(link=first, results=[_fine()])
        health.record_checks(link=second, results=[_fine()])
    assert announced == [("link.broken", link.code), ("link.recovered", link.code)]


def test_a_soft_404_hint_is_kept_in_the_reason_but_the_link_stays_ok(user):
    link = link_create(user=user, long_url=TARGET).link
    hint = _fine(error=CheckError.SOFT404, detail="Hint: the page's title says 'Not found'.")
    for _ in range(3):
        health.record_checks(link=link, results=[hint])
    assert link.health_status == HealthStatus.OK
    assert "Not found" in link.health_reason


def test_a_check_the_address_rule_stopped_counts_neither_way(user):
    link = link_create(user=user, long_url=TARGET).link
    blocked = CheckResult(url=TARGET, ok=False, error=CheckError.BLOCKED, detail="Not checked")
    health.record_checks(link=link, results=[_failed()])
    health.record_checks(link=link, results=[blocked])
    health.record_checks(link=link, results=[blocked])
    assert link.health_status == HealthStatus.OK  # one real failure only
    assert health.record_checks(link=link, results=[_failed()]) == HealthStatus.BROKEN


def test_the_history_is_capped_per_link(user, settings):
    settings.LINK_CHECK_HISTORY = 5
    link = link_create(user=user, long_url=TARGET).link
    for _ in range(12):
        health.record_checks(link=link, results=[_fine()])
    assert LinkCheck.objects.filter(link=link).count() == 5


def test_every_web_destination_is_checked_once(user):
    link = link_create(
        user=user,
        long_url=TARGET,
        variants=[
            {"url": "https://example.com/a", "weight": 50},
            {"url": TARGET, "weight": 50},
        ],
        rules=[{"country": "DE", "url": "https://example.de/"}],
        ios_url="myapp://item/7",
    ).link
    assert health.link_destinations(link) == [
        TARGET,
        "https://example.com/a",
        "https://example.de/",
    ]


def test_one_broken_variant_breaks_the_link_and_names_it(user):
    link = link_create(
        user=user,
        long_url=TARGET,
        variants=[{"url": TARGET, "weight": 50}, {"url": "https://example.com/b", "weight": 50}],
    ).link
    for _ in range(2):
        health.record_checks(link=link, results=[_fine(), _failed("https://example.com/b")])
    assert link.health_status == HealthStatus.BROKEN
    assert "500" in link.health_reason


# --- The checker against real servers ------------------------------------------------------


def test_a_working_page_is_ok_and_fetched_as_the_checker(destination):
    destination.answer("/page", 200, "<title>Spring offers</title>")
    result = checker.check_url(destination.url("/page"), seconds=5)
    assert (result.ok, result.status_code, result.error) == (True, 200, "")
    assert result.final_url == destination.url("/page")
    [(path, headers)] = destination.requests
    assert path == "/page" and headers["User-Agent"].startswith("shorturl-link-checker/1")


@pytest.mark.parametrize("status, ok", [(500, False), (503, False), (404, False), (410, False)])
def test_error_answers_fail(destination, status, ok):
    destination.answer("/x", status, "oops")
    result = checker.check_url(destination.url("/x"), seconds=5)
    assert (result.ok, result.status_code, result.error) == (ok, status, CheckError.HTTP)
    assert str(status) in result.detail


def test_a_403_is_a_robot_refused_not_a_broken_page(destination):
    destination.answer("/x", 403, "go away")
    result = checker.check_url(destination.url("/x"), seconds=5)
    assert result.ok and "403" in result.detail


def test_a_slow_server_is_cut_off_at_the_deadline(destination):
    destination.answer("/slow", 200, "late", delay=3.0)
    result = checker.check_url(destination.url("/slow"), seconds=0.5)
    assert (result.ok, result.error) == (False, CheckError.TIMEOUT)
    assert result.elapsed_ms < 2000


def test_a_name_that_never_resolves_is_cut_off_at_the_deadline(monkeypatch):
    """getaddrinfo cannot be interrupted: a resolver that hangs must not hold the checker past
    the fetch's deadline."""

    def hanging(*args, **kwargs):
        time.sleep(3)
        raise OSError("gave up")

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    result = checker.check_url("http://slow-dns.example.com/page", seconds=0.5)
    assert (result.ok, result.error) == (False, CheckError.TIMEOUT)
    assert result.elapsed_ms < 1500


def test_a_closed_port_is_refused(allow_private):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = checker.check_url(f"http://127.0.0.1:{port}/", seconds=2)
    assert (result.ok, result.error) == (False, CheckError.REFUSED)


def test_a_redirect_chain_is_followed_to_its_end(destination):
    destination.answer("/a", 301, "", Location="/b")
    destination.answer("/b", 302, "", Location=destination.url("/c"))
    destination.answer("/c", 200, "<title>Here</title>")
    result = checker.check_url(destination.url("/a"), seconds=5)
    assert result.ok and result.final_url == destination.url("/c")
    assert [path for path, _ in destination.requests] == ["/a", "/b", "/c"]


def test_more_than_five_redirects_fail(destination):
    destination.answer("/loop", 302, "", Location="/loop")
    result = checker.check_url(destination.url("/loop"), seconds=5)
    assert (result.ok, result.error) == (False, CheckError.HTTP)
    assert len(destination.requests) == checker.MAX_REDIRECTS + 1


def test_a_redirect_to_a_private_address_is_never_followed(destination, settings, monkeypatch):
    """Production's rule: the first hop is a (stand-in) public server, which redirects to an
    internal address; that hop is refused before any connection, and counts neither way."""
    destination.answer("/go", 302, "", Location="http://internal.test/admin")
    port = int(destination.base.rsplit(":", 1)[1])
    table = {"public.test": ["127.0.0.1"], "internal.test": ["10.0.0.5"]}
    monkeypatch.setattr("links.outbound.resolve", lambda host, port, **kw: table[host])
    real = __import__("links.outbound", fromlist=["_address_is_public"])._address_is_public
    monkeypatch.setattr(
        "links.outbound._address_is_public",
        lambda address: str(address) == "127.0.0.1" or real(address),
    )
    settings.LINK_CHECK_ALLOW_PRIVATE = False
    result = checker.check_url(f"http://public.test:{port}/go", seconds=5)
    assert (result.ok, result.error, result.counts) == (False, CheckError.BLOCKED, False)
    assert "10.0.0.5" in result.detail
    assert [path for path, _ in destination.requests] == ["/go"]


def test_loopback_is_refused_without_the_test_allowance(settings):
    settings.LINK_CHECK_ALLOW_PRIVATE = False
    result = checker.check_url("http://127.0.0.1:9/", seconds=2)
    assert result.error == CheckError.BLOCKED and "this machine" in result.detail


def test_the_webhooks_lan_allowance_does_not_open_internal_addresses_to_the_checker(settings):
    """An operator may let webhooks reach a receiver on their network; link destinations are
    any owner's to choose, so the checker keeps refusing private addresses then."""
    settings.SHORTURL_WEBHOOK_ALLOW_PRIVATE = True
    settings.LINK_CHECK_ALLOW_PRIVATE = False
    for url in ("http://127.0.0.1:9/", "http://10.0.0.5/admin", "http://169.254.169.254/"):
        result = checker.check_url(url, seconds=2)
        assert (result.error, result.counts) == (CheckError.BLOCKED, False), url


@pytest.fixture
def tls_destination(allow_private):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    with served_over_tls(Handler) as port:
        yield port


def test_an_untrusted_certificate_is_a_tls_failure(tls_destination):
    result = checker.check_url(f"https://localhost:{tls_destination}/", seconds=5)
    assert (result.ok, result.error) == (False, CheckError.TLS)
    assert "CERTIFICATE_VERIFY_FAILED" in result.detail


def test_a_not_found_page_answering_200_is_a_hint(destination):
    destination.answer("/gone", 200, "<html><title>Page not found - Shop</title></html>")
    result = checker.check_url(destination.url("/gone"), seconds=5)
    assert (result.ok, result.error) == (True, CheckError.SOFT404)
    assert "Page not found" in result.detail


def test_a_deep_link_sent_to_the_front_page_is_a_hint(destination):
    destination.answer("/item/7", 302, "", Location="/")
    result = checker.check_url(destination.url("/item/7"), seconds=5)
    assert (result.ok, result.error) == (True, CheckError.SOFT404)
    assert "front page" in result.detail


# --- The sweep -----------------------------------------------------------------------------


def test_the_sweep_checks_due_links_at_one_request_per_host(user, destination, settings):
    settings.LINK_CHECK_HOST_SECONDS = 60.0
    health._limiter._next.clear()
    first = _pointing_at(user, destination.url("/one"))
    second = _pointing_at(user, destination.url("/two"), title="Two")
    assert health.link_health_sweep(max_seconds=10) == 1  # the host's turn is used up
    assert health.link_health_sweep(max_seconds=10) == 0
    settings.LINK_CHECK_HOST_SECONDS = 0.0
    health._limiter._next.clear()
    assert health.link_health_sweep(max_seconds=10) == 1  # the other one, still due
    assert health.link_health_sweep(max_seconds=10) == 0  # both checked: not due again yet
    statuses = set(
        UrlLink.objects.filter(pk__in=[first.pk, second.pk]).values_list("health_status", flat=True)
    )
    assert statuses == {HealthStatus.OK}


def test_a_failed_check_brings_the_next_one_forward(user, settings):
    """Working links wait LINK_CHECK_OK_SECONDS; after a failure (not yet broken) and while
    broken, LINK_CHECK_BROKEN_SECONDS: a failing destination is confirmed within a minute, not
    two quarter-hours."""
    settings.LINK_CHECK_OK_SECONDS, settings.LINK_CHECK_BROKEN_SECONDS = 900, 60
    link = link_create(user=user, long_url=TARGET).link
    assert health.links_due().filter(pk=link.pk).exists()  # never checked: due at once
    now = timezone.now()
    health.record_checks(link=link, results=[_fine()], now=now)
    due_at = {
        seconds: health.links_due(now=now + timedelta(seconds=seconds)).filter(pk=link.pk).exists()
        for seconds in (61, 901)
    }
    assert due_at == {61: False, 901: True}
    health.record_checks(link=link, results=[_failed()], now=now)
    assert link.health_status == HealthStatus.OK
    assert health.links_due(now=now + timedelta(seconds=61)).filter(pk=link.pk).exists()


def test_check_links_runs_one_pass_now(user, destination):
    destination.answer("/down", 500, "down")
    link = _pointing_at(user, destination.url("/down"))
    out = _command("--code", link.code)
    assert f"{link.code}: ok" in out and "answered 500" in out and "Checked 1 link" in out
    out = _command("--code", link.code)
    assert f"{link.code}: broken" in out and "1 broken" in out


def _command(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command("check_links", *args, stdout=out)
    return out.getvalue()


# --- Failover ----------------------------------------------------------------------------------


def _break(link: UrlLink) -> None:
    for _ in range(2):
        health.record_checks(link=link, results=[_failed(link.long_url)])
    assert link.health_status == HealthStatus.BROKEN


# transaction=True: the fast path reads a cache miss on its own connection (MariaDB).
@pytest.mark.django_db(transaction=True)
def test_a_broken_link_with_a_fallback_sends_visitors_there_until_it_recovers(user, client):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    # Cached while fine, as the redirect leaves it.
    status, headers, _ = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert headers["Location"] == TARGET
    _break(link)
    status, headers, _ = call_wsgi(
        f"/{link.code}", query_string="utm_source=mail", extra={"HTTP_USER_AGENT": BROWSER}
    )
    assert (status, headers["Location"]) == ("302 Found", FALLBACK + "?utm_source=mail")
    response = client.get(f"/{link.code}", HTTP_USER_AGENT=BROWSER)  # Django's view
    assert (response.status_code, response["Location"]) == (302, FALLBACK)
    health.record_checks(link=link, results=[_fine()])
    status, headers, _ = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert headers["Location"] == TARGET
    call_command("drain_visits", verbosity=0)
    destinations = list(
        VisitRecord.objects.filter(link=link)
        .order_by("visit_time", "id")
        .values_list("destination", flat=True)
    )
    assert destinations == ["", FALLBACK, FALLBACK, ""]


# transaction=True: the fast path reads a cache miss on its own connection (MariaDB).
@pytest.mark.django_db(transaction=True)
def test_a_broken_link_without_a_fallback_still_sends_visitors_to_its_destination(user):
    link = link_create(user=user, long_url=TARGET).link
    _break(link)
    _status, headers, _ = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert headers["Location"] == TARGET


def test_a_healthy_links_entry_is_as_plain_as_before(user):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    health.record_checks(link=link, results=[_fine()])
    entry = LinkEntry.from_link(link)
    assert not entry.gated and entry.counted_by_read and entry.failover == ""
    assert entry.serialize().count("\t") == 4  # the five-field form a plain link always had
    _break(link)
    broken = LinkEntry.parse(entry.key, LinkEntry.from_link(link).serialize())
    assert broken.gated and broken.failover == FALLBACK


# transaction=True: the fast path reads a cache miss on its own connection (MariaDB).
@pytest.mark.django_db(transaction=True)
def test_a_fallback_added_while_broken_takes_effect_at_once(user):
    link = link_create(user=user, long_url=TARGET).link
    _break(link)
    call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
    link_update(code=link.code, user=user, fallback_url=FALLBACK)
    _status, headers, _ = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})
    assert headers["Location"] == FALLBACK


@pytest.mark.django_db(transaction=True)
def test_a_new_destination_forgets_the_old_ones_health_and_stops_the_failover(user):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    _break(link)
    assert call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})[1]["Location"] == FALLBACK
    link_update(code=link.code, user=user, title="Renamed")  # not a destination: kept
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.BROKEN
    link_update(code=link.code, user=user, long_url="https://example.com/fixed")
    row = UrlLink.objects.get(pk=link.pk)
    assert (row.health_status, row.health_checked_at) == (HealthStatus.UNKNOWN, None)
    location = call_wsgi(f"/{link.code}", extra={"HTTP_USER_AGENT": BROWSER})[1]["Location"]
    assert location == "https://example.com/fixed"
    assert health.links_due().filter(pk=link.pk).exists()  # first in line


# --- The API -----------------------------------------------------------------------------------


def test_the_api_takes_a_fallback_through_the_long_url_policy_and_shows_health(user):
    api = client_for(user)
    refused = api.post(
        "/api/v1/links/",
        {"long_url": TARGET, "fallback_url": "http://localhost:8000/x"},
        format="json",
    )
    assert refused.status_code == 400 and "fallback_url" in refused.json()
    made = api.post(
        "/api/v1/links/", {"long_url": TARGET, "fallback_url": "example.com/b"}, format="json"
    )
    assert made.status_code == 201
    body = made.json()
    assert body["fallback_url"] == "https://example.com/b"
    assert body["health"] == {"status": "unknown", "since": None, "reason": "", "checked_at": None}
    link = UrlLink.objects.get(code=body["code"])
    _break(link)
    shown = api.get(f"/api/v1/links/{link.code}/").json()["health"]
    assert shown["status"] == "broken" and "500" in shown["reason"]
    assert shown["since"].endswith("Z") and shown["checked_at"] == shown["since"]
    cleared = api.patch(f"/api/v1/links/{link.code}/", {"fallback_url": ""}, format="json")
    assert cleared.status_code == 200 and cleared.json()["fallback_url"] is None
    listed = api.get("/api/v1/links/", {"health": "broken"}).json()
    assert [item["code"] for item in listed["results"]] == [link.code]
    assert api.get("/api/v1/links/", {"health": "ok"}).json()["count"] == 0


def test_bulk_items_take_a_failover_url_through_the_policy(user):
    answer = client_for(user).post(
        "/api/v1/links/bulk/",
        {
            "items": [
                {"long_url": TARGET, "fallback_url": FALLBACK},
                {"long_url": TARGET + "/2", "fallback_url": "http://127.0.0.1/"},
            ]
        },
        format="json",
    )
    assert answer.status_code in (200, 201, 207), answer.content
    results = answer.json()["results"]
    assert results[0]["link"]["fallback_url"] == FALLBACK
    assert results[0]["link"]["health"]["status"] == "unknown"
    assert "fallback_url" in json.dumps(results[1]["errors"])


def test_the_exports_carry_the_failover_and_health_and_an_import_reads_the_failover(
    client, user, other_user
):
    from links.imports.formats import parse_file
    from links.imports.service import link_import

    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    _break(link)
    client.force_login(user)
    for fmt in ("csv", "json"):
        data = b"".join(client.get(reverse("links_export", args=[fmt])).streaming_content)
        if fmt == "json":
            exported = json.loads(data)["links"][0]
            assert (exported["fallback_url"], exported["health"]) == (FALLBACK, "broken")
        report = link_import(user=other_user, parsed=parse_file(data), request_host="testserver")
        copy = UrlLink.objects.get(owner=other_user, code=report.entries[0].code)
        # The failover comes over; the health is the checker's to find for the new link.
        assert (copy.fallback_url, copy.health_status) == (FALLBACK, HealthStatus.UNKNOWN)
        copy.delete()


# --- The pages: forms, My links, the link page, the admin ------------------------------------


def test_the_create_and_edit_forms_take_a_failover_url_through_the_policy(client, user):
    client.force_login(user)
    base = {"long_url": TARGET, "redirect_type": "302", "pass_query": "on"}
    refused = client.post(reverse("home"), {**base, "fallback_url": "http://localhost/x"})
    assert refused.status_code == 200 and refused.context["form"].errors["fallback_url"]
    assert refused.context["options_open"]
    assert client.post(reverse("home"), {**base, "fallback_url": FALLBACK}).status_code == 302
    link = UrlLink.objects.get(fallback_url=FALLBACK)
    url = reverse("link_edit", args=[link.code])
    edit = {"long_url": TARGET, "title": "", "redirect_type": "302", "pass_query": "on"}
    assert f'value="{FALLBACK}"' in client.get(url).content.decode()
    assert client.post(url, {**edit, "fallback_url": ""}).status_code == 302
    link.refresh_from_db()
    assert link.fallback_url == ""


def test_my_links_filters_the_broken_ones_and_badges_them(client, user):
    client.force_login(user)
    fine = link_create(user=user, long_url=TARGET, title="Fine").link
    broken = link_create(user=user, long_url=TARGET, title="Broken", fallback_url=FALLBACK).link
    health.record_checks(link=fine, results=[_fine()])
    _break(broken)
    page = client.get(reverse("dashboard")).content.decode()
    assert page.count('data-testid="health-badge"') == 1 and "→ failover" in page
    only = client.get(reverse("dashboard"), {"health": "broken"})
    assert [row["link"].code for row in only.context["rows"]] == [broken.code]
    assert "answered 500" in only.content.decode()  # the reason, in the badge's title


def test_the_link_page_shows_its_health_and_recent_checks(client, user):
    client.force_login(user)
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert "Not checked yet" in page and 'data-testid="health-checks"' not in page
    _break(link)
    page = client.get(reverse("link_stats", args=[link.code])).content.decode()
    assert "Broken since" in page and f'Visitors go to <span class="long-url">{FALLBACK}' in page
    assert page.count('<tr><td data-label="Checked">') == 2


def test_the_failover_field_says_how_often_this_deployment_checks(client, user, settings):
    settings.LINK_CHECK_OK_SECONDS = 300
    settings.LINK_CHECK_FAILURES = 3
    client.force_login(user)
    page = client.get(reverse("home")).content.decode()  # the create form
    assert "about every 5 minutes); once one fails 3 times in a row" in page


def test_the_admin_shows_health_filters_by_it_and_lists_the_checks(admin_client, user):
    link = link_create(user=user, long_url=TARGET).link
    other = link_create(user=user, long_url=TARGET, title="Other").link
    _break(link)
    health.record_checks(link=other, results=[_fine()])
    changelist = reverse("admin:links_urllink_changelist")
    listed = admin_client.get(changelist, {"health_status__exact": "broken"})
    assert [row.code for row in listed.context["cl"].result_list] == [link.code]
    assert "Broken since" in listed.content.decode()
    page = admin_client.get(reverse("admin:links_urllink_change", args=[link.pk]))
    text = page.content.decode()
    assert page.status_code == 200 and "destination checks" in text.lower()
    assert text.count("answered 500.") >= 2


# --- Edits, overlapping checkers, budgets (the #29 review) ------------------------------------


def _health_events(announced: list[tuple[str, str]]) -> list[str]:
    return [event for event, _code in announced if event in ("link.broken", "link.recovered")]


def test_a_check_of_the_old_destination_never_breaks_a_link_just_fixed(
    user, announced, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    health.record_checks(link=link, results=[_failed()])
    stale = UrlLink.objects.get(pk=link.pk)  # a sweep read it, and fetches TARGET again
    with django_capture_on_commit_callbacks(execute=True):
        link_update(code=link.code, user=user, long_url="https://example.com/fixed")
        # Its second failure in a row, of a destination the link no longer has.
        assert health.record_checks(link=stale, results=[_failed()]) == HealthStatus.UNKNOWN
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.UNKNOWN
    assert not LinkCheck.objects.filter(link=link).exists()
    assert _health_events(announced) == []


def test_failures_from_before_an_edit_do_not_count_after_it(user):
    link = link_create(user=user, long_url=TARGET).link
    health.record_checks(link=link, results=[_failed()])
    other = "https://example.com/b"
    link = link_update(
        code=link.code,
        user=user,
        variants=[{"url": TARGET, "weight": 50}, {"url": other, "weight": 50}],
    )
    assert link.health_status == HealthStatus.UNKNOWN
    # TARGET's failure before the edit is forgotten with the rest: this is its first.
    assert health.record_checks(link=link, results=[_failed(), _fine(other)]) == HealthStatus.OK
    assert "failed once" in link.health_reason


def test_two_checkers_holding_one_failing_link_record_one_check_per_pass(user, destination):
    """Two ticks, or check_links beside the job, that both read the link: one checks it."""
    destination.answer("/down", 500, "down")
    link = _pointing_at(user, destination.url("/down"))
    first, second = UrlLink.objects.get(pk=link.pk), UrlLink.objects.get(pk=link.pk)
    assert health.link_health_sweep(links=[first]) == 1
    assert health.link_health_sweep(links=[second]) == 0  # taken: skipped
    assert len(destination.requests) == 1
    assert LinkCheck.objects.filter(link=link).count() == 1
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.OK  # one failure
    assert health.link_health_sweep(links=[UrlLink.objects.get(pk=link.pk)]) == 1
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.BROKEN  # two passes


def test_the_link_recovers_once_each_destination_works_even_if_another_failed_once(
    user, announced, django_capture_on_commit_callbacks
):
    """The docs' rule: a destination is broken after its own K failures in a row; the link
    while any destination is."""
    other = "https://example.com/b"
    link = link_create(
        user=user,
        long_url=TARGET,
        variants=[{"url": TARGET, "weight": 50}, {"url": other, "weight": 50}],
    ).link
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(2):
            health.record_checks(link=link, results=[_failed(), _fine(other)])
        assert link.health_status == HealthStatus.BROKEN
        # TARGET works again; the other fails for the first time: nothing is broken.
        assert health.record_checks(link=link, results=[_fine(), _failed(other)]) == "ok"
        assert "failed once" in link.health_reason
        assert health.record_checks(link=link, results=[_fine(), _failed(other)]) == "broken"
    assert _health_events(announced) == ["link.broken", "link.recovered", "link.broken"]


def test_a_destination_not_reached_this_pass_keeps_what_its_last_checks_said(user):
    other = "https://example.com/b"
    link = link_create(
        user=user,
        long_url=TARGET,
        variants=[{"url": TARGET, "weight": 50}, {"url": other, "weight": 50}],
    ).link
    for _ in range(2):
        health.record_checks(link=link, results=[_fine(), _failed(other)])
    blocked = CheckResult(url=other, ok=False, error=CheckError.BLOCKED, detail="Not checked")
    assert health.record_checks(link=link, results=[_fine(), blocked]) == HealthStatus.BROKEN
    assert health.record_checks(link=link, results=[_fine()]) == HealthStatus.BROKEN


def test_an_edit_that_replaces_a_broken_destination_announces_the_recovery_once(
    user, announced, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    with django_capture_on_commit_callbacks(execute=True):
        _break(link)
        # The edit form sends the long URL again: the same destinations keep their health.
        link_update(code=link.code, user=user, long_url=TARGET, title="Again")
        assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.BROKEN
        link_update(code=link.code, user=user, long_url="https://example.com/fixed")
        link_update(code=link.code, user=user, long_url="https://example.com/fixed-2")
    assert _health_events(announced) == ["link.broken", "link.recovered"]
    assert UrlLink.objects.get(pk=link.pk).health_status == HealthStatus.UNKNOWN


def test_a_broken_link_whose_checks_are_all_blocked_is_unknown_and_its_failover_stops(
    user, announced, django_capture_on_commit_callbacks
):
    link = link_create(user=user, long_url=TARGET, fallback_url=FALLBACK).link
    blocked = CheckResult(url=TARGET, ok=False, error=CheckError.BLOCKED, detail="Not checked")
    with django_capture_on_commit_callbacks(execute=True):
        _break(link)
        assert health.record_checks(link=link, results=[blocked]) == HealthStatus.UNKNOWN
        assert health.record_checks(link=link, results=[blocked]) == HealthStatus.UNKNOWN
    assert _health_events(announced) == ["link.broken", "link.recovered"]
    assert "Not checked" in link.health_reason
    assert LinkEntry.from_link(UrlLink.objects.get(pk=link.pk)).failover == ""


def test_the_tick_budget_is_kept_between_a_links_destinations(user, destination):
    for path in ("/a", "/b", "/c"):
        destination.answer(path, 200, "slow", delay=0.6)
    link = _pointing_at(user, destination.url("/a"))
    variants = [{"url": destination.url(p), "weight": 50} for p in ("/b", "/c")]
    UrlLink.objects.filter(pk=link.pk).update(variants=variants)
    assert health.link_health_sweep(max_seconds=0.3) == 1
    assert [path for path, _ in destination.requests] == ["/a"]
    # The next pass starts with the destinations the last one did not reach.
    health.link_health_sweep(links=[UrlLink.objects.get(pk=link.pk)], max_seconds=0.3)
    assert [path for path, _ in destination.requests] == ["/a", "/b"]
