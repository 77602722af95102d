"""The e2e harness: a production install, the product started the way it is deployed, HTTP helpers.

A deployment is started with the product's own commands (`make serve`, `make worker`,
`make webhook-worker`, `make beat`) from a virtualenv holding requirements.txt alone, with
throw-away stores (a SQLite file in a temp dir; or a fresh MariaDB database and a private
`redis-server`).
Every process is started in its own session so that teardown can stop its whole group, every
wait has a deadline, and nothing but 127.0.0.1 is ever contacted.

Logs of every process go to test-artifacts/e2e/<mode>/ and stay there after the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import requests

REPO = Path(__file__).resolve().parent.parent
E2E_STATE = REPO / ".e2e"
VENV = E2E_STATE / "venv"
ARTIFACTS = REPO / "test-artifacts" / "e2e"
HOST = "127.0.0.1"

WEB_CONCURRENCY = 2
WEB_THREADS = 4

# How long the product may take for each step; generous for a busy 2-core machine.
VENV_BUILD_TIMEOUT = 900
START_TIMEOUT = 180
COMMAND_TIMEOUT = 120
STOP_GRACE = 15
UNHEALTHY_GRACE = 20  # a server that answers /healthz gets this long to turn 200
HTTP_TIMEOUT = 30

# What the product reads from the environment: never inherited from whoever runs the tests,
# so a stray DATABASE_URL (e.g. from the CI services step) cannot point a test at real data.
_PRODUCT_PREFIXES = (
    "DATABASE_",
    "REDIS_",
    "CELERY_",
    "SHORTURL_",
    "ANALYTICS_",
    "GEOIP_",
    "API_",
    "WEB_",
    "DJANGO_",
    "SSO_",
)
_PRODUCT_NAMES = {
    "DEBUG",
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SHORT_URL_BASE",
    "NUM_PROXIES",
    "SHOW_DEV_WARNING",
    "PIDFILE",
    "HOST",
    "PORT",
    "VENV",
    "PYTHON",
    "TIME_ZONE",
    "LOG_LEVEL",
    "ACCESS_LOG",
    "STATIC_ROOT",
    "NODE_STATE_DIR",
    "CONN_MAX_AGE",
    "ANONYMIZE_IP",
    "CACHE_KEY_PREFIX",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "LOGIN_FAILURE_LIMIT",
    "LOGIN_LOCKOUT_MINUTES",
    "LOCAL_PASSWORDS",
    # the outer `make e2e` must not hand its own variables to the inner `make serve`
    "MAKEFLAGS",
    "MFLAGS",
    "MAKELEVEL",
    "MAKEOVERRIDES",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
}

T = TypeVar("T")


class HarnessError(RuntimeError):
    """The deployment could not be started or driven (not a product assertion)."""


# --- small utilities ----------------------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on right now (the kernel's pick for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_until(
    probe: Callable[[], T | None], *, timeout: float, interval: float = 0.25, what: str
) -> T:
    """Call `probe` until it returns something other than None/False, at most `timeout` s."""
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        try:
            value = probe()
        except (OSError, requests.RequestException, http.client.HTTPException) as error:
            value, last_error = None, error
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise HarnessError(f"timed out after {timeout:.0f} s waiting for {what}{detail}")
        time.sleep(interval)


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without anything the product reads, plus `overrides`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _PRODUCT_NAMES and not name.startswith(_PRODUCT_PREFIXES)
    }
    dev_bin = str(REPO / ".venv" / "bin")
    env["PATH"] = os.pathsep.join(
        part for part in env.get("PATH", "").split(os.pathsep) if part and part != dev_bin
    )
    env.update(overrides)
    return env


def tail(path: Path, *, start: int = 0, max_lines: int = 60) -> str:
    """The last `max_lines` lines of `path` from byte `start` on (the whole file by default)."""
    try:
        with path.open("rb") as handle:
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        return "(no log)"
    lines = data.decode("utf-8", "replace").splitlines()
    cut = len(lines) - max_lines
    shown = lines[cut:] if cut > 0 else lines
    prefix = [f"... ({cut} earlier lines in {path})"] if cut > 0 else []
    return "\n".join(prefix + shown) or "(empty)"


def run(argv: list[str], *, env: dict[str, str], timeout: float = COMMAND_TIMEOUT) -> str:
    """Run a command from the repository root; its output, or HarnessError with the output."""
    try:
        done = subprocess.run(
            argv,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise HarnessError(f"{' '.join(argv)} did not finish in {timeout} s") from error
    if done.returncode != 0:
        raise HarnessError(
            f"{' '.join(argv)} exited {done.returncode}\n"
            f"--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-4000:]}"
        )
    return done.stdout


# --- processes ----------------------------------------------------------------------------------


def _proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of a live pid, from /proc."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) is in parentheses and may contain spaces.
    fields = raw[raw.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _all_pids() -> Iterator[int]:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            yield int(entry)


def _live_pids(field: int, value: int) -> list[int]:
    """Live (non-zombie) processes whose stat field `field` (1 parent, 2 group) is `value`."""
    found = []
    for candidate in _all_pids():
        stat = _proc_stat(candidate)
        if stat and stat[field] == value and stat[0] != "Z":
            found.append(candidate)
    return sorted(found)


def children_of(pid: int) -> list[int]:
    """Live child processes of `pid`."""
    return _live_pids(1, pid)


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of `pid` so far, in clock ticks (0 once it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0
    fields = raw[raw.rfind(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15 of stat(5)


def busiest(pids: list[int], *, over: float = 0.5) -> tuple[int, dict[int, int]]:
    """The pid that used the most CPU during the next `over` seconds, and each one's ticks."""
    before = {pid: cpu_ticks(pid) for pid in pids}
    time.sleep(over)
    used = {pid: cpu_ticks(pid) - before[pid] for pid in pids}
    return max(pids, key=lambda pid: used[pid]), used


