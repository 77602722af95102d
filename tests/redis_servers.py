"""Throw-away Redis servers for tests: started on spare loopback ports in a directory of their
own, never the shared Redis on 6379, and stopped by the test that started them."""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest


def is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_ports(count: int, *, also_free: Callable[[int], bool] = lambda port: True) -> list[int]:
    """`count` free loopback ports (each one passing `also_free` too, e.g. a cluster's bus port)."""
    ports: list[int] = []
    for port in random.sample(range(20_000, 50_000), 400):
        if is_free(port) and also_free(port):
            ports.append(port)
        if len(ports) == count:
            return ports
    pytest.skip("no free loopback ports for throw-away Redis servers")


def require(*programs: str) -> None:
    for program in programs:
        if not shutil.which(program):
            pytest.skip(f"needs {program} to start throw-away Redis servers")


def start(directory: Path, port: int, *args: str, program: str = "redis-server"):
    """A redis-server (or, with a config file among `args`, redis-sentinel) on 127.0.0.1:`port`,
    no persistence, its files in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    settings = ["--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", "."]
    return subprocess.Popen(
        [program, *args, *settings, "--appendonly", "no", "--daemonize", "no"],
        cwd=directory,
        stdout=(directory / "log").open("ab"),
        stderr=subprocess.STDOUT,
    )


def cli(port: int, *command: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(port), *command], capture_output=True, text=True, timeout=5
    ).stdout.strip()


def wait_until(condition: Callable[[], bool], *, timeout: float, what: str) -> float:
    """Poll `condition` until it holds; returns the seconds it took, fails the test if never."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.05)
    return time.monotonic() - started


def wait_answering(ports: Iterable[int], *, timeout: float = 10) -> None:
    ports = list(ports)
    wait_until(
        lambda: all(cli(port, "ping") == "PONG" for port in ports),
        timeout=timeout,
        what=f"redis on ports {ports} answering PING",
    )


def stop(processes: Iterable[subprocess.Popen]) -> None:
    processes = list(processes)
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        process.wait(timeout=10)
