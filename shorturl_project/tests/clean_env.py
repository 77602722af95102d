"""Python run as an operator would start it: a subprocess with the product's settings taken from
the environment given, none inherited from the one the tests run in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What the product reads from the environment: never inherited by these subprocesses.
PRODUCT_VARIABLES = re.compile(
    r"^(DATABASE_|REDIS_|CELERY_|SECURE_|SESSION_|CSRF_|DEBUG$|SECRET_KEY|ALLOWED_HOSTS$|"
    r"NUM_PROXIES$|SHORT_URL_BASE$|SILENCED_SYSTEM_CHECKS$)"
)


def python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`python -c code args…` (or `python args…` when `code` is empty) from the checkout, with
    `env` as the product's settings."""
    clean = {k: v for k, v in os.environ.items() if not PRODUCT_VARIABLES.match(k)}
    clean.update(env, SHOW_DEV_WARNING="0", DJANGO_SETTINGS_MODULE="shorturl_project.settings")
    return subprocess.run(
        [sys.executable, *(["-c", code] if code else []), *args],
        env=clean,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
