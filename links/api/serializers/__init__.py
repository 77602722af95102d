"""Shapes of the links API, one module per job: input checked for type here, rules enforced by
links.services. `links` shows links, `inputs` reads a link's create and change bodies, `queries`
the list's and the QR code's query strings, `bulk` the bulk call, `tags` and `domains` theirs.
Import each name from the module that holds it."""
