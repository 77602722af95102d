"""The browser tests' fixtures, found by name in every module under tests/ (they live in
tests/browser_support.py with the helpers that go with them)."""

from tests.browser_support import (  # noqa: F401 - pytest finds them here
    _chromium,
    browser,
    target_url,
)
