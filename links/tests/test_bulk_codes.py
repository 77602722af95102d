"""The bulk path's writes: one INSERT with the ids read back, codes claimed in batches, and the
one-by-one fallback when a code is taken between the check and the insert."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from links.codes import hashing, pool, sequence
from links.codes.strategies import get_strategy
from links.models import CodeType, UniqueCode, UniqueCodeStatus, UrlLink
from links.services.bulk import link_create_many
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


def test_created_links_come_back_as_saved_rows(user):
    results = link_create_many(
        user=user,
        items=[
            {"long_url": "https://example.com/1"},
            {"long_url": "https://example.com/2", "alias": "second-one", "title": "Two"},
        ],
    )

    for result in results:
        link = result.link
        assert result.created
        assert link.pk is not None
        assert not link._state.adding
        assert link.created_at is not None and link.updated_at is not None
        stored = UrlLink.objects.get(pk=link.pk)
        for field in ("code", "long_url", "long_url_hash", "owner_id", "title", "code_type"):
            assert getattr(stored, field) == getattr(link, field), field
        assert stored.created_at == link.created_at
        assert stored.redirect_type == link.redirect_type == 302
    with CaptureQueriesContext(connection) as queries:
        assert results[0].link.owner == user  # the owner is at hand, not read again
    assert not queries.captured_queries


def test_the_rows_are_written_by_one_insert_per_batch(user):
    items = [{"long_url": f"https://example.com/row/{i}"} for i in range(300)]

    with CaptureQueriesContext(connection) as queries:
        results = link_create_many(user=user, items=items)

    table = UrlLink._meta.db_table
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    inserts = [sql for sql in inserts if table in sql.split("(")[0]]
    batch = connection.ops.bulk_batch_size(
        [f for f in UrlLink._meta.concrete_fields if not f.primary_key], items
    )
    assert len(inserts) == -(-300 // batch)
    assert len({r.link.pk for r in results}) == 300
    assert {r.link.pk: r.link.code for r in results} == dict(
        UrlLink.objects.filter(owner=user).values_list("pk", "code")
    )


def test_a_code_taken_after_the_check_sends_the_call_one_by_one(user, other_user, monkeypatch):
    """A pool code already used by a link (say, taken by a concurrent call): the insert fails,
    and every item is then created on its own, the clashing one with a fresh code."""
    clash = UrlLinkFactory(owner=other_user, code="Zz9Yy8X")
    real_claim = pool.pool_claim

    def claim(count):
        return [clash.code, *real_claim(count - 1)]

    monkeypatch.setattr("links.services.bulk.pool_claim", claim)

    results = link_create_many(
        user=user, items=[{"long_url": f"https://example.com/race/{i}"} for i in range(5)]
    )

    assert all(r.created for r in results)
    codes = [r.link.code for r in results]
    assert len(set(codes)) == 5
    assert clash.code not in codes
    assert UrlLink.objects.get(code=clash.code).owner == other_user
    assert UrlLink.objects.filter(owner=user).count() == 5
    assert {r.link.pk for r in results} == set(
        UrlLink.objects.filter(owner=user).values_list("pk", flat=True)
    )


def test_popped_pool_codes_already_handed_out_are_not_claimed_again():
    UniqueCode.objects.bulk_create([UniqueCode(code=c) for c in ("AAAAAA1", "BBBBBB2", "CCCCCC3")])
    UniqueCode.objects.filter(code="BBBBBB2").update(status=UniqueCodeStatus.USED)

    claimed = pool._claim_popped(["AAAAAA1", "BBBBBB2", "CCCCCC3", "DDDDDD4"])

    assert sorted(claimed) == ["AAAAAA1", "CCCCCC3"]
    assert set(UniqueCode.objects.values_list("code", "status")) == {
        ("AAAAAA1", UniqueCodeStatus.USED),
        ("BBBBBB2", UniqueCodeStatus.USED),
        ("CCCCCC3", UniqueCodeStatus.USED),
    }


def test_popped_pool_codes_all_unused_are_claimed_by_one_update():
    codes = [f"EEEEE{i:02d}" for i in range(20)]
    UniqueCode.objects.bulk_create([UniqueCode(code=c) for c in codes])

    with CaptureQueriesContext(connection) as queries:
        claimed = pool._claim_popped(codes)

    assert sorted(claimed) == codes
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"].upper()]
    assert len(statements) == 1 and statements[0].startswith("UPDATE")
    assert not UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).exists()


def test_a_sequence_bulk_call_reserves_its_ids_in_one_go(settings, user, monkeypatch):
    settings.SHORTURL_CODE_STRATEGY = "sequence"
    settings.SHORTURL_SEQUENCE_BLOCK = 100
    sequence.sequence_resync()
    reserved = []
    real_reserve = sequence._reserve_block

    def reserve(size):
        reserved.append(size)
        return real_reserve(size)

    monkeypatch.setattr(sequence, "_reserve_block", reserve)

    results = link_create_many(
        user=user, items=[{"long_url": f"https://example.com/seq/{i}"} for i in range(250)]
    )

    assert reserved == [250]
    seq_ids = [r.link.seq_id for r in results]
    assert len(set(seq_ids)) == 250
    assert all(r.link.code == sequence.sequence_encode(r.link.seq_id) for r in results)
    assert all(r.link.code_type == CodeType.SEQUENCE for r in results)


def test_sequence_codes_still_decode_to_their_ids(settings):
    for seq_id in (1, 2, 61, 62, 12345, 10**9):
        assert sequence.sequence_decode(sequence.sequence_encode(seq_id)) == seq_id
    settings.SHORTURL_SEQUENCE_KEY = "another key"
    other = sequence.sequence_encode(12345)
    assert sequence.sequence_decode(other) == 12345


def test_hash_candidates_are_the_documented_codes_in_order(settings):
    settings.SHORTURL_HASH_MAX_RETRIES = 2
    url = "https://example.com/hash-me"
    salt = settings.SHORTURL_HASH_SALT

    codes = [c.code for c in get_strategy("hash").candidates(url)]

    assert codes == hashing.hash_candidates(url, salt) + hashing.hash_candidates(url, salt + ":1")
