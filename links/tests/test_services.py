"""link_create / link_update / link_revoke as a caller of the services sees them."""

from datetime import datetime, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from links import cache as link_cache
from links.cache import changes as cache_changes
from links.codes import base, hashing, pool, sequence, shape
from links.models import CodeType, UniqueCode, UniqueCodeStatus, UrlLink
from links.selectors import LinkNotFound, link_get_visible
from links.services.change import link_revoke, link_update
from links.services.create import link_create
from links.services.policy import LinkRevoked
from links.tests.concurrency import all_at_once
from links.tests.factories import UrlLinkFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("strategy", ["pool", "sequence", "hash"])
def test_shorten_gives_a_valid_code_with_every_strategy(settings, user, strategy):
    settings.SHORTURL_CODE_STRATEGY = strategy
    result = link_create(user=user, long_url="https://example.com/landing?utm_source=mail")
    assert result.created
    assert shape.has_valid_check(result.link.code)
    assert result.link.code_type == strategy
    assert (
        UrlLink.objects.get(code=result.link.code).long_url
        == "https://example.com/landing?utm_source=mail"
    )


def test_sequence_strategy_stores_the_id_it_encodes(settings, user):
    settings.SHORTURL_CODE_STRATEGY = "sequence"
    link = link_create(user=user, long_url="https://example.com/seq").link
    assert sequence.sequence_decode(link.code) == link.seq_id


def test_sequence_strategy_never_reuses_an_id_after_losing_its_counter(settings, user):
    settings.SHORTURL_CODE_STRATEGY = "sequence"
    first = link_create(user=user, long_url="https://example.com/one").link
    sequence.sequence_resync()
    from django.core.cache import cache

    cache.clear()  # Redis loses the counter: it is warmed again from the database
    second = link_create(user=user, long_url="https://example.com/two").link
    assert second.seq_id > first.seq_id


def test_hash_strategy_gives_another_code_when_the_first_is_taken(settings, user, other_user):
    settings.SHORTURL_CODE_STRATEGY = "hash"
    url = "https://example.com/shared"
    mine = link_create(user=user, long_url=url).link
    theirs = link_create(user=other_user, long_url=url).link
    assert mine.code != theirs.code
    assert theirs.code in hashing.hash_candidates(url, settings.SHORTURL_HASH_SALT)


def test_hash_strategy_gives_up_with_a_clear_error(settings, user):
    settings.SHORTURL_CODE_STRATEGY = "hash"
    settings.SHORTURL_HASH_MAX_RETRIES = 1
    url = "https://example.com/crowded"
    for owner in UserFactory.create_batch(4):
        link_create(user=owner, long_url=url)
    with pytest.raises(base.CodeGenerationError, match="No free short code"):
        link_create(user=user, long_url=url)


def test_same_owner_same_url_gets_the_existing_link(user):
    first = link_create(user=user, long_url="https://example.com/dedup")
    again = link_create(user=user, long_url="https://example.com/dedup")
    assert not again.created
    assert again.link.pk == first.link.pk


def test_dedup_is_per_owner_and_skips_links_with_options(user, other_user):
    first = link_create(user=user, long_url="https://example.com/x").link
    assert link_create(user=other_user, long_url="https://example.com/x").link.pk != first.pk
    titled = link_create(user=user, long_url="https://example.com/x", title="Campaign")
    assert titled.created and titled.link.pk != first.pk
    expiring = link_create(
        user=user, long_url="https://example.com/x", expires_at=timezone.now() + timedelta(days=1)
    )
    assert expiring.created


def test_dedup_ignores_revoked_links(user):
    first = link_create(user=user, long_url="https://example.com/revoked").link
    link_revoke(code=first.code, user=user)
    again = link_create(user=user, long_url="https://example.com/revoked")
    assert again.created and again.link.code != first.code


def test_alias_is_used_as_the_code(user):
    link = link_create(user=user, long_url="https://example.com/sale", alias="spring-sale").link
    assert link.code == "spring-sale"
    assert link.code_type == CodeType.CUSTOM