def group_alive(pgid: int) -> list[int]:
    """Live members of process group `pgid`."""
    return _live_pids(2, pgid)


@dataclass
class Proc:
    """A process (and its process group) started by the harness."""

    name: str
    popen: subprocess.Popen
    log_path: Path

    @property
    def pgid(self) -> int:
        return self.popen.pid  # start_new_session: the leader's pid is the group id

    def exited(self) -> int | None:
        return self.popen.poll()

    def stop(self, grace: float = STOP_GRACE) -> None:
        """SIGTERM the whole group, SIGKILL what is left after `grace` seconds."""
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pgid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(timeout=0.1)
                if self.popen.poll() is not None and not group_alive(self.pgid):
                    return
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=1)


def start_process(name: str, argv: list[str], *, env: dict[str, str], log_path: Path) -> Proc:
    # Once (CI of 36b90fe) the session's embedded deployment found its fresh log directory gone
    # between start_deployment's mkdir and this open, and all 117 of its cases errored. What
    # removed it was not found; a log directory made again here costs nothing.
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        popen = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return Proc(name=name, popen=popen, log_path=log_path)


# --- the production install ----------------------------------------------------------------------


def build_production_venv() -> Path:
    """`make install-prod VENV=.e2e/venv`: requirements.txt only; make's stamp reuses it.

    A file lock keeps two runs on this checkout (e.g. CI and a developer) from installing
    into the same directory at once.
    """
    E2E_STATE.mkdir(exist_ok=True)
    env = clean_env()
    # make's stamp re-runs `pip install` when requirements.txt changes, but pip never removes
    # what an older requirements.txt brought in: a dependency dropped from the file would stay
    # importable. So the venv is rebuilt from nothing whenever the file's content changes.
    wanted = hashlib.sha256((REPO / "requirements.txt").read_bytes()).hexdigest()
    built_from = E2E_STATE / "venv.requirements.sha256"
    with (E2E_STATE / "venv.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if VENV.exists() and (
                not built_from.exists() or built_from.read_text().strip() != wanted
            ):
                shutil.rmtree(VENV)
            built_from.unlink(missing_ok=True)
            run(["make", "install-prod", f"VENV={VENV}"], env=env, timeout=VENV_BUILD_TIMEOUT)
            built_from.write_text(wanted + "\n")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return VENV


# --- throw-away stores ----------------------------------------------------------------------------


def redis_ping(port: int) -> bool:
    with socket.create_connection((HOST, port), timeout=1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64).startswith(b"+PONG")


