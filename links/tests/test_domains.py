"""Several short domains (#15): links belong to a domain, the same alias may live on two, the
redirect picks the link by Host and code, unknown hosts answer 404, and each domain says where
its bare root and its unknown codes go. Checked through the services, the API, both entry points
of the redirect (the WSGI fast path and the Django view), the pages and the admin."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import transaction

from links import domains
from links.models import DEFAULT_DOMAIN_ID, Domain, UrlLink
from links.services.bulk import link_create_many
from links.services.change import link_revoke, link_update
from links.services.create import hold_owner, link_create
from links.services.domains import clean_host, domain_delete, domain_save
from links.tests.helpers import call_wsgi, client_for

# Transactional: the WSGI fast path recycles the database connection after a read, as Django
# does after a request, which on MariaDB would end a test's wrapping transaction.
pytestmark = pytest.mark.django_db(transaction=True)

GO = "go.example.test"
PROMO = "promo.example.test"


@pytest.fixture
def go():
    return domain_save(host=GO)


@pytest.fixture
def promo():
    return domain_save(
        host=PROMO,
        root_redirect="https://www.example.com/promo-home",
        not_found_redirect="https://www.example.com/promo-missing",
    )


def _location(host: str, path: str) -> tuple[str, str | None]:
    """(status line, Location) of GET `path` on `host` through the production entry point."""
    status, headers, _ = call_wsgi(path, extra={"HTTP_HOST": host})
    return status, headers.get("Location")


# --- Hosts and their domains ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("go.example.com", "go.example.com"),
        ("  Go.Example.COM. ", "go.example.com"),
        ("https://go.example.com/some/path", "go.example.com"),
        ("bücher.example", "xn--bcher-kva.example"),
    ],
)
def test_a_host_is_stored_in_one_spelling(typed, stored):
    assert clean_host(typed) == stored


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("", "Enter the domain's host name"),
        ("localhost", "not a host name people can reach"),
        ("go.example.com:8443", "without a port"),
        ("go_example.com", "not a valid host name"),
        ("-go.example.com", "not a valid host name"),
        ("10.0.0.1", "not a valid host name"),
        # urlsplit raises ValueError for the unclosed "[": a field error all the same, never a 500.
        ("http://[::1", "without a port"),
        ("[::1", "without a port"),
    ],
)
def test_a_host_that_is_no_reachable_name_is_refused_with_its_reason(typed, reason):
    with pytest.raises(ValidationError) as refused:
        clean_host(typed)
    assert refused.value.message_dict["host"][0].startswith(reason) or reason in str(refused.value)


def test_the_default_domain_and_a_domain_twice_are_refused(settings, go):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    with pytest.raises(ValidationError, match="is the default domain"):
        domain_save(host="s.example.com")
    with pytest.raises(ValidationError, match=r"There is a domain go\.example\.test already"):
        domain_save(host="GO.example.test")


def test_a_redirect_back_to_the_domains_own_root_is_refused():
    with pytest.raises(ValidationError) as refused:
        domain_save(host=GO, root_redirect=f"https://{GO}/", not_found_redirect="ftp://x.test/")
    errors = refused.value.message_dict
    assert "visitors would loop" in errors["root_redirect"][0]
    assert "Only http and https" in errors["not_found_redirect"][0]


def test_a_domain_with_links_cannot_be_removed_and_one_without_can(user, go):
    link_create(user=user, long_url="https://example.com/kept", domain=GO)
    with pytest.raises(ValidationError, match="still has 1 link"):
        domain_delete(domain=go)
    empty = domain_save(host="empty.example.test")
    domain_delete(domain=empty)
    assert not Domain.objects.filter(host="empty.example.test").exists()
    with pytest.raises(ValidationError, match="cannot be removed"):
        domain_delete(domain=Domain.objects.get(pk=DEFAULT_DOMAIN_ID))


def test_the_domains_command_adds_lists_changes_and_removes(capsys):
    call_command("domains", "add", "cli.example.test", "--root-redirect", "https://example.com/")
    call_command("domains", "set", "cli.example.test", "--not-found-redirect", "https://a.test/")
    call_command("domains", "list")
    listed = capsys.readouterr().out
    assert "cli.example.test: 0 link(s); root → https://example.com/; unknown codes → " in listed
    assert "https://a.test/" in listed
    call_command("domains", "remove", "cli.example.test")
    with pytest.raises(CommandError, match=r"There is no domain cli\.example\.test"):
        call_command("domains", "remove", "cli.example.test")


# --- Links on domains -------------------------------------------------------------------------


def test_the_same_alias_lives_on_two_domains_and_is_taken_per_domain(user, other_user, go):
    on_default = link_create(user=user, long_url="https://example.com/a", alias="spring").link
    on_go = link_create(
        user=other_user, long_url="https://example.com/b", alias="spring", domain=GO
    ).link
    assert (on_default.domain_id, on_go.domain.host) == (DEFAULT_DOMAIN_ID, GO)
    with pytest.raises(ValidationError, match="already taken; “spring-2” is free"):
        link_create(user=user, long_url="https://example.com/c", alias="spring", domain=GO)


def test_an_unknown_domain_is_refused_naming_the_known_ones(user, go):
    with pytest.raises(ValidationError) as refused:
        link_create(user=user, long_url="https://example.com/x", domain="nope.example.test")
    assert refused.value.message_dict["domain"] == [
        f"“nope.example.test” is not one of this service's short domains ({GO})."
    ]


def test_a_host_the_default_domain_is_served_on_names_it_without_a_request(user, go, settings):
    """An export names the default domain by its host (issue #27); imported back by the CLI,
    with no request to compare with, that host is the default domain's when the redirect serves
    it there (ALLOWED_HOSTS), as it already was for SHORT_URL_BASE's host. A bare "*" serves
    every host but names none."""
    settings.ALLOWED_HOSTS = ["testserver", "s.example.test", ".short.example.test"]
    for host in ("s.example.test", "S.Example.Test.", "go.short.example.test"):
        link = link_create(user=user, long_url=f"https://example.com/{host}", domain=host).link
        assert link.domain_id == DEFAULT_DOMAIN_ID, host
    settings.ALLOWED_HOSTS = ["*"]
    with pytest.raises(ValidationError, match="is not one of this service's short domains"):
        link_create(user=user, long_url="https://example.com/x", domain="nope.example.test")
    on_go = link_create(user=user, long_url="https://example.com/go", domain=GO).link
    assert on_go.domain_id == go.pk


def test_a_plain_create_reuses_the_link_on_the_same_domain_only(user, go):
    first = link_create(user=user, long_url="https://example.com/same").link
    again = link_create(user=user, long_url="https://example.com/same")
    on_go = link_create(user=user, long_url="https://example.com/same", domain=GO)
    assert (again.created, again.link.pk) == (False, first.pk)
    assert on_go.created and on_go.link.domain_id == go.pk


def test_a_long_url_on_a_short_domain_is_refused_as_a_link_back_here(user, go):
    with pytest.raises(ValidationError, match="points back"):
        link_create(user=user, long_url=f"https://{GO}/abc1234")


def test_bulk_items_take_their_domain_and_aliases_are_checked_per_domain(user, go):
    link_create(user=user, long_url="https://example.com/taken", alias="taken", domain=GO)
    results = link_create_many(
        user=user,
        items=[
            {"long_url": "https://example.com/1", "alias": "taken"},
            {"long_url": "https://example.com/2", "alias": "taken", "domain": GO},
            {"long_url": "https://example.com/3", "domain": GO},
            {"long_url": "https://example.com/4", "domain": "nope.example.test"},
        ],
    )
    assert results[0].link.domain_id == DEFAULT_DOMAIN_ID
    assert "already taken" in results[1].errors["alias"][0]
    assert results[2].link.domain_id == go.pk
    assert "not one of this service's short domains" in results[3].errors["domain"][0]


# --- The redirect -----------------------------------------------------------------------------


@pytest.mark.parametrize("entry_point", ["fast path", "django view"])
def test_the_redirect_picks_the_link_by_host_and_code(
    client, settings, user, go, promo, entry_point
):
    # Django serves only its ALLOWED_HOSTS (the fast path serves any domain's short codes).
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, GO, PROMO]
    link_create(user=user, long_url="https://example.com/default", alias="sale")
    link_create(user=user, long_url="https://example.com/go", alias="sale", domain=GO)
    generated = link_create(user=user, long_url="https://example.com/gen", domain=PROMO).link

    def answer(host: str, path: str) -> tuple[int, str | None]:
        if entry_point == "fast path":
            status, location = _location(host, path)
            return int(status[:3]), location
        response = client.get(path, HTTP_HOST=host)
        return response.status_code, response.headers.get("Location")

    assert answer("testserver", "/sale") == (302, "https://example.com/default")
    assert answer(GO, "/sale") == (302, "https://example.com/go")
    assert answer(GO.upper() + ":80", "/sale") == (302, "https://example.com/go")
    assert answer(PROMO, f"/{generated.code}") == (302, "https://example.com/gen")
    # A domain's code is not another domain's: the default host has no such link.
    assert answer("testserver", f"/{generated.code}")[0] == 404
    assert answer(GO, f"/{generated.code}")[0] == 404
    # Unknown codes: promo sends them on, the others answer the 404 page.
    assert answer(PROMO, "/sale") == (302, "https://www.example.com/promo-missing")
    assert answer(GO, "/nothing-here")[0] == 404


def test_a_host_that_is_none_of_ours_answers_404_for_every_code(user, go):
    link = link_create(user=user, long_url="https://example.com/x", alias="known").link
    status, location = _location("stranger.example.test", f"/{link.code}")
    assert (status, location) == ("404 Not Found", None)


def test_with_allowed_hosts_star_every_other_host_is_the_default_domain(settings, user, go):
    settings.ALLOWED_HOSTS = ["*"]
    link_create(user=user, long_url="https://example.com/star", alias="star")
    assert _location("anything.example.test", "/star") == ("302 Found", "https://example.com/star")
    assert _location(GO, "/star")[0] == "404 Not Found"


def test_a_domains_bare_root_goes_where_it_says_or_is_a_page_of_its_own(
    client, settings, go, promo
):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, GO, PROMO]
    assert _location(PROMO, "/") == ("302 Found", "https://www.example.com/promo-home")
    status, _, body = call_wsgi("/", extra={"HTTP_HOST": GO})
    assert status == "404 Not Found" and b"Short links live here" in body
    # The Django view says the same; the default domain's root is still the home page.
    assert client.get("/", HTTP_HOST=PROMO)["Location"] == "https://www.example.com/promo-home"
    assert b"Short links live here" in client.get("/", HTTP_HOST=GO).content
    assert client.get("/", HTTP_HOST="testserver").status_code == 200


def test_a_new_or_changed_domain_is_served_from_the_next_request(user):
    link_create(user=user, long_url="https://example.com/home", alias="later")
    assert _location(GO, "/later")[0] == "404 Not Found"  # the table is read without GO
    go = domain_save(host=GO)
    link_create(user=user, long_url="https://example.com/on-go", alias="later", domain=GO)
    assert _location(GO, "/later") == ("302 Found", "https://example.com/on-go")
    domain_save(domain=go, host=GO, not_found_redirect="https://example.com/lost")
    assert _location(GO, "/missing") == ("302 Found", "https://example.com/lost")


def test_revoking_or_editing_the_alias_on_one_domain_leaves_the_other(user, go):
    link_create(user=user, long_url="https://example.com/default", alias="twin")
    link_create(user=user, long_url="https://example.com/go", alias="twin", domain=GO)
    assert _location(GO, "/twin")[1] == "https://example.com/go"  # cached now
    link_update(code="twin", domain=GO, user=user, long_url="https://example.com/go-2")
    assert _location(GO, "/twin")[1] == "https://example.com/go-2"
    link_revoke(code="twin", domain=GO, user=user)
    assert _location(GO, "/twin")[0] == "410 Gone"
    assert _location("testserver", "/twin") == ("302 Found", "https://example.com/default")


def test_a_visit_on_a_domain_counts_for_that_domains_link(user, go):
    from analytics.services import flush_pending

    link_create(user=user, long_url="https://example.com/default", alias="count")
    on_go = link_create(user=user, long_url="https://example.com/go", alias="count", domain=GO)
    for _ in range(3):
        _location(GO, "/count")
    flush_pending()
    assert (
        list(UrlLink.objects.filter(visits__isnull=False).values_list("pk", flat=True))
        == [on_go.link.pk] * 3
    )


# --- The API ----------------------------------------------------------------------------------


def test_the_api_creates_on_a_domain_and_shows_it(user, go):
    api = client_for(user)
    created = api.post(
        "/api/v1/links/",
        {"long_url": "https://example.com/api", "alias": "api-sale", "domain": GO},
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["domain"], body["short_url"]) == (GO, f"http://{GO}/api-sale")
    assert created["Location"] == f"/api/v1/links/api-sale/?domain={GO}"
    plain = api.post("/api/v1/links/", {"long_url": "https://example.com/p"}, format="json")
    assert plain.json()["domain"] == "testserver"
    refused = api.post(
        "/api/v1/links/", {"long_url": "https://example.com/x", "domain": 7}, format="json"
    )
    assert refused.status_code == 400 and "domain" in refused.json()
    listed = api.get("/api/v1/domains/").json()
    assert listed == [
        {"host": "testserver", "is_default": True},
        {"host": GO, "is_default": False},
    ]


def test_the_api_addresses_a_code_by_domain_and_says_when_it_must(user, go, promo):
    api = client_for(user)
    for domain in (GO, PROMO):
        link_create(user=user, long_url=f"https://example.com/{domain}", alias="two", domain=domain)
    ambiguous = api.get("/api/v1/links/two/")
    assert ambiguous.status_code == 400
    assert GO in ambiguous.json()["domain"][0] and PROMO in ambiguous.json()["domain"][0]
    one = api.get(f"/api/v1/links/two/?domain={PROMO}")
    assert one.json()["long_url"] == f"https://example.com/{PROMO}"
    changed = api.patch(f"/api/v1/links/two/?domain={GO}", {"title": "Go's"}, format="json").json()
    assert (changed["domain"], changed["title"]) == (GO, "Go's")
    assert api.delete(f"/api/v1/links/two/?domain={GO}").status_code == 204
    assert api.get(f"/api/v1/links/two/?domain={PROMO}").json()["is_active"] is True
    assert api.get("/api/v1/links/two/?domain=nope.example.test").status_code == 404
    stats = api.get(f"/api/v1/links/two/stats/?domain={PROMO}")
    assert stats.status_code == 200


# --- Pages and the admin ----------------------------------------------------------------------


def test_the_create_form_offers_the_domains_and_pages_carry_the_domain(client, user, go):
    client.force_login(user)
    page = client.get("/").content.decode()
    assert f'<option value="{GO}">{GO}</option>' in page
    created = client.post(
        "/",
        {
            "long_url": "https://example.com/form",
            "alias": "form-sale",
            "domain": GO,
            "redirect_type": "302",
            "pass_query": "on",
        },
    )
    assert created["Location"] == f"/?created=form-sale&domain={GO}"
    shown = client.get(created["Location"]).content.decode()
    assert f"http://{GO}/form-sale" in shown
    assert f"/dashboard/links/form-sale/?domain={GO}" in shown
    assert client.get(f"/dashboard/links/form-sale/?domain={GO}").status_code == 200


def test_the_create_form_has_no_domain_choice_without_extra_domains(client, user):
    client.force_login(user)
    assert 'name="domain"' not in client.get("/").content.decode()


def test_staff_add_a_domain_in_the_admin_checked_by_the_services(admin_client):
    added = admin_client.post(
        "/admin/links/domain/add/",
        {"host": "Admin.Example.test", "root_redirect": "", "not_found_redirect": ""},
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    assert Domain.objects.filter(host="admin.example.test").exists()
    refused = admin_client.post(
        "/admin/links/domain/add/",
        {"host": "admin.example.test", "root_redirect": "", "not_found_redirect": ""},
    )
    assert "There is a domain admin.example.test already" in refused.content.decode()
    listed = admin_client.get("/admin/links/domain/").content.decode()
    assert "no: add admin.example.test to ALLOWED_HOSTS" in listed
    assert domains.current_table().by_host.keys() == {"admin.example.test"}


def test_lists_filter_by_domain_in_the_api_and_my_links(client, user, go):
    link_create(user=user, long_url="https://example.com/on-default", alias="list-default")
    link_create(user=user, long_url="https://example.com/on-go", alias="list-go", domain=GO)
    api = client_for(user)
    on_go = api.get(f"/api/v1/links/?domain={GO}").json()
    on_default = api.get("/api/v1/links/?domain=testserver").json()
    assert [link["code"] for link in on_go["results"]] == ["list-go"]
    assert [link["code"] for link in on_default["results"]] == ["list-default"]
    assert api.get("/api/v1/links/?domain=nope.example.test").json()["count"] == 0
    client.force_login(user)
    page = client.get(f"/dashboard/?domain={GO}").content.decode()
    assert "list-go" in page and "list-default" not in page
    assert '<option value="testserver">testserver (default)</option>' in page


def test_staff_send_the_default_domains_unknown_codes_elsewhere(admin_client):
    page = admin_client.get(f"/admin/links/domain/{DEFAULT_DOMAIN_ID}/change/").content.decode()
    assert 'name="not_found_redirect"' in page
    assert 'name="host"' not in page and 'name="root_redirect"' not in page
    saved = admin_client.post(
        f"/admin/links/domain/{DEFAULT_DOMAIN_ID}/change/",
        {"not_found_redirect": "https://www.example.com/lost"},
    )
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert _location("testserver", "/no-such-link") == ("302 Found", "https://www.example.com/lost")
    assert _location("testserver", "/")[0] == "200 OK"  # its root is still the home page


def test_the_default_domains_root_is_never_sent_elsewhere():
    """Refused, not dropped: a channel that offers it (Shlink's baseUrlRedirect) says why."""
    default = Domain.objects.get(pk=DEFAULT_DOMAIN_ID)
    with pytest.raises(ValidationError) as refused:
        domain_save(domain=default, host="", root_redirect="https://www.example.com/")
    assert "home page" in refused.value.message_dict["root_redirect"][0]
    default.refresh_from_db()
    assert default.root_redirect == ""


def test_a_bulk_call_naming_a_domain_in_every_item_costs_no_query_per_item(user, go, settings):
    # Hash codes: no pool whose refills would make the two calls' counts differ.
    settings.SHORTURL_CODE_STRATEGY = "hash"
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries_for(domain: str | None) -> int:
        items = [
            {"long_url": f"https://example.com/{domain}/{i}", "domain": domain} for i in range(40)
        ]
        with CaptureQueriesContext(connection) as queries:
            results = link_create_many(user=user, items=items)
        assert all(result.link is not None for result in results)
        return len(queries.captured_queries)

    domains.current_table()  # read once per process, as the redirect does
    with transaction.atomic():
        hold_owner(user)  # the owner's turn row made now: its first use costs two queries more
    assert queries_for(GO) == queries_for(None)


def test_a_pasted_url_with_an_unclosed_ipv6_bracket_is_a_host_field_error(admin_client):
    """host_part keeps what follows the scheme when urlsplit refuses the URL: the admin's form
    answers with the host field's reason, not a server error."""
    answer = admin_client.post(
        "/admin/links/domain/add/",
        {"host": "http://[::1", "root_redirect": "", "not_found_redirect": ""},
    )
    assert answer.status_code == 200
    assert "without a port or user name" in answer.content.decode()
    assert domains.host_part("http://[::1") == "[::1"