def test_an_alias_collision_is_a_clear_error(user, other_user):
    UrlLinkFactory(owner=user, alias="launch")
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=other_user, long_url="https://example.com/b", alias="launch")
    assert "already taken" in excinfo.value.message_dict["alias"][0]


def test_codes_are_case_sensitive_on_every_backend(user):
    lower = link_create(user=user, long_url="https://example.com/lower", alias="camPaign").link
    upper = link_create(user=user, long_url="https://example.com/upper", alias="CAMpaign").link
    assert lower.pk != upper.pk
    assert UrlLink.objects.get(code="camPaign").long_url == "https://example.com/lower"
    assert UrlLink.objects.get(code="CAMpaign").long_url == "https://example.com/upper"


@pytest.mark.parametrize(
    ("long_url", "message"),
    [
        ("ftp://example.com/file", "Only http and https"),
        ("javascript:alert(1)", "Only http and https"),
        ("https://", "needs a host"),
        ("", "Enter the long URL"),
        ("https://exa mple.com", "not a valid URL"),
        ("http://[broken", "not a valid URL"),
        ("https://example.com:port/", "not a valid URL"),
        ("https://example.com/" + "a" * 2100, "at most 2048 characters"),
    ],
)
def test_bad_urls_are_refused_with_a_reason(user, long_url, message):
    with pytest.raises(ValidationError) as excinfo:
        link_create(user=user, long_url=long_url)
    assert message in excinfo.value.message_dict["long_url"][0]


def test_our_own_short_links_cannot_be_shortened(settings, user):
    settings.SHORT_URL_BASE = "https://s.example.com/"
    with pytest.raises(ValidationError, match="points back at this short-link service"):
        link_create(user=user, long_url="https://s.example.com/abc1234")
    with pytest.raises(ValidationError, match="points back at this short-link service"):
        link_create(user=user, long_url="http://testserver/x", request_host="testserver")


def test_blocked_and_allowed_domains(settings, user):
    settings.SHORTURL_BLOCKED_DOMAINS = ["evil.test"]
    with pytest.raises(ValidationError, match="not allowed"):
        link_create(user=user, long_url="https://login.evil.test/phish")
    settings.SHORTURL_BLOCKED_DOMAINS = []
    settings.SHORTURL_ALLOWED_DOMAINS = ["example.com"]
    link_create(user=user, long_url="https://www.example.com/ok")
    with pytest.raises(ValidationError, match=r"Only links to example\.com"):
        link_create(user=user, long_url="https://other.org/")


@pytest.mark.parametrize(
    ("entry", "long_url"),
    [
        ("xn--bcher-kva.example", "https://bücher.example/a"),
        ("Bücher.example", "https://XN--BCHER-KVA.example/a"),
        (".bücher.example", "https://shop.bücher.example./a"),
    ],
)
def test_a_blocked_domain_is_matched_however_either_side_spells_it(settings, user, entry, long_url):
    # One host form (_comparable_host) for the URL's host and the setting's entries: an
    # internationalised name is blocked in its Unicode and its ASCII spelling alike.
    settings.SHORTURL_BLOCKED_DOMAINS = [entry]
    with pytest.raises(ValidationError, match="not allowed"):
        link_create(user=user, long_url=long_url)
    settings.SHORTURL_BLOCKED_DOMAINS = []
    settings.SHORTURL_ALLOWED_DOMAINS = [entry]
    link_create(user=user, long_url=long_url)


def test_bad_redirect_type_and_past_expiry_are_refused(user):
    with pytest.raises(ValidationError, match="301, 302, 307 or 308"):
        link_create(user=user, long_url="https://example.com", redirect_type=303)
    with pytest.raises(ValidationError, match="in the future"):
        link_create(
            user=user, long_url="https://example.com", expires_at=timezone.now() - timedelta(1)
        )


def test_a_revoked_link_refuses_every_change(user):
    link = UrlLinkFactory(owner=user, long_url="https://example.com/final", revoked=True)
    for change in ({"long_url": "https://example.com/new"}, {"title": "x"}, {"expires_at": None}):
        with pytest.raises(LinkRevoked, match="revoked and can no longer be changed"):
            link_update(code=link.code, user=user, **change)
    assert UrlLink.objects.get(code=link.code).long_url == "https://example.com/final"