def start_redis(
    workdir: Path, log_path: Path, port: int | None = None, *more: str, name: str = "redis"
) -> tuple[Proc, int]:
    """A private redis-server on a spare loopback port, AOF on (the visit buffer needs it); with
    `port` and the same `workdir`, the same server started again (its AOF read back). `more`:
    further redis-server options (a replica's --replicaof, say)."""
    port = port or free_port()
    proc = start_process(
        name,
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--bind",
            HOST,
            "--appendonly",
            "yes",
            "--dir",
            str(workdir),
            "--save",
            "",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            *more,
        ],
        env=clean_env(),
        log_path=log_path,
    )
    wait_answering(proc, lambda: redis_ping(port), 20, f"{name} on port {port}")
    return proc, port


def wait_answering(proc: Proc, answers: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait until a store just started answers; stop it and raise if it does not."""
    try:
        wait_until(lambda: proc.exited() is None and answers(), timeout=timeout, what=what)
    except HarnessError:
        proc.stop()
        raise


def mariadb(sql: str, port: int = 3306, *, timeout: float = 60) -> str:
    argv = ["mariadb", "-uroot", f"-h{HOST}", f"-P{port}", "--connect-timeout=2", "-N", "-e", sql]
    return run(argv, env=clean_env(), timeout=timeout)


def fresh_mariadb_database(name: str, port: int = 3306) -> None:
    if not re.fullmatch(r"shorturl_e2e\w*", name):
        raise HarnessError(f"refusing to touch database {name!r}: e2e databases are shorturl_e2e*")
    mariadb(
        f"DROP DATABASE IF EXISTS `{name}`; "
        f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
        port=port,
    )


def _mariadb_answers(port: int) -> bool:
    try:
        mariadb("SELECT 1", port=port)
    except HarnessError:
        return False
    return True


def init_mariadb_datadir(datadir: Path) -> None:
    """A new MariaDB data directory (root without a password), unless `datadir` exists."""
    if datadir.exists():
        return
    run(
        [
            shutil.which("mariadb-install-db") or "mariadb-install-db",
            "--no-defaults",
            f"--datadir={datadir}",
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
        env=clean_env(),
        timeout=120,
    )


def start_mariadb(workdir: Path, log_path: Path, port: int | None = None) -> tuple[Proc, int]:
    """A private MariaDB server with its own data directory on a spare loopback port, for the
    cases that stop the database (never the shared one); with `port` and the same `workdir`,
    the same server started again."""
    datadir = workdir / "data"
    init_mariadb_datadir(datadir)
    port = port or free_port()
    proc = start_process(
        "mariadb",
        [
            shutil.which("mariadbd") or "/usr/sbin/mariadbd",
            "--no-defaults",
            f"--datadir={datadir}",
            f"--port={port}",
            f"--bind-address={HOST}",
            f"--socket={workdir / 'mariadb.sock'}",
            f"--pid-file={workdir / 'mariadb.pid'}",
            "--user=root",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=64M",
        ],
        env=clean_env(),
        log_path=log_path,
    )
    wait_answering(proc, lambda: _mariadb_answers(port), 60, f"a private MariaDB on port {port}")
    return proc, port


def drop_mariadb_database(name: str) -> None:
    if re.fullmatch(r"shorturl_e2e\w*", name):
        mariadb(f"DROP DATABASE IF EXISTS `{name}`")


# --- a running deployment -------------------------------------------------------------------------


@dataclass(repr=False)
class Deployment:
    mode: str  # "embedded" or "services"
    port: int
    env: dict[str, str]
    workdir: Path
    log_dir: Path
    pidfile: Path
    procs: dict[str, Proc] = field(default_factory=dict)
    token: str = ""
    health: dict = field(default_factory=dict)
    db_port: int = 3306  # services mode: the MariaDB server it runs on
    cleanups: list[Callable[[], Any]] = field(default_factory=list)

    def __repr__(self) -> str:
        # Short on purpose: pytest prints fixtures in tracebacks, and env holds SECRET_KEY.
        return f"Deployment({self.mode}, {self.base_url})"

    # -- addresses and clients

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def session(self, *, token: bool = False) -> requests.Session:
        """A requests session that never uses proxies from the environment."""
        sess = requests.Session()
        sess.trust_env = False
        if token:
            sess.headers["Authorization"] = f"Token {self.token}"
        return sess

    def api(self) -> requests.Session:
        return self.session(token=True)

    def venv_bin(self, name: str) -> str:
        return str(VENV / "bin" / name)

    def manage(self, *args: str, timeout: float = COMMAND_TIMEOUT) -> str:
        return run([self.venv_bin("python"), "manage.py", *args], env=self.env, timeout=timeout)

    # -- processes

    def server_main(self) -> int:
        text = wait_until(
            lambda: self.pidfile.exists() and self.pidfile.read_text().strip(),
            timeout=10,
            what=f"the server's pid file {self.pidfile}",
        )
        return int(text)

    def server_workers(self) -> list[int]:
        return children_of(self.server_main())

    def check_alive(self) -> None:
        for proc in self.procs.values():
            code = proc.exited()
            if code is not None:
                raise HarnessError(
                    f"{proc.name} exited with {code}:\n{tail(proc.log_path, max_lines=40)}"
                )

    def log_offsets(self) -> dict[Path, int]:
        offsets = {}
        for path in sorted(self.log_dir.glob("*.log")):
            with contextlib.suppress(FileNotFoundError):
                offsets[path] = path.stat().st_size
        return offsets

    def logs_since(self, offsets: dict[Path, int] | None = None, max_lines: int = 60) -> str:
        parts = []
        for path in sorted(self.log_dir.glob("*.log")):
            start = (offsets or {}).get(path, 0)
            text = tail(path, start=start, max_lines=max_lines)
            parts.append(f"----- {path.relative_to(REPO)} -----\n{text}")
        return "\n".join(parts)

    def stop(self) -> None:
        # Web first (no new visits), then beat and worker, the stores last.
        for name in ("web", "beat", "worker", "webhook-worker", "redis"):
            proc = self.procs.pop(name, None)
            if proc is not None:
                proc.stop()
        for proc in self.procs.values():
            proc.stop()
        self.procs.clear()
        while self.cleanups:
            with contextlib.suppress(HarnessError, OSError):
                self.cleanups.pop()()
        shutil.rmtree(self.workdir, ignore_errors=True)


# Single sign-on is set up on the session's deployments (conftest.py; test_sso.py starts the
# provider they name: the product reads its discovery document at the first sign-in), so that
# case needs no deployment of its own. People land in this workspace, which the case makes.
SSO_WORKSPACE = ("example-team", "Example team")


def base_env(port: int, pidfile: Path) -> dict[str, str]:
    return clean_env(
        HOST=HOST,
        PORT=str(port),
        DEBUG="0",
        SECRET_KEY=secrets.token_hex(32),
        ALLOWED_HOSTS=f"{HOST},localhost",
        NUM_PROXIES="1",
        SHOW_DEV_WARNING="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        WEB_CONCURRENCY=str(WEB_CONCURRENCY),
        WEB_THREADS=str(WEB_THREADS),
        PIDFILE=str(pidfile),
        # Flush interval as documented (0.5 s); ANALYTICS_AGGREGATE_SECONDS keeps its default.
        ANALYTICS_FLUSH_SECONDS="0.5",
        # Webhook receivers the tests start run on loopback, which production refuses (SSRF).
        SHORTURL_WEBHOOK_ALLOW_PRIVATE="1",
        # The destinations the link-health tests start run there too (test-only, SSRF).
        LINK_CHECK_ALLOW_PRIVATE="1",
    )


def _wait_healthy(dep: Deployment) -> dict:
    """Wait for the server to answer /healthz, then (briefly) for a 200.

    A server that answers but stays unhealthy is not a start-up failure: the deployment is handed
    to the tests, and the /healthz case says what is wrong.
    """
    answers: list[tuple[int, str]] = []

    def probe() -> tuple[int, str]:
        dep.check_alive()
        with dep.session() as sess:
            response = sess.get(dep.url("/healthz"), timeout=5)
        answers.append((response.status_code, response.text[:500]))
        return answers[-1]

    what = f"{dep.url('/healthz')} to answer"
    wait_until(probe, timeout=START_TIMEOUT, interval=0.5, what=what)
    with contextlib.suppress(HarnessError):
        wait_until(lambda: probe()[0] == 200, timeout=UNHEALTHY_GRACE, interval=0.5, what="200")
    status, body = answers[-1]
    return {"status": status, "body": body}


def start_web(dep: Deployment) -> None:
    """`make serve` for `dep` (its log appended to web.log), waiting until it answers."""
    dep.procs["web"] = start_process(
        "web",
        [*make_command("serve"), f"HOST={HOST}", f"PORT={dep.port}"],
        env=dep.env,
        log_path=dep.log_dir / "web.log",
    )
    dep.health = _wait_healthy(dep)


def restart_web(dep: Deployment) -> None:
    """Stop the web server (SIGTERM, as a deploy or a reboot would) and start it again; the
    database, Redis, the worker and the node's state dir stay as they were."""
    dep.procs.pop("web").stop()
    start_web(dep)


def _wait_log(proc: Proc, pattern: str, *, timeout: float, dep: Deployment) -> None:
    regex = re.compile(pattern)

    def probe() -> bool:
        dep.check_alive()
        return bool(regex.search(proc.log_path.read_text(errors="replace")))

    wait_until(probe, timeout=timeout, interval=0.5, what=f"{proc.name} log to say {pattern!r}")


def make_command(target: str) -> list[str]:
    return ["make", "--no-print-directory", target, f"VENV={VENV}"]


def start_deployment(
    mode: str, *, name: str = "", own_database: bool = False, env: dict[str, str] | None = None
) -> Deployment:
    """Start one deployment; on any failure stop what was started and raise with the logs.

    `name` (the mode by default) names its log directory, for a second deployment beside the
    session's; `own_database` (services mode) runs it on a private MariaDB server
    (procs["mariadb"], port in db_port) that a case may stop; `env`: settings of its own for
    every process of it (e.g. short intervals a case needs).
    """
    log_dir = ARTIFACTS / (name or mode)
    shutil.rmtree(log_dir, ignore_errors=True)
    log_dir.mkdir(parents=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"shorturl-e2e-{mode}-"))
    port = free_port()
    pidfile = workdir / "server.pid"
    dep = Deployment(
        mode=mode,
        port=port,
        env=base_env(port, pidfile),
        workdir=workdir,
        log_dir=log_dir,
        pidfile=pidfile,
    )
    # Each deployment collects its own static files, never into the checkout's staticfiles/.
    dep.env["STATIC_ROOT"] = str(workdir / "static")
    dep.env.update(env or {})
    try:
        if mode == "embedded":
            dep.env["DATABASE_URL"] = f"sqlite:///{workdir / 'db.sqlite3'}"
        elif mode == "services":
            redis_dir = workdir / "redis"
            redis_dir.mkdir()
            dep.procs["redis"], redis_port = start_redis(redis_dir, log_dir / "redis.log")
            database = f"shorturl_e2e_{os.getpid()}"
            if own_database:
                db_dir = workdir / "mariadb"
                db_dir.mkdir()
                dep.procs["mariadb"], dep.db_port = start_mariadb(db_dir, log_dir / "mariadb.log")
            fresh_mariadb_database(database, port=dep.db_port)
            if not own_database:
                dep.cleanups.append(lambda: drop_mariadb_database(database))
            dep.env["DATABASE_URL"] = f"mysql://root@{HOST}:{dep.db_port}/{database}"
            dep.env["REDIS_URL"] = f"redis://{HOST}:{redis_port}/0"
            dep.env["CELERY_BROKER_URL"] = f"redis://{HOST}:{redis_port}/1"
            # This node's own state (spool, generation table), not the checkout's var/.
            dep.env["NODE_STATE_DIR"] = str(workdir / "node-state")
        else:
            raise HarnessError(f"unknown mode {mode!r}")

        start_web(dep)  # migrated and serving from here on

        if mode == "services":
            # Its own schedule file: another deployment's beat may be running from this venv.
            dep.env["BEAT_SCHEDULE"] = str(workdir / "celerybeat-schedule")
            dep.procs["worker"] = start_process(
                "worker", make_command("worker"), env=dep.env, log_path=log_dir / "worker.log"
            )
            dep.procs["webhook-worker"] = start_process(
                "webhook-worker",
                make_command("webhook-worker"),
                env=dep.env,
                log_path=log_dir / "webhook-worker.log",
            )
            dep.procs["beat"] = start_process(
                "beat", make_command("beat"), env=dep.env, log_path=log_dir / "beat.log"
            )

        dep.manage("ensure_demo_users")
        out = dep.manage("drf_create_token", "demo")
        match = re.search(r"\b([0-9a-f]{40})\b", out)
        if not match:
            raise HarnessError(f"no token in drf_create_token's output: {out!r}")
        dep.token = match.group(1)

        if mode == "services":
            _wait_log(dep.procs["worker"], r"celery@\S+ ready\.", timeout=90, dep=dep)
            _wait_log(dep.procs["webhook-worker"], r"webhooks@\S+ ready\.", timeout=90, dep=dep)
            _wait_log(dep.procs["beat"], r"beat: Starting", timeout=60, dep=dep)
        dep.check_alive()
    except BaseException as error:
        logs = dep.logs_since(max_lines=80)
        dep.stop()
        if isinstance(error, HarnessError):
            raise HarnessError(f"{mode} deployment failed to start: {error}\n{logs}") from error
        raise
    return dep


