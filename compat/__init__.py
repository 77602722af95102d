"""Other shorteners' APIs over this one's services, for tools written for them.

- `shlink`: Shlink's REST API v3 under /rest/;
- `yourls`: YOURLS's `/yourls-api.php`;
- `bitly`: Bitly's API v4 under /v4/ (`views`: links; `clicks`: their click counts);
- `auth`: a credential as those APIs carry it (a raw key in a parameter, a username and
  password) → the user, through the same checks as the native API and the sign-in form.

Each layer only reads its parameters, calls the services and selectors the native API calls
(link_create, link_get_visible, link_click_totals…) and shapes the answer as the other product
does: every rule about links stays in links.services, and no compat module writes a row itself
(tests/test_architecture.py).
"""