def test_update_checks_the_title_like_create_does(user):
    link = UrlLinkFactory(owner=user)
    with pytest.raises(ValidationError, match="at most 200 characters"):
        link_update(code=link.code, user=user, title="t" * 201)
    assert link_update(code=link.code, user=user, title="  trimmed  ").title == "trimmed"


def test_revoke_expires_now_and_drops_the_cache(user):
    link = UrlLinkFactory(owner=user)
    link_cache.cache_link(link)
    revoked = link_revoke(code=link.code, user=user)
    assert revoked.revoked_at is not None
    assert revoked.expires_at <= timezone.now()
    assert not revoked.is_active
    assert link_cache.get_entry(link.code) is None


def test_only_the_owner_or_staff_may_revoke_or_update(user, other_user, staff_user):
    link = UrlLinkFactory(owner=user)
    with pytest.raises(LinkNotFound):
        link_revoke(code=link.code, user=other_user)
    with pytest.raises(LinkNotFound):
        link_update(code=link.code, user=other_user, title="hijack")
    link_update(code=link.code, user=staff_user, title="checked by staff")
    assert UrlLink.objects.get(code=link.code).title == "checked by staff"


def test_update_changes_the_target_and_refreshes_the_cache(user):
    link = UrlLinkFactory(owner=user)
    link_cache.cache_link(link)
    link_update(code=link.code, user=user, long_url="https://example.com/new", redirect_type=301)
    assert link_cache.get_entry(link.code) is None
    stored = UrlLink.objects.get(code=link.code)
    assert stored.long_url == "https://example.com/new"
    assert stored.redirect_type == 301


def test_an_unknown_code_is_not_found(user):
    with pytest.raises(LinkNotFound):
        link_get_visible(code="nothere", user=user)


def _shorten_concurrently(user, count: int, prefix: str) -> tuple[dict[str, str], list[str]]:
    """`count` threads, each with its own connection, released together.

    Returns ({long URL: the code its caller was given}, errors).
    """

    def shorten(i: int) -> tuple[str, str]:
        url = f"https://example.com/{prefix}/{i}"
        return url, link_create(user=user, long_url=url).link.code

    pairs, errors = all_at_once(count, shorten)
    return dict(pairs), errors


def _stored_codes(user) -> dict[str, str]:
    return dict(UrlLink.objects.filter(owner=user).values_list("long_url", "code"))


@pytest.mark.parametrize("pool_source", ["redis set when configured", "database rows only"])
def test_fifty_concurrent_shortens_give_fifty_distinct_codes(
    requires_mysql, transactional_db, user, monkeypatch, pool_source
):
    """Real threads with real connections against MariaDB: every caller succeeds and gets the
    code that is stored for its URL (a code taken by another caller is never handed back), and
    each of those codes is marked used in the pool.

    Without Redis the pool is claimed with SELECT … FOR UPDATE SKIP LOCKED.
    """
    assert connection.vendor == "mysql"
    if pool_source == "database rows only":
        monkeypatch.setattr(pool, "live_redis_client", lambda: None)
    pool.pool_refill(batch=30)  # fewer than the callers: some must refill under contention
    results, errors = _shorten_concurrently(user, 50, "concurrent")
    assert errors == []
    assert len(results) == 50
    assert _stored_codes(user) == results
    used = UniqueCode.objects.filter(code__in=results.values(), status=UniqueCodeStatus.USED)
    assert used.count() == 50


@pytest.mark.parametrize("strategy", ["sequence", "hash"])
def test_concurrent_shortens_with_other_strategies(
    requires_mysql, transactional_db, settings, user, strategy
):
    """Every caller succeeds and gets the code stored for its URL; sequence codes encode the
    id stored beside them."""
    settings.SHORTURL_CODE_STRATEGY = strategy
    results, errors = _shorten_concurrently(user, 30, strategy)
    assert errors == []
    assert _stored_codes(user) == results
    assert len(results) == 30
    if strategy == "sequence":
        for code, seq_id in UrlLink.objects.filter(owner=user).values_list("code", "seq_id"):
            assert sequence.sequence_decode(code) == seq_id


