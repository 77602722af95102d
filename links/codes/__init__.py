"""Short codes: their shape and check character, custom aliases, and the three strategies.

Modules, so that each importer takes only what it needs (the redirect needs `shape` and
`aliases`, which touch neither the database nor Redis):

- `shape`: the check character and what a generated code looks like (pure);
- `aliases`: the rules for custom aliases (pure);
- `base`: what a strategy is; `strategies`: which one the settings choose;
- `pool`, `sequence`, `hashing`: the strategies, the pool with its claim, refill and report.
"""
