"""The peers' published npm clients that compat tests drive: each pinned by a package-lock.json
beside its test, installed with `npm ci` into .cache/<name>/ once (again only when the lock
changes), and built there when the test needs a bundle (again only when the files it is built
from change). Without Node, npm or the registry a test skips and says why, unless its
`*_REQUIRED=1` variable is set (CI), which turns that into a failure."""

from __future__ import annotations

import fcntl
import filecmp
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

NPM_FLAGS = (
    "--fetch-retries=1",
    "--fetch-retry-mintimeout=2000",
    "--fetch-retry-maxtimeout=4000",
    "--fetch-timeout=30000",
    "--loglevel=error",
    "--no-audit",
    "--no-fund",
)


def client_unavailable(reason: str, *, required_env: str):
    """Skip with the reason; fail instead under `required_env`=1 (CI), where a missing Node,
    registry or port must not pass silently."""
    if os.environ.get(required_env) == "1":
        pytest.fail(f"{required_env}=1 but {reason}")
    pytest.skip(reason)


def _cache_root() -> Path:
    """Where the clients are installed and built: .cache/ in the checkout, or SHORTURL_NPM_CACHE
    (CI names one outside it, so a fresh clone on the same machine reuses an install and a build
    whose lock and sources are unchanged: `npm ci` and Shlink's web UI build took ~90 s of the
    browser layer in each run)."""
    configured = os.environ.get("SHORTURL_NPM_CACHE")
    return Path(configured) if configured else Path(settings.BASE_DIR) / ".cache"


def npm_client_installed(
    *,
    source: Path,
    files: tuple[str, ...],
    name: str,
    ready: str,
    label: str,
    tools: tuple[str, ...],
    required_env: str,
    build: tuple[tuple[str, ...], str] | None = None,
) -> Path:
    """`name`/ in the cache (_cache_root) with the client pinned in `source` installed: `files`
    copied from it, `npm ci` run when its lock changed or `ready` (a path in the install) is
    missing. `tools`: the commands the test needs on PATH. `build`: (command, output): run the
    command there after the install when `files` changed since it last ran or `output` (a path
    there) is missing; a build that fails fails the test (that is no missing tool)."""
    if any(shutil.which(tool) is None for tool in tools):
        client_unavailable(
            f"{' and '.join(tools)} {'are' if len(tools) > 1 else 'is'} needed for {label}",
            required_env=required_env,
        )
    target = _cache_root() / name
    target.mkdir(parents=True, exist_ok=True)
    # Two test runs of one checkout may start at once: one installs at a time.
    with open(target.with_name(f"{name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        locked = (target / "package-lock.json").is_file() and filecmp.cmp(
            source / "package-lock.json", target / "package-lock.json", shallow=False
        )
        for file in files:
            shutil.copyfile(source / file, target / file)
        if not (locked and (target / ready).exists()):
            _npm_ci(target, label=label, required_env=required_env)
        if build is not None:
            _built(target, source=source, files=files, command=build[0], output=build[1])
        return target


def _npm_ci(target: Path, *, label: str, required_env: str) -> None:
    try:
        done = subprocess.run(
            ["npm", "ci", *NPM_FLAGS],
            cwd=target,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        client_unavailable(
            f"npm ci of {label} took over 5 minutes (registry unreachable?)",
            required_env=required_env,
        )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "npm warn" not in line.lower()]
        client_unavailable(
            f"npm ci of {label} failed: {' / '.join(lines[:3])}", required_env=required_env
        )


def _built(
    target: Path, *, source: Path, files: tuple[str, ...], command: tuple[str, ...], output: str
) -> None:
    """Run the build `command` in `target` unless `output` is there and was built from these
    `files` (their digest is kept beside it)."""
    digest = hashlib.sha256(b"\0".join((source / file).read_bytes() for file in files)).hexdigest()
    stamp = target / ".built-from"
    if (target / output).exists() and stamp.is_file() and stamp.read_text() == digest:
        return
    stamp.unlink(missing_ok=True)
    done = subprocess.run(
        list(command), cwd=target, capture_output=True, text=True, timeout=300, check=False
    )
    if done.returncode != 0 or not (target / output).exists():
        pytest.fail(
            f"{' '.join(command)} in {target} failed ({done.returncode}): "
            f"{(done.stderr or done.stdout)[-1500:]}"
        )
    stamp.write_text(digest)
