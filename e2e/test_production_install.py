"""The production install (requirements.txt alone) runs every process, with no test tool in it."""

from __future__ import annotations

import subprocess

import harness
import pytest

# Installed by requirements-dev.txt only: none may be importable in a production install.
DEV_ONLY_MODULES = ("pytest", "pytest_django", "factory", "hypothesis", "schemathesis", "ruff")


def test_production_venv_has_no_test_tools(production_venv):
    """An operator's `pip install -r requirements.txt` gets the product, not its test tools, so
    anything the product needs at run time cannot hide behind a test tool's dependencies."""
    probe = (
        "import importlib.util, sys\n"
        "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is not None))"
    )
    done = subprocess.run(
        [str(production_venv / "bin" / "python"), "-c", probe, *DEV_ONLY_MODULES],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=harness.clean_env(),
    )
    assert done.returncode == 0, f"the probe failed: {done.stderr[-1000:]}"
    found = done.stdout.split()
    assert not found, f"test tools importable in the production venv {production_venv}: {found}"


def test_production_venv_imports_what_each_process_loads(production_venv):
    """Every process of a production install starts: the Celery app with its Redis transport, the
    granian server and the MySQL driver import from requirements.txt alone."""
    modules = "shorturl_project.celery, kombu.transport.redis, granian, MySQLdb"
    done = subprocess.run(
        [str(production_venv / "bin" / "python"), "-c", f"import {modules}"],
        cwd=harness.REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=harness.clean_env(SHOW_DEV_WARNING="0"),
    )
    assert done.returncode == 0, f"`import {modules}` failed: {done.stderr[-1500:]}"


def test_celery_worker_answers_ping_from_production_venv(deployment):
    """An operator's `celery -A shorturl_project inspect ping` from the production install reaches
    the running worker through the broker and gets its pong (services mode)."""
    if deployment.mode != "services":
        pytest.skip("the embedded mode runs no Celery worker")
    out = harness.run(
        [deployment.venv_bin("celery"), "-A", "shorturl_project", "inspect", "ping", "-t", "10"],
        env=deployment.env,
        timeout=60,
    )
    assert "pong" in out, f"no pong from the worker: {out[-1000:]}"
