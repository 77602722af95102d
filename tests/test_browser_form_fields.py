"""Form fields as a marketer sees them in Chromium (issue #27's walk), at a phone's and a laptop's
width: a list of checkboxes (a key's scopes, a webhook's events) is a group named before its
boxes, each box with its own label; the visit limit looks like the inputs around it. Each page
fits its width and passes axe-core.
"""

import pytest

from tests.browser_support import assert_fits_and_accessible, log_in, needs_chromium, page_at_width

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), needs_chromium]
WIDTHS = [390, 1280]


def _assert_checkbox_group(page, group_name: str, box_names: list[str]) -> None:
    group = page.get_by_role("group", name=group_name, exact=True)
    legend = group.locator("legend")
    assert legend.inner_text().strip() == group_name
    first_box = group.get_by_role("checkbox").first
    # The group's name is read (and seen) before its boxes, not under them.
    assert legend.bounding_box()["y"] + legend.bounding_box()["height"] <= (
        first_box.bounding_box()["y"] + 1
    )
    for name in box_names:
        box = group.get_by_role("checkbox", name=name, exact=True)
        assert box.count() == 1, f"{name!r}: {box.count()} checkboxes so named"
    # No label holds more than one checkbox (one label around the list names every box alike).
    crowded = page.evaluate(
        "() => [...document.querySelectorAll('label')]"
        ".filter(l => l.querySelectorAll('input[type=checkbox]').length > 1).length"
    )
    assert crowded == 0


@pytest.mark.parametrize("width", WIDTHS)
def test_checkbox_lists_are_named_groups_with_a_label_each(browser, live_server, user, width):
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.goto(base + "/accounts/api-keys/")
    _assert_checkbox_group(
        page, "It may", ["Create, change and revoke links", "Read click stats", "Manage webhooks"]
    )
    assert_fits_and_accessible(page, "API keys form")
    # The boxes still choose the key's scopes.
    page.get_by_label("Name").fill("Stats reader")
    group = page.get_by_role("group", name="It may", exact=True)
    for box in group.get_by_role("checkbox").all():
        box.uncheck()
    group.get_by_role("checkbox", name="Read click stats").check()
    page.get_by_role("button", name="Make key").click()
    row = page.locator("tr[data-key-name='Stats reader']")
    assert row.locator("td[data-label=May]").inner_text().strip() == "stats:read"

    page.goto(base + "/dashboard/webhooks/")
    _assert_checkbox_group(page, "Events", [])
    assert page.get_by_role("group", name="Events").get_by_role("checkbox").count() >= 3
    assert_fits_and_accessible(page, "webhooks form")
    context.close()


_INPUT_LOOK = """(el) => { const s = getComputedStyle(el); return {
    border: s.borderTopWidth + ' ' + s.borderTopStyle + ' ' + s.borderTopColor,
    radius: s.borderTopLeftRadius, padding: s.paddingLeft, height: el.offsetHeight,
    font: s.fontSize + ' ' + s.fontFamily, width: el.offsetWidth }; }"""


@pytest.mark.parametrize("width", WIDTHS)
def test_visit_limit_looks_like_the_other_inputs(browser, live_server, user, width):
    from links.services.create import link_create

    link_create(user=user, long_url="https://example.com/spring", alias="spring")
    base = live_server.url
    context, page = page_at_width(browser, width)
    log_in(page, base, "marketer", "s3cret-pass-1")
    page.wait_for_url(base + "/")

    page.get_by_text("Options:").click()
    for where in ("create form", "edit form"):
        if where == "edit form":
            page.goto(base + "/dashboard/links/spring/edit/")
        limit = page.get_by_label("Visit limit").evaluate(_INPUT_LOOK)
        title = page.get_by_label("Title", exact=True).evaluate(_INPUT_LOOK)
        assert limit == title, f"{where}: visit limit {limit}, title {title}"
    assert_fits_and_accessible(page, "edit form")
    context.close()
