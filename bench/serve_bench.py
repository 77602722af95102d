"""Redirects under `make serve` in the embedded mode, with every visit stored, against baselines.

Starts, each with the same server settings (granian, WEB_CONCURRENCY processes x WEB_THREADS
threads): the product through scripts/serve (migrate, collectstatic, granian) on a fresh SQLite
file; a bare WSGI app answering 302; and nginx `return 302` when nginx is installed.
Each is loaded by wrk for a few rounds (so machine noise hits all of them) and the ratios are
the figures to quote. Afterwards it waits for the background runner and compares the visits
stored with the redirects wrk saw answered (wrk stops with a request or so in flight per
connection, so a few more may be stored, never fewer).

    .venv/bin/python bench/serve_bench.py [--seconds 10] [--rounds 3] [--connections 16]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workload import create_links, wrk_script

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(port: int, timeout: float = 90) -> None:
    """Until the server on `port` answers anything (a redirect is not followed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"nothing answered on port {port} within {timeout} s")


def start(argv: list[str], env: dict, log: Path) -> subprocess.Popen:
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def wrk(url: str, seconds: int, connections: int, script: Path | None = None) -> tuple[float, int]:
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s"]
    if script:
        argv += ["-s", str(script)]
    out = subprocess.run([*argv, url], capture_output=True, text=True, check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if errors:
        raise RuntimeError(f"{url}: {errors.group(1)} error responses\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return rps, int(re.search(r"(\d+) requests in", out).group(1))


def nginx(port: int, workdir: Path) -> subprocess.Popen | None:
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(binary).exists():
        return None
    conf = workdir / "nginx.conf"
    conf.write_text(
        f"worker_processes 2; pid {workdir}/nginx.pid; error_log {workdir}/nginx.err;\n"
        "events { worker_connections 1024; }\n"
        f"http {{ access_log off; server {{ listen 127.0.0.1:{port};\n"
        "  location / { return 302 https://example.com/landing; } } }\n"
    )
    return start(
        [binary, "-p", str(workdir), "-c", str(conf), "-g", "daemon off;"],
        {},
        workdir / "nginx.log",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--processes", type=int, default=2, help="WEB_CONCURRENCY")
    parser.add_argument("--threads", type=int, default=4, help="WEB_THREADS")
    parser.add_argument("--links", type=int, default=200)
    parser.add_argument("--json", help="write the summary here as JSON")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install wrk")

    workdir = Path(tempfile.mkdtemp(prefix="shorturl-serve-bench-"))
    database = workdir / "db.sqlite3"
    ports = {"shorturl": free_port(), "bare WSGI 302": free_port(), "nginx return 302": free_port()}
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "CELERY_BROKER_URL"}} | {
        "SHOW_DEV_WARNING": "0",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-bench-only-secret-key",
        "DATABASE_URL": f"sqlite:///{database}",
        "STATIC_ROOT": str(workdir / "static"),
        "WEB_CONCURRENCY": str(args.processes),
        "WEB_THREADS": str(args.threads),
        "LOG_LEVEL": "WARNING",
        "PYTHON": PYTHON,
    }
    procs = {
        "shorturl": start(
            ["scripts/serve"], env | {"PORT": str(ports["shorturl"])}, workdir / "serve.log"
        ),
        "bare WSGI 302": start(
            [
                PYTHON,
                "-m",
                "granian",
                "--interface",
                "wsgi",
                "--workers",
                str(args.processes),
                "--blocking-threads",
                str(args.threads),
                "--port",
                str(ports["bare WSGI 302"]),
                "bench.bare_wsgi:application",
            ],
            env | {"PORT": str(ports["bare WSGI 302"])},
            workdir / "bare.log",
        ),
    }
    server = nginx(ports["nginx return 302"], workdir)
    if server is not None:
        procs["nginx return 302"] = server
    rps: dict[str, list[float]] = {name: [] for name in procs}
    answered = 0
    try:
        for name in procs:
            wait_for(ports[name])
        codes = create_links(args.links, env)
        script = wrk_script(codes, workdir / "codes.lua")
        shorturl = f"http://127.0.0.1:{ports['shorturl']}"
        answered += wrk(shorturl, 2, 4, script)[1]  # warm every process's cache
        for round_no in range(1, args.rounds + 1):
            line = []
            for name in procs:
                url = f"http://127.0.0.1:{ports[name]}/x"
                if name == "shorturl":
                    value, count = wrk(shorturl, args.seconds, args.connections, script)
                    answered += count
                else:
                    value, _ = wrk(url, args.seconds, args.connections)
                rps[name].append(value)
                line.append(f"{name} {value:8.0f}")
            print(f"round {round_no}: " + "   ".join(line) + "  req/s", flush=True)
        stored, waited = 0, 0.0
        started = time.monotonic()
        while time.monotonic() - started < 60:
            with sqlite3.connect(database, timeout=30) as db:
                stored = db.execute("SELECT COUNT(*) FROM analytics_visitrecord").fetchone()[0]
            if stored >= answered:
                break
            time.sleep(0.5)
        waited = time.monotonic() - started
    finally:
        for proc in procs.values():
            stop(proc)

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    baseline = median(rps["nginx return 302"]) if "nginx return 302" in rps else None
    bare = median(rps["bare WSGI 302"])
    summary = {
        "mode": "embedded (SQLite, visit spool, background runner), make serve",
        "processes": args.processes,
        "threads": args.threads,
        "connections": args.connections,
        "seconds": args.seconds,
        "req_per_s": rps,
        "median_ratio_to_nginx": (
            {name: round(median(values) / baseline, 3) for name, values in rps.items()}
            if baseline
            else None
        ),
        "median_ratio_to_bare_wsgi": {
            name: round(median(values) / bare, 3) for name, values in rps.items()
        },
        "redirects_answered_per_wrk": answered,
        "visits_stored": stored,
        "seconds_until_stored": round(waited, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    if stored < answered:
        sys.exit(f"LOST VISITS: {answered - stored} of {answered} answered redirects not stored")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
