"""What every benchmark does to the processes it starts: spare loopback ports, process groups
started with their output in a log and stopped with everything they spawned, waiting until
something answers, throw-away MariaDB databases and redis-servers."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start(argv: list[str], env: dict, log: Path) -> subprocess.Popen:
    """Start `argv` in its own process group (so stop() reaches its children), output to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM the process group, SIGKILL it after 30 s."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def wait_until(
    probe: Callable[[], object],
    *,
    timeout: float,
    what: str,
    proc: subprocess.Popen | None = None,
):
    """The first truthy value of `probe()` (connection errors count as not yet); raises after
    `timeout` seconds, or at once when `proc` has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: the process exited with {proc.returncode}")
        try:
            value = probe()
        except (OSError, http.client.HTTPException):
            value = None
        if value:
            return value
        time.sleep(0.3)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


def answers_http(port: int, path: str = "/healthz") -> bool:
    """True once anything answers `path` on `port` (a redirect is not followed)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=2)
    try:
        conn.request("GET", path)
        conn.getresponse().read()
        return True
    finally:
        conn.close()


def mariadb(sql: str) -> str:
    """Run SQL on the local MariaDB as root (throw-away bench databases only)."""
    return subprocess.run(
        ["mariadb", "-uroot", f"-h{HOST}", "-N", "-e", sql],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout.strip()


def redis_ping(port: int) -> bool:
    with socket.create_connection((HOST, port), timeout=1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64).startswith(b"+PONG")


def start_redis(workdir: Path) -> tuple[subprocess.Popen, int]:
    """A throw-away redis-server on a spare loopback port, no persistence; never the shared one."""
    port = free_port()
    directory = workdir / f"redis-{port}"
    directory.mkdir(parents=True, exist_ok=True)
    proc = start(
        [
            "redis-server",
            "--bind",
            HOST,
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(directory),
        ],
        {"PATH": os.environ.get("PATH", "")},
        workdir / "redis.log",
    )
    wait_until(lambda: redis_ping(port), timeout=20, what="redis-server", proc=proc)
    return proc, port