def test_a_new_alias_is_found_even_if_the_alias_set_was_reloaded_meanwhile(user, client):
    from django.db import transaction

    with transaction.atomic():
        link_create(user=user, long_url="https://example.com/fresh", alias="fresh-one")
        link_cache.forget_aliases()  # the set is dropped, and a redirect loads it again
        assert link_cache.alias_may_exist("some-other-alias") is False
    assert client.get("/fresh-one").status_code == 302


def _cache_unreachable(monkeypatch):
    import redis

    unreachable = redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=1)  # refused
    monkeypatch.setattr(cache_changes, "redis_client", lambda: unreachable)


def test_a_revoke_that_cannot_drop_the_cache_changes_nothing(requires_redis, monkeypatch, user):
    """Reported done, a revoke whose cached entry survived would keep redirecting for a day."""
    link = UrlLinkFactory(owner=user, long_url="https://example.com/keep")
    link_cache.cache_link(link)
    _cache_unreachable(monkeypatch)
    with pytest.raises(link_cache.CacheUnavailable, match="nothing was changed"):
        link_revoke(code=link.code, user=user)
    with pytest.raises(link_cache.CacheUnavailable):
        link_update(code=link.code, user=user, long_url="https://example.com/elsewhere")
    stored = UrlLink.objects.get(code=link.code)
    assert stored.revoked_at is None
    assert stored.long_url == "https://example.com/keep"
    monkeypatch.undo()
    link_revoke(code=link.code, user=user)  # Redis is back: it works, and the entry is gone
    assert link_cache.get_entry(link.code) is None


def test_the_api_and_the_page_say_so_when_the_cache_is_unreachable(monkeypatch, client, user):
    link = UrlLinkFactory(owner=user)

    def unreachable(code):
        raise link_cache.CacheUnavailable("The link cache cannot be reached right now.")

    monkeypatch.setattr(link_cache, "drop", unreachable)
    client.force_login(user)
    api = client.delete(f"/api/v1/links/{link.code}/")
    assert api.status_code == 503
    assert "cannot be reached" in api.json()["detail"]
    page = client.post(f"/dashboard/links/{link.code}/revoke/", follow=True)
    assert "cannot be reached" in page.content.decode()
    assert UrlLink.objects.get(code=link.code).revoked_at is None


def test_an_expiry_centuries_ahead_is_refused_not_a_crash(settings, user, client):
    settings.TIME_ZONE = "America/New_York"
    far = timezone.make_aware(datetime(9999, 12, 31, 23, 0))
    with pytest.raises(ValidationError, match="within 100 years"):
        link_create(user=user, long_url="https://example.com/forever", expires_at=far)
    client.force_login(user)
    page = client.post(
        "/",
        {
            "long_url": "https://example.com/forever",
            "expires_at": "9999-12-31T23:00",
            "redirect_type": "302",
        },
    )
    assert page.status_code == 200
    assert "within 100 years" in page.content.decode()


def test_staff_may_look_but_change_others_links_only_with_the_permission(
    django_user_model, user, client
):
    from django.contrib.auth.models import Permission

    link = UrlLinkFactory(owner=user, long_url="https://example.com/owned")
    viewer = UserFactory(is_staff=True)
    client.force_login(viewer)
    assert client.get(f"/api/v1/links/{link.code}/").status_code == 200
    refused = client.patch(
        f"/api/v1/links/{link.code}/",
        {"long_url": "https://evil.example/"},
        content_type="application/json",
    )
    assert refused.status_code == 403
    assert client.delete(f"/api/v1/links/{link.code}/").status_code == 403
    assert UrlLink.objects.get(code=link.code).long_url == "https://example.com/owned"
    viewer.user_permissions.add(Permission.objects.get(codename="change_urllink"))
    viewer = django_user_model.objects.get(pk=viewer.pk)  # fresh permission cache
    link_update(code=link.code, user=viewer, title="checked")
    assert UrlLink.objects.get(code=link.code).title == "checked"
