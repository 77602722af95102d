"""The browser tests' fixtures, found by name in every module under tests/ (they live in
tests/browser_support.py with the helpers that go with them; the Chromium every browser test
shares is the root conftest's, for compat/'s browser tests too)."""

from tests.browser_support import target_url  # noqa: F401 - pytest finds it here
