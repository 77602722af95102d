"""An OpenID Connect provider for the single sign-on tests: django-oauth-toolkit in OIDC mode,
run on loopback in a process of its own (`python -m tests.oidc_provider.run`), so the tests drive
the real protocol, not a mock of it. Test code only: no process of the product imports it."""