class WebhookReceiver:
    """An HTTP server on 127.0.0.1 that answers 204 and keeps every POST (headers, raw body): the
    deployment's webhooks point at `url` (the harness starts the product with
    SHORTURL_WEBHOOK_ALLOW_PRIVATE=1). `close()` when done."""

    def __init__(self):
        received: list[tuple[dict[str, str], bytes]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append((dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.url = f"http://{HOST}:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def bodies(self) -> list[dict]:
        """Every POST's JSON body, in the order they came."""
        return [json.loads(body) for _, body in list(self.received)]

    def events(self, event: str) -> list[dict]:
        return [
            json.loads(body)
            for headers, body in list(self.received)
            if headers.get("X-Shorturl-Event") == event
        ]

    def close(self) -> None:
        self.server.shutdown()


# --- figures shown at the end of the run ---------------------------------------------------------

FIGURES: list[str] = []


def note(dep: Deployment, case: str, text: str) -> None:
    """Keep a measured figure for the run's summary (and print it for -s runs)."""
    line = f"[{dep.mode}] {case}: {text}"
    FIGURES.append(line)
    print(line)  # shown with -s, and in a failing test's captured output


# --- HTTP helpers ------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    location: str | None
    content_type: str
    body: bytes


def get_fresh(
    port: int, path: str, headers: dict[str, str] | None = None, timeout: float = HTTP_TIMEOUT
) -> Answer:
    """One GET on a new connection, `Connection: close`, never following redirects.

    A new connection each time lets the kernel hand it to any server worker process.
    """
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Connection": "close", **(headers or {})})
        response = conn.getresponse()
        body = response.read()
        return Answer(
            status=response.status,
            location=response.getheader("Location"),
            content_type=response.getheader("Content-Type", ""),
            body=body,
        )
    finally:
        conn.close()


# Real browsers' User-Agents (desktop and mobile); none is a bot or a link-preview fetcher.
BROWSER_USER_AGENTS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.6367.82 Mobile Safari/537.36",
    "Mozilla/5.0 (Linux; Android 13; SM-S911B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/123.0.6312.118 Mobile Safari/537.36",
    "Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0",
)

# First octets of public IPv4 space, so that the visits look like people from many places.
_PUBLIC_FIRST_OCTETS = (23, 31, 41, 52, 62, 81, 91, 103, 110, 121, 151, 177, 185, 196, 201, 213)


def visitor_headers(index: int) -> dict[str, str]:
    """Varied, deterministic visitor headers: a public client IP (X-Forwarded-For, as one proxy
    in front would add it) and a real browser's User-Agent."""
    first = _PUBLIC_FIRST_OCTETS[index % len(_PUBLIC_FIRST_OCTETS)]
    ip = f"{first}.{(index * 7) % 256}.{(index * 13) % 256}.{index % 250 + 1}"
    return {
        "X-Forwarded-For": ip,
        "User-Agent": BROWSER_USER_AGENTS[(index // 3) % len(BROWSER_USER_AGENTS)],
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "Accept-Language": "en-US,en;q=0.9",
    }


def burst(dep: Deployment, code: str, count: int = 200, clients: int = 16) -> list[Answer]:
    """`count` redirects of /<code> from `clients` at once: every server worker process serves
    (and caches) the link, where one client after another may reach only one of them."""
    with ThreadPoolExecutor(clients) as pool:
        return list(
            pool.map(lambda i: get_fresh(dep.port, f"/{code}", visitor_headers(i)), range(count))
        )


@dataclass
class Clicks:
    answered: int = 0  # answered with the expected redirect
    errors: int = 0  # connection errors (the answer, if any, was lost)
    other: list[str] = field(default_factory=list)  # anything else that was answered


def click_until(
    dep: Deployment, code: str, long_url: str, stop: threading.Event, *, clients: int
) -> Clicks:
    """`clients` people following /<code> on fresh connections, each with its own visitor
    headers, until `stop` is set; what they saw, summed."""

    def person(first: int) -> Clicks:
        seen, i = Clicks(), first
        while not stop.is_set():
            try:
                answer = get_fresh(dep.port, f"/{code}", visitor_headers(i), timeout=15)
            except (OSError, http.client.HTTPException):
                seen.errors += 1
            else:
                if (answer.status, answer.location) == (302, long_url):
                    seen.answered += 1
                else:
                    seen.other.append(f"{answer.status} {answer.location} {answer.body[:120]!r}")
            i += clients
        return seen

    with ThreadPoolExecutor(max_workers=clients) as pool:
        people = list(pool.map(person, range(clients)))
    return Clicks(
        answered=sum(p.answered for p in people),
        errors=sum(p.errors for p in people),
        other=[line for p in people for line in p.other],
    )


def unique_url(label: str) -> str:
    return f"https://example.com/e2e/{label}?run={secrets.token_hex(6)}"


def create_link(dep: Deployment, long_url: str, **extra: Any) -> dict:
    with dep.api() as api:
        response = api.post(
            dep.url("/api/v1/links/"), json={"long_url": long_url, **extra}, timeout=HTTP_TIMEOUT
        )
    if response.status_code != 201:
        raise AssertionError(
            f"POST /api/v1/links/ {long_url!r} answered {response.status_code}, expected 201: "
            f"{response.text[:500]}"
        )
    return response.json()


def call_as(dep: Deployment, token: str, method: str, path: str, **kwargs: Any) -> Any:
    """One request to `path` with `token` (an API key or a DRF-style token) as the credential;
    the requests response."""
    with dep.session() as sess:
        sess.headers["Authorization"] = f"Token {token}"
        return sess.request(method, dep.url(path), timeout=HTTP_TIMEOUT, **kwargs)


def api_get(dep: Deployment, path: str, **params: Any) -> Any:
    """GET an API path with the deployment's key; its JSON, asserting a 200."""
    with dep.api() as api:
        response = api.get(dep.url(path), params=params, timeout=HTTP_TIMEOUT)
    assert response.status_code == 200, (
        f"GET {path} {params} → {response.status_code}: {response.text[:500]}"
    )
    return response.json()


def listed_codes(dep: Deployment, **params: Any) -> set[str]:
    """The codes GET /api/v1/links/ lists (one page of up to 500) for `params`."""
    page = api_get(dep, "/api/v1/links/", page_size=500, **params)
    return {item["code"] for item in page["results"]}


def stats(dep: Deployment, code: str) -> dict:
    with dep.api() as api:
        response = api.get(dep.url(f"/api/v1/links/{code}/stats/"), timeout=HTTP_TIMEOUT)
    if response.status_code != 200:
        raise AssertionError(
            f"GET /api/v1/links/{code}/stats/ answered {response.status_code}: "
            f"{response.text[:500]}"
        )
    return response.json()


@dataclass
class VisitCount:
    reached: bool
    seconds: float  # from the call until the count was reached (or until giving up)
    total_clicks: int
    bot_clicks: int
    history: list[tuple[float, int]]  # (seconds, total_clicks + bot_clicks) whenever it changed

    @property
    def stored(self) -> int:
        return self.total_clicks + self.bot_clicks


def wait_for_visits(dep: Deployment, code: str, expected: int, *, timeout: float) -> VisitCount:
    """Poll the stats API until people's + bots' clicks reach `expected` (or `timeout` passes)."""
    started = time.monotonic()
    history: list[tuple[float, int]] = []
    data: dict = {}
    while True:
        data = stats(dep, code)
        elapsed = time.monotonic() - started
        seen = data["total_clicks"] + data["bot_clicks"]
        if not history or history[-1][1] != seen:
            history.append((round(elapsed, 1), seen))
        if seen >= expected or elapsed >= timeout:
            return VisitCount(
                reached=seen >= expected,
                seconds=elapsed,
                total_clicks=data["total_clicks"],
                bot_clicks=data["bot_clicks"],
                history=history,
            )
        time.sleep(0.5)


CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')


def csrf_from(html: str) -> str:
    match = CSRF_INPUT.search(html)
    if not match:
        raise AssertionError(f"no csrfmiddlewaretoken in the page: {html[:800]}")
    return match.group(1)


def post_form(
    dep: Deployment, sess: requests.Session, path: str, page_html: str, fields: dict[str, str]
) -> requests.Response:
    """Submit a form on `path` as a browser would: its CSRF token, a same-origin Referer, and
    the redirect that follows a successful POST not followed."""
    return sess.post(
        dep.url(path),
        data={"csrfmiddlewaretoken": csrf_from(page_html), **fields},
        headers={"Referer": dep.url(path)},
        allow_redirects=False,
        timeout=HTTP_TIMEOUT,
    )


def post_create_form(
    dep: Deployment, sess: requests.Session, home_html: str, long_url: str, **fields: str
) -> requests.Response:
    """Shorten `long_url` with the home page's form as a browser sends it (the options left as
    they come, `fields` changing some of them)."""
    defaults = {"alias": "", "title": "", "expires_at": "", "redirect_type": "302"}
    return post_form(dep, sess, "/", home_html, {"long_url": long_url, **defaults, **fields})


def login(dep: Deployment, username: str, password: str) -> requests.Session:
    """A browser-like session signed in through the login form (CSRF cookie + token)."""
    sess = dep.session()
    page = sess.get(dep.url("/accounts/login/"), timeout=HTTP_TIMEOUT)
    assert page.status_code == 200, f"GET /accounts/login/ → {page.status_code}: {page.text[:500]}"
    response = post_form(
        dep, sess, "/accounts/login/", page.text, {"username": username, "password": password}
    )
    assert response.status_code == 302, (
        f"login as {username} answered {response.status_code} (expected 302 to the home page); "
        f"cookies={sorted(sess.cookies.keys())}; body: {response.text[:800]}"
    )
    return sess


# --- requests shared with bench/ -----------------------------------------------------------------


def largest_spans(code: str, tag: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """(what, path, params, who) of the largest time span each stats family accepts today, for
    the link `code` and the tag `tag` (security round 3, finding 2). One list for the two that
    measure them, so that they measure the same requests: over HTTP test_span_limits.py, and
    in-process bench/span_cost.py (docs/analytics.md, "Span limits").

    `who` says whose request it is: "bitly" (`Authorization: Bearer <key>`), "token" (the stats
    API's `Token <key>`), "shlink" (`X-Api-Key`), "owner" (signed in as the link's owner),
    "staff" (signed in as a staff user: the overview)."""
    today = datetime.now(UTC).date()
    # A day short of the most, whatever the server's time zone makes of "today".
    days = (today - date(2000, 1, 1)).days
    months = (today.year - 2000) * 12 + today.month - 1
    bitly = f"/v4/bitlinks/bit.ly/{code}/clicks"
    a_year_ago = datetime.now(UTC) - timedelta(days=365)
    year = {"start": a_year_ago.strftime("%Y-%m-%dT%H:00:00Z"), "bucket": "hour"}
    days_since_2000 = {"start": "2000-01-01T00:00:00Z", "bucket": "day"}
    since_2000 = {"range": "custom", "start": "2000-01-01", "end": str(today)}
    return [
        ("Bitly 10,000 hours", bitly, {"unit": "hour", "units": 10000}, "bitly"),
        (f"Bitly {days:,} days", bitly, {"unit": "day", "units": days}, "bitly"),
        (f"Bitly {days // 7:,} weeks", bitly, {"unit": "week", "units": days // 7}, "bitly"),
        (f"Bitly {months} months", bitly, {"unit": "month", "units": months}, "bitly"),
        (
            "Bitly summary, 10,000 hours",
            bitly + "/summary",
            {"unit": "hour", "units": 10000},
            "bitly",
        ),
        ("stats API, a year of hours", f"/api/v1/links/{code}/stats/", year, "token"),
        (
            "stats API, days since 2000",
            f"/api/v1/links/{code}/stats/",
            {**days_since_2000, "limit": "all"},
            "token",
        ),
        ("tag stats API, a year of hours", f"/api/v1/tags/{tag}/stats/", year, "token"),
        ("tag stats API, days since 2000", f"/api/v1/tags/{tag}/stats/", days_since_2000, "token"),
        ("stats page since 2000", f"/dashboard/links/{code}/", since_2000, "owner"),
        ("tag page since 2000", f"/dashboard/tags/{tag}/", since_2000, "owner"),
        ("overview since 2000", "/dashboard/overview/", since_2000, "staff"),
        (
            "Shlink visits since 2000",
            f"/rest/v3/short-urls/{code}/visits",
            {"startDate": "2000-01-01T00:00:00Z"},
            "shlink",
        ),
        ("visits CSV (every visit)", f"/dashboard/links/{code}/visits.csv", {}, "owner"),
    ]
