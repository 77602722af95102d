"""Other shorteners' APIs over this one's services, for tools written for them.

- `auth`: a credential as those APIs carry it (a raw key in a parameter, a username and
  password) → the user, through the same checks as the native API and the sign-in form;
- `yourls`: YOURLS's `/yourls-api.php`.

Each layer only reads its parameters, calls the services and selectors the native API calls
(link_create, link_get_visible, link_click_totals…) and shapes the answer as the other product
does: every rule about links stays in links.services.
"""
