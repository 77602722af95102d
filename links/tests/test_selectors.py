"""link_list as the My links page and the API use it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.tests.factories import add_visits
from links import selectors
from links.models import UrlLink
from links.services.change import link_update
from links.tests.factories import UrlLinkFactory

pytestmark = pytest.mark.django_db


def test_most_clicked_first(user):
    """order="clicks" puts the links people clicked most first, unclicked ones last."""
    quiet, busy, some = UrlLinkFactory.create_batch(3, owner=user)
    add_visits(busy, 3)
    add_visits(some, 1)
    add_visits(quiet, 5, bot=True)  # bots are not clicks
    ordered = list(selectors.link_list(user=user, order="clicks"))
    assert [link.code for link in ordered] == [busy.code, some.code, quiet.code]


def test_every_order_breaks_ties_on_the_newest_id(user):
    """Links that sort alike keep one order whichever the key: the newest first, after the
    order's own fields (a page never repeats nor skips a link)."""
    links = UrlLinkFactory.create_batch(
        3, owner=user, title="Same", long_url="https://example.com/a"
    )
    UrlLink.objects.filter(pk__in=[link.pk for link in links]).update(
        created_at=links[0].created_at
    )
    newest_id_first = [link.code for link in sorted(links, key=lambda link: -link.pk)]
    for order in selectors.LINK_ORDERS:
        if order in ("oldest", "code", "code_desc"):
            continue  # by the id itself (oldest first) or by the codes, which differ
        ordered = [link.code for link in selectors.link_list(user=user, order=order)]
        assert ordered == newest_id_first, order


def test_clicks_with_and_without_bots_either_way(user):
    """clicks: people's; all_clicks: people's and bots' (link previews too)."""
    people, bots, mixed = UrlLinkFactory.create_batch(3, owner=user)
    add_visits(people, 3)
    add_visits(bots, 5, bot=True)
    add_visits(mixed, 2)
    add_visits(mixed, 2, bot=True)

    def codes(order):
        return [link.code for link in selectors.link_list(user=user, order=order)]

    assert codes("clicks") == [people.code, mixed.code, bots.code]
    assert codes("clicks_asc") == [bots.code, mixed.code, people.code]
    assert codes("all_clicks") == [bots.code, mixed.code, people.code]
    assert codes("all_clicks_asc") == [people.code, mixed.code, bots.code]


def test_text_orders_ignore_case(user):
    upper = UrlLinkFactory(owner=user, title="Zebra", long_url="https://example.com/Zoo")
    lower = UrlLinkFactory(owner=user, title="apple", long_url="https://example.com/ant")

    def codes(order):
        return [link.code for link in selectors.link_list(user=user, order=order)]

    assert codes("title") == codes("long_url") == [lower.code, upper.code]
    assert codes("title_desc") == codes("long_url_desc") == [upper.code, lower.code]


def test_tags_any_or_all_and_the_creation_span(user):
    both = UrlLinkFactory(owner=user)
    one = UrlLinkFactory(owner=user)
    UrlLinkFactory(owner=user)
    link_update(code=both.code, user=user, tags=["sale", "red"])
    link_update(code=one.code, user=user, tags=["RED"])

    def codes(**filters):
        return {link.code for link in selectors.link_list(user=user, **filters)}

    assert codes(tags=["sale", "red"]) == {both.code}  # all, the default
    assert codes(tags=["sale", "red"], tags_mode=selectors.TAGS_ANY) == {both.code, one.code}
    assert selectors.link_list(user=user, tags=["sale", "red"], tags_mode="any").count() == 2
    with pytest.raises(ValueError):
        selectors.link_list(user=user, tags=["red"], tags_mode="some")

    now = timezone.now()
    UrlLink.objects.filter(pk=both.pk).update(created_at=now - timedelta(days=3))
    UrlLink.objects.filter(pk=one.pk).update(created_at=now - timedelta(days=1))
    assert codes(created_from=now - timedelta(days=3), created_until=now - timedelta(days=1)) == {
        both.code,
        one.code,
    }
    assert codes(created_from=now - timedelta(days=2), created_until=now - timedelta(hours=1)) == {
        one.code
    }


