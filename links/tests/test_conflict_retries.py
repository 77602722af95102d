"""A link create that loses a write conflict is run again and leaves exactly one link and one used
pool code (issue #31). A real InnoDB deadlock (error 1213, as Galera's certification conflict)
makes the create's first attempt its victim: core.tests.deadlocks."""

import pytest

from core.models import Turn
from core.redis_conn import redis_client
from core.tests.deadlocks import lost_once
from links.codes import pool
from links.models import UniqueCode, UniqueCodeStatus, UrlLink
from links.services.change import link_update
from links.services.create import link_create

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_create_that_loses_a_deadlock_makes_one_link_with_one_pool_code(
    requires_mysql, requires_redis, settings, user, caplog
):
    settings.SHORTURL_CODE_STRATEGY = "pool"
    pool.pool_refill(batch=5)
    codes = list(UniqueCode.objects.order_by("id").values_list("code", flat=True))
    client = redis_client()
    client.delete(pool.POOL_SET_KEY)
    # The one code Redis hands out (a retry that took from the database would get codes[0]).
    client.sadd(pool.POOL_SET_KEY, codes[-1])
    code_table = UniqueCode._meta.db_table
    turn_table = Turn._meta.db_table
    # The create takes the owner's turn (A, hold_owner: the row it inserts on first use), then
    # claims codes[-1]'s row (B).
    with lost_once(
        caplog,
        hold=(f"SELECT id FROM {code_table} WHERE code = %s FOR UPDATE", [codes[-1]]),  # noqa: S608
        then=(
            f"SELECT scope FROM {turn_table} WHERE scope = %s FOR UPDATE",  # noqa: S608
            [f"links.owner:{user.pk}"],
        ),
    ):
        result = link_create(user=user, long_url="https://example.com/conflict")

    assert result.created
    assert list(UrlLink.objects.values_list("code", flat=True)) == [codes[-1]]
    used = UniqueCode.objects.filter(status=UniqueCodeStatus.USED)
    assert list(used.values_list("code", flat=True)) == [codes[-1]]
    # The rolled-back attempt gave its code back and the retry took it: none lost, none extra.
    assert client.scard(pool.POOL_SET_KEY) == 0
    assert UniqueCode.objects.filter(status=UniqueCodeStatus.UNUSED).count() == 4


def test_an_archive_that_loses_a_deadlock_is_still_saved(requires_mysql, user, caplog):
    # The update archives the link (A: its row), then replaces its tags (B: the old tag's row of
    # the link-tag table). A retry must not read the first attempt's in-memory "archived" as
    # already done.
    link = link_create(user=user, long_url="https://example.com/archived", tags=["old"]).link
    through = UrlLink.tags.through
    with lost_once(
        caplog,
        hold=(
            f"SELECT id FROM {through._meta.db_table} WHERE urllink_id = %s FOR UPDATE",  # noqa: S608
            [link.pk],
        ),
        then=(f"SELECT id FROM {UrlLink._meta.db_table} WHERE id = %s FOR UPDATE", [link.pk]),  # noqa: S608
    ):
        link_update(code=link.code, user=user, archived=True, tags=["new"])

    link.refresh_from_db()
    assert link.archived
    assert list(link.tags.values_list("name", flat=True)) == ["new"]
