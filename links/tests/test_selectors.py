"""link_list as the My links page and the API use it."""

import pytest

from analytics.tests.factories import add_visits
from links import selectors
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