def test_exclude_tags_any_or_all_and_with_tags(user):
    """exclude_tags leaves out the links carrying any of the tags (any case), or with mode all
    only those carrying every one; with `tags` as well, a link must pass both."""
    both = UrlLinkFactory(owner=user)
    red = UrlLinkFactory(owner=user)
    sale = UrlLinkFactory(owner=user)
    bare = UrlLinkFactory(owner=user)
    link_update(code=both.code, user=user, tags=["sale", "red"])
    link_update(code=red.code, user=user, tags=["RED"])
    link_update(code=sale.code, user=user, tags=["sale"])

    def codes(**filters):
        return {link.code for link in selectors.link_list(user=user, **filters)}

    assert codes(exclude_tags=["red"]) == {sale.code, bare.code}
    assert codes(exclude_tags=["Red", "SALE"]) == {bare.code}  # any, the default
    everything = {both.code, red.code, sale.code, bare.code}
    assert codes(exclude_tags=["red", "sale"], exclude_tags_mode="all") == everything - {both.code}
    assert codes(exclude_tags=["nothing"]) == everything
    assert codes(exclude_tags=["red", "nothing"], exclude_tags_mode="all") == everything
    assert codes(tags=["sale"], exclude_tags=["red"]) == {sale.code}
    assert selectors.link_list(user=user, exclude_tags=["red"]).count() == 2
    with pytest.raises(ValueError):
        selectors.link_list(user=user, exclude_tags=["red"], exclude_tags_mode="some")


def test_search_and_active_filter(user, other_user):
    """Search looks at the title and URL of the user's own links; active splits working links
    from revoked and expired ones."""
    kept = UrlLinkFactory(owner=user, long_url="https://example.com/sale", title="Spring sale")
    stopped = UrlLinkFactory(owner=user, long_url="https://example.com/spring-old", revoked=True)
    expired = UrlLinkFactory(owner=user, long_url="https://example.com/winter", expired=True)
    UrlLinkFactory(owner=other_user, long_url="https://example.com/spring-too")
    assert {link.code for link in selectors.link_list(user=user, search="spring")} == {
        kept.code,
        stopped.code,
    }
    assert {link.code for link in selectors.link_list(user=user, active=False)} == {
        stopped.code,
        expired.code,
    }
    assert [link.code for link in selectors.link_list(user=user, active=True)] == [kept.code]


def test_link_ranking_and_totals_count_peoples_clicks_on_the_links_one_may_see(
    user, other_user, staff_user
):
    """link_ranking orders by people's clicks (top, bottom), newest (last) or at random; both it
    and link_totals cover every link the user may see, stopped and archived ones too."""
    quiet, busy, stopped = UrlLinkFactory.create_batch(3, owner=user)
    stopped.revoked_at = stopped.expires_at = stopped.created_at
    stopped.archived = True
    stopped.save()
    add_visits(busy, 3)
    add_visits(stopped, 1)
    add_visits(quiet, 5, bot=True)  # bots are not clicks
    add_visits(UrlLinkFactory(owner=other_user), 2)

    def ranked(by, **kwargs):
        return [link.code for link in selectors.link_ranking(user=user, by=by, **kwargs)]

    assert ranked("top") == [busy.code, stopped.code, quiet.code]
    assert ranked("bottom", limit=2) == [quiet.code, stopped.code]
    assert ranked("last", limit=1, offset=1) == [busy.code]
    assert sorted(ranked("rand")) == sorted([busy.code, stopped.code, quiet.code])
    assert selectors.link_ranking(user=user, by="top")[0].total_clicks == 3
    assert selectors.link_totals(user=user) == {"links": 3, "clicks": 4}
    assert selectors.link_totals(user=staff_user) == {"links": 4, "clicks": 6}
