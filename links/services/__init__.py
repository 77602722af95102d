"""Writes to links: the only place that creates or changes UrlLink rows, and where every rule
about them lives, so the API, the forms, the admin and the bulk path cannot disagree.

- `policy`: what may be stored (URLs, redirect types, expiries, titles) and changed;
- `create`: one link (`link_create`), reusing the owner's plain link for the same URL;
- `bulk`: up to 1,000 links in one call (`link_create_many`);
- `bulk_change`: one change for up to 1,000 links, answered per link (`link_change_many`);
- `change`: `link_update`, `link_revoke`, `link_cache_refresh`.

Reads (`link_get_visible`, `link_get_changeable`, `link_list`) are in links.selectors.
"""
