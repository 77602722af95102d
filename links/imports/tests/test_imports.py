"""Importing another shortener's links (links.imports.service): each format's file, made by
hand to its published shape, comes in with its old codes where they are free and valid, the
imported codes redirect, and the report says of every row what became of it and why: kept,
given a new code (and why), or skipped (and why), with its line or item number."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from links.imports.formats import parse_file
from links.imports.report import Outcome
from links.imports.service import link_import
from links.models import CodeType, Tag, UniqueCode, UrlLink
from links.services.create import link_create
from links.services.domains import domain_save
from links.tests.helpers import call_wsgi

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
BRAND = "go.brand.example"


def run(user, name: str, **options):
    return link_import(user=user, parsed=parse_file((FIXTURES / name).read_bytes()), **options)


def by_old_code(report) -> dict:
    """{old code: entry}; the first entry of a code that comes twice."""
    entries = {}
    for entry in report.entries:
        entries.setdefault(entry.old_code, entry)
    return entries


def redirect_of(client, code: str) -> tuple[int, str | None]:
    response = client.get(f"/{code}")
    return response.status_code, response.headers.get("Location")


@pytest.fixture
def taken(other_user):
    """Someone else's alias `taken-code` on the default domain: the files' taken code."""
    return link_create(user=other_user, long_url="https://rival.example.com/", alias="taken-code")


@pytest.fixture
def brand():
    return domain_save(host=BRAND)


# --- Bitly -------------------------------------------------------------------------------------


# Transactional: the WSGI fast path recycles the connection after a read, which on MariaDB
# would end a wrapping test transaction.
@pytest.mark.django_db(transaction=True)
def test_a_bitly_csv_with_the_apis_field_names_imports_with_its_codes(client, user, taken, brand):
    report = run(user, "bitly_api_fields.csv")
    rows = by_old_code(report)

    for code, url in [
        ("spring-sale", "https://shop.example.com/spring?utm_source=bitly"),
        ("newsletter-2023", "https://news.example.com/2023"),
        ("2kX9", "https://www.example.com/short-code"),
    ]:
        assert (rows[code].outcome, rows[code].code) == (Outcome.IMPORTED, code)
        assert redirect_of(client, code) == (302, url)

    spring = UrlLink.objects.get(code="spring-sale")
    assert spring.owner == user and spring.code_type == CodeType.CUSTOM
    assert spring.title == "Spring sale, 20% off"
    assert sorted(spring.tags.values_list("name", flat=True)) == ["sale", "spring"]
    assert spring.created_at == dt.datetime(2021, 3, 1, 9, 0, tzinfo=dt.UTC)
    assert UrlLink.objects.get(code="newsletter-2023").archived is True

    # On the branded domain it came from, which is one of ours.
    assert rows["fall"].domain == BRAND
    status, headers, _ = call_wsgi("/fall", extra={"HTTP_HOST": BRAND})
    assert (status[:3], headers["Location"]) == ("302", "https://shop.example.com/fall")

    # Codes that cannot be kept: the link comes with a new code, and the report says why.
    assert rows["3abcDEF"].outcome == Outcome.NEW_CODE
    assert "kept for generated codes" in rows["3abcDEF"].reason
    assert redirect_of(client, rows["3abcDEF"].code) == (302, "https://www.example.com/blog/launch")
    assert rows["admin"].outcome == Outcome.NEW_CODE
    assert "“admin” is reserved" in rows["admin"].reason
    assert rows["taken-code"].outcome == Outcome.NEW_CODE
    assert "already taken" in rows["taken-code"].reason
    assert redirect_of(client, "taken-code")[1] == "https://rival.example.com/"

    skipped = {e.row: e.reason for e in report.entries if e.outcome == Outcome.SKIPPED}
    assert skipped == {
        5: "Only http and https URLs can be shortened.",
        8: "Enter the long URL to shorten.",
        9: skipped[9],
        10: "Repeats line 2 of the file.",
    }
    assert "is not a web address" in skipped[9]
    assert report.summary() == (
        "Imported 7 links (4 with their old codes, 3 with new codes); skipped 4 (3 refused by "
        "the link rules, 1 repeated in the file)."
    )


def test_seven_letter_bitly_codes_need_an_install_whose_generated_codes_are_another_length(
    client, settings, user, taken
):
    # With the default SHORTURL_CODE_LENGTH (6 + a check character) Bitly's 7-letter codes have
    # the generated codes' shape: each link comes with a new code, the same URL only once.
    report = run(user, "bitly_export.csv")
    rows = by_old_code(report)
    assert rows["summer-eu"].outcome == Outcome.IMPORTED  # its custom back-half
    assert "3xYzAbC" in rows["summer-eu"].reason
    assert rows["3QrStUv"].outcome == Outcome.NEW_CODE
    assert rows["3WxYz12"].outcome == Outcome.NEW_CODE
    assert (rows["3Dup000"].outcome, rows["3Dup000"].reason) == (
        Outcome.SKIPPED,
        "Same long URL as line 3 of the file.",
    )
    UrlLink.objects.filter(owner=user).delete()

    # An install set up for them (generated codes of 8, its pool made with that length) keeps
    # every one.
    settings.SHORTURL_CODE_LENGTH = 7
    UniqueCode.objects.all().delete()
    report = run(user, "bitly_export.csv")
    rows = by_old_code(report)
    for code, url in [
        ("3QrStUv", "https://events.example.com/webinar"),
        ("3Dup000", "https://events.example.com/webinar"),
        ("3WxYz12", "https://www.example.com/flyer.pdf"),
        ("summer-eu", "https://shop.example.com/summer?lang=en"),
    ]:
        assert (rows[code].outcome, rows[code].code) == (Outcome.IMPORTED, code)
        assert redirect_of(client, code) == (302, url)
    assert UrlLink.objects.get(code="3WxYz12").archived is True
    assert rows["taken-code"].outcome == Outcome.NEW_CODE
    assert len(rows["taken-code"].code) == 8  # a generated code of this install
    assert {e.row for e in report.entries if e.outcome == Outcome.SKIPPED} == {5, 6, 7}


# --- YOURLS ------------------------------------------------------------------------------------


def test_a_yourls_dump_imports_with_its_keywords(client, user, taken):
    report = run(user, "yourls_dump.sql")
    rows = by_old_code(report)
    for code in ("abc", "promo", "dup-a", "xyz9"):
        assert (rows[code].outcome, rows[code].code) == (Outcome.IMPORTED, code)
    assert redirect_of(client, "abc") == (302, "https://www.example.com/a?x=1&y=2")
    assert redirect_of(client, "dup-a") == (302, "https://www.example.com/a?x=1&y=2")
    assert client.get("/promo").status_code == 302
    abc = UrlLink.objects.get(code="abc")
    assert abc.title == "It's \"quoted\", a \\ backslash and ''doubled''"
    assert abc.created_at == dt.datetime(2020, 1, 1, 10, 0, tzinfo=dt.UTC)

    assert rows["1"].outcome == Outcome.NEW_CODE
    assert "Use 3 to 32 characters" in rows["1"].reason
    assert redirect_of(client, rows["1"].code) == (302, "https://www.example.com/first")
    assert rows["docs"].outcome == Outcome.NEW_CODE
    assert rows["unicodé"].outcome == Outcome.NEW_CODE
    assert rows["taken-code"].outcome == Outcome.NEW_CODE
    skipped = {e.old_code: (e.row, e.reason) for e in report.entries if e.outcome == "skipped"}
    assert skipped == {
        "ftp1": (54, "Only http and https URLs can be shortened."),
        "empty": (56, "Enter the long URL to shorten."),
        "multi": (59, "This is not a valid URL."),
    }


def test_a_yourls_csv_imports_with_its_keywords(client, user, taken):
    rows = by_old_code(run(user, "yourls.csv"))
    assert (rows["ozh"].outcome, rows["yourls"].outcome) == (Outcome.IMPORTED, Outcome.IMPORTED)
    assert redirect_of(client, "yourls") == (302, "https://yourls.org/?a=1")
    assert rows["ab"].outcome == rows["static"].outcome == Outcome.NEW_CODE
    assert rows["ftp2"].outcome == Outcome.SKIPPED


# --- Kutt and Shlink ---------------------------------------------------------------------------


def test_a_kutt_export_imports_with_its_addresses(client, user, taken):
    report = run(user, "kutt.json")
    assert report.unit == "item"
    rows = by_old_code(report)
    for code, url in [
        ("kutt-home", "https://www.example.com/kutt"),
        ("aB3dE5", "https://www.example.com/six-letters"),
        ("kutt-again", "https://www.example.com/kutt"),
    ]:
        assert (rows[code].outcome, rows[code].code) == (Outcome.IMPORTED, code)
        assert redirect_of(client, code) == (302, url)
    assert UrlLink.objects.get(code="kutt-home").title == 'Kutt\'s "home" page'
    assert rows["taken-code"].outcome == Outcome.NEW_CODE

    skipped = {e.old_code: (e.row, e.reason) for e in report.entries if e.outcome == "skipped"}
    assert skipped["b4nned"] == (3, "Not imported: banned in Kutt.")
    assert skipped["secret"][0] == 4 and "password" in skipped["secret"][1]
    assert skipped["js-link"] == (5, "Only http and https URLs can be shortened.")
    assert skipped["ftp-kutt"][0] == 8
    # Its own domain is not one of ours (yet): the row says what to do.
    assert skipped["brand-news"][0] == 6
    assert "is not one of this service's short domains" in skipped["brand-news"][1]
    assert f"manage.py domains add {BRAND}" in skipped["brand-news"][1]
    assert client.get("/b4nned").status_code == 404
    assert client.get("/secret").status_code == 404


def test_a_kutt_link_on_a_domain_of_ours_lands_on_it(user, brand):
    rows = by_old_code(run(user, "kutt.json"))
    assert (rows["brand-news"].outcome, rows["brand-news"].domain) == (Outcome.IMPORTED, BRAND)
    assert UrlLink.objects.get(code="brand-news").domain == brand


def test_a_shlink_export_imports_with_its_short_codes_tags_and_limits(client, user):
    report = run(user, "shlink.json")
    rows = by_old_code(report)
    assert (rows["12C18"].outcome, rows["12C18"].code) == (Outcome.IMPORTED, "12C18")
    assert redirect_of(client, "12C18") == (302, "https://store.example.com/shoes")
    shoes = UrlLink.objects.get(code="12C18")
    assert sorted(shoes.tags.values_list("name", flat=True)) == ["Sale", "shoes"]
    capped = UrlLink.objects.get(code="capped")
    assert (capped.max_visits, capped.pass_query) == (100, False)
    offer = UrlLink.objects.get(code="until-2099")
    assert offer.expires_at == dt.datetime(2099, 1, 1, tzinfo=dt.UTC)
    # Its validSince is its start: past, so the link is live.
    assert offer.valid_since == dt.datetime(2020, 2, 2, tzinfo=dt.UTC)
    assert offer.status == "active" and rows["until-2099"].reason == ""
    assert rows["api"].outcome == Outcome.NEW_CODE

    assert rows["old-promo"].outcome == Outcome.SKIPPED
    assert rows["old-promo"].reason == "Expired in the source on 2019-01-01."
    assert "doma.in" in rows["elsewhere"].reason
    assert rows["ftp-sh"].outcome == Outcome.SKIPPED


def test_a_shlink_csv_lands_on_its_domain_or_the_one_chosen(user, brand):
    rows = by_old_code(run(user, "shlink.csv"))
    assert (rows["12C18"].outcome, rows["12C18"].domain) == (Outcome.IMPORTED, BRAND)
    other = domain_save(host="promo.example.test")
    UrlLink.objects.all().delete()
    rows = by_old_code(run(user, "shlink.csv", domain="promo.example.test"))
    assert UrlLink.objects.get(code="capped").domain == other
    assert rows["capped"].domain == "promo.example.test"


# --- Plain CSV ---------------------------------------------------------------------------------


def test_a_plain_csv_imports_aliases_titles_and_tags(client, user, taken):
    report = run(user, "plain.csv")
    rows = {e.row: e for e in report.entries}
    assert (rows[2].outcome, rows[2].code) == (Outcome.IMPORTED, "plain-one")
    one = UrlLink.objects.get(code="plain-one")
    assert one.title == "First plain link"
    assert sorted(one.tags.values_list("name", flat=True)) == ["news", "promo"]
    # No alias: a generated code; its tags were "a, b" in one quoted cell.
    assert rows[3].outcome == Outcome.IMPORTED and rows[3].old_code == ""
    no_alias = UrlLink.objects.get(code=rows[3].code)
    assert sorted(no_alias.tags.values_list("name", flat=True)) == ["a", "b"]
    assert sorted(UrlLink.objects.get(code="plain-three").tags.values_list("name", flat=True)) == [
        "x",
        "y",
    ]
    assert redirect_of(client, "plain-three") == (302, "https://www.example.com/plain/3")
    assert rows[8].outcome == rows[9].outcome == Outcome.NEW_CODE

    skipped = {row: e.reason for row, e in rows.items() if e.outcome == Outcome.SKIPPED}
    assert skipped == {
        5: "Only http and https URLs can be shortened.",
        6: "Enter the long URL to shorten.",
        7: "Same long URL as line 3 of the file.",
        10: skipped[10],
    }
    assert "not a web address" in skipped[10]


# --- Choices, dry runs and second runs ---------------------------------------------------------


def test_on_taken_code_skip_leaves_out_the_rows_whose_code_cannot_be_kept(user, taken):
    report = run(user, "plain.csv", on_taken_code="skip")
    rows = {e.row: e for e in report.entries}
    assert rows[8].outcome == rows[9].outcome == Outcome.SKIPPED
    assert rows[8].reason.startswith("The old code “settings” cannot be kept: ")
    assert rows[9].reason == (
        "The old code “taken-code” cannot be kept: “taken-code” is already taken on this domain."
    )
    assert not UrlLink.objects.filter(long_url__startswith="https://www.example.com/plain/4")


def test_a_dry_run_reports_the_same_outcomes_and_writes_nothing(user, taken):
    before = (UrlLink.objects.count(), Tag.objects.count())
    dry = run(user, "bitly_api_fields.csv", dry_run=True)
    assert (UrlLink.objects.count(), Tag.objects.count()) == before
    assert dry.dry_run and dry.summary().startswith("Would import 6 links")
    real = run(user, "bitly_api_fields.csv")
    assert [(e.row, e.outcome, e.reason) for e in dry.entries] == [
        (e.row, e.outcome, e.reason) for e in real.entries
    ]
    # Kept codes are known ahead; new ones are only claimed by the real run.
    kept = {e.row: e.code for e in dry.entries if e.outcome == Outcome.IMPORTED}
    assert kept == {e.row: e.code for e in real.entries if e.outcome == Outcome.IMPORTED}
    assert all(e.code == "" for e in dry.entries if e.outcome == Outcome.NEW_CODE)


def test_importing_the_same_file_again_says_already_there_and_adds_nothing(user, taken):
    first = run(user, "yourls_dump.sql")
    count = UrlLink.objects.count()
    second = run(user, "yourls_dump.sql")
    assert UrlLink.objects.count() == count
    assert second.imported == 0
    codes = {e.row: e.code for e in first.entries if e.outcome != Outcome.SKIPPED}
    again = {e.old_code: e for e in second.entries}
    for entry in first.entries:
        if entry.outcome == Outcome.SKIPPED:
            continue
        repeat = again[entry.old_code]
        assert (repeat.outcome, repeat.kind, repeat.code) == (Outcome.SKIPPED, "exists", entry.code)
    assert again["abc"].reason == "Already exists."
    assert again["1"].reason.startswith(f"Already exists as {codes[53]} (the old code “1” cannot")
    assert second.summary() == (
        "Imported 0 links; skipped 11 (8 already in the links, 3 refused by the link rules)."
    )


def test_a_code_that_is_already_the_users_link_to_another_url_comes_with_a_new_code(user):
    """Issue #27: the row was skipped as "already in the links" although its link was not there
    and "import the link with a new code" was chosen. Only the same code to the same URL is the
    link already imported."""
    mine = link_create(user=user, long_url="https://www.example.com/changed-since", alias="abc")
    csv_file = (
        "long_url,alias\n"
        "https://www.example.com/a?x=1,abc\n"
        "https://www.example.com/changed-since,abc\n"
    )
    report = link_import(user=user, parsed=parse_file(csv_file.encode()))
    moved, same = report.entries
    assert (moved.outcome, moved.reason) == (
        Outcome.NEW_CODE,
        "The old code “abc” cannot be kept: “abc” is already your link to "
        "https://www.example.com/changed-since.",
    )
    assert moved.code and moved.code != "abc"
    assert UrlLink.objects.get(code=moved.code).long_url == "https://www.example.com/a?x=1"
    assert (same.outcome, same.kind, same.reason) == (Outcome.SKIPPED, "exists", "Already exists.")
    assert UrlLink.objects.get(code="abc").pk == mine.link.pk  # the user's own link untouched
    assert report.summary() == (
        "Imported 1 link (1 with a new code); skipped 1 (1 already in the links)."
    )


def test_with_skip_chosen_a_code_that_is_the_users_link_to_another_url_is_skipped(user):
    link_create(user=user, long_url="https://www.example.com/changed-since", alias="abc")
    report = link_import(
        user=user,
        parsed=parse_file(b"long_url,alias\nhttps://www.example.com/a?x=1,abc\n"),
        on_taken_code="skip",
    )
    [row] = report.entries
    assert (row.outcome, row.kind, row.reason) == (
        Outcome.SKIPPED,
        "code",
        "The old code “abc” cannot be kept: “abc” is already your link to "
        "https://www.example.com/changed-since.",
    )
    assert not UrlLink.objects.filter(long_url="https://www.example.com/a?x=1").exists()


def test_rows_past_a_batch_go_in_the_next_and_repeats_are_seen_across_batches(user):
    lines = ["long_url,alias"] + [f"https://example.com/{n},code-{n}" for n in range(1, 1101)]
    lines.append("https://example.com/5,")  # the same URL as row 6, past the first batch
    seen = []
    report = link_import(
        user=user,
        parsed=parse_file("\n".join(lines).encode()),
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(1000, 1101), (1101, 1101)]
    assert report.imported == 1100
    assert UrlLink.objects.filter(owner=user).count() == 1100
    last = report.entries[-1]
    assert (last.row, last.outcome, last.reason) == (
        1102,
        Outcome.SKIPPED,
        "Same long URL as line 6 of the file.",
    )


def test_titles_and_tags_the_rules_refuse_are_trimmed_or_left_out_not_the_link(user):
    tags = "|".join(f"t{n}" for n in range(25))
    text = f'long_url,alias,title,tags\nhttps://example.com/x,long-one,{"T" * 300},"{tags}"\n'
    [entry] = link_import(user=user, parsed=parse_file(text.encode())).entries
    link = UrlLink.objects.get(code="long-one")
    assert len(link.title) == 200 and link.title.endswith("…")
    assert link.tags.count() == 20
    assert entry.outcome == Outcome.IMPORTED
    assert "The title was shortened to 200 characters." in entry.reason
    assert "Only the first 20 of its 25 tags were kept." in entry.reason


def test_a_domain_for_the_whole_file_must_be_one_of_ours(user):
    with pytest.raises(ValidationError, match="not one of this service's short domains"):
        run(user, "plain.csv", domain="nowhere.example")


def test_a_source_domain_that_is_the_default_one_here_is_the_default_domain(settings, user):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    text = "createdAt,domain,shortCode,longUrl\n2020-01-01,s.example.com,abc12,https://e.com/\n"
    [entry] = link_import(user=user, parsed=parse_file(text.encode())).entries
    assert (entry.outcome, entry.code, entry.domain) == (Outcome.IMPORTED, "abc12", "")
    assert UrlLink.objects.get(code="abc12").domain_host == ""
