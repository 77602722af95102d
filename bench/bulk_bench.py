"""Bulk and single shortening over HTTP under `make serve`, services mode (MariaDB + Redis).

Starts the product the production way (`make serve`: migrate, collectstatic, granian with
WEB_CONCURRENCY processes x WEB_THREADS threads) against a fresh MariaDB database
`shorturl_bench_bulk_<pid>` on 127.0.0.1:3306 (root, no password) and a private `redis-server`
on a free loopback port; the shared Redis on 6379 is never touched. For each code strategy
(SHORTURL_CODE_STRATEGY: pool, sequence, hash) the server is restarted with that setting, then:

- bulk: `POST /api/v1/links/bulk/` with BULK_MAX_ITEMS distinct URLs per call, `--rounds`
  calls from one client one after the other (links/s per call, median and overall), then the
  same from `--clients` clients at once (overall links/s);
- single: `--single` calls of `POST /api/v1/links/` with distinct URLs from one client
  (creates/s, p50 and p99 latency).

The pool is filled beforehand (as the Celery worker keeps it in production), so no call pays for
an inline refill; no worker runs, so nothing else competes for the CPU. The write throttle is
lifted (API_WRITE_RATE) for the benchmark user. Everything started is stopped and the database
dropped at the end. Loopback only.

    .venv/bin/python bench/bulk_bench.py [--rounds 5] [--clients 2] [--single 300]
        [--strategies pool,sequence,hash] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from processes import HOST, free_port, mariadb, redis_ping, start, stop, wait_until

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
BULK_GOAL = 5000.0  # links/s through the bulk API (issue #11)
KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "TERM")


class BenchError(RuntimeError):
    pass


def run(argv: list[str], env: dict, timeout: float = 180) -> str:
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout


class Proc:
    """A started process group with its log (processes.start / processes.stop)."""

    def __init__(self, argv: list[str], env: dict, log: Path):
        self.log = log
        self.popen = start(argv, env, log)

    def stop(self) -> None:
        stop(self.popen)


def healthy(port: int) -> bool:
    conn = http.client.HTTPConnection(HOST, port, timeout=5)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    finally:
        conn.close()


_SETUP = """
import json
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from links.codes.pool import pool_refill
from links.services.bulk import BULK_MAX_ITEMS
user, _ = User.objects.get_or_create(username="bulk-bench")
token, _ = Token.objects.get_or_create(user=user)
pool_refill(batch={pool})
print(json.dumps({{"token": token.key, "bulk_max": BULK_MAX_ITEMS}}))
"""

_POOL_TOP_UP = "from links.codes.pool import pool_refill; pool_refill(batch={pool})"


class Client:
    """One keep-alive HTTP connection with the API token."""

    def __init__(self, port: int, token: str):
        self.conn = http.client.HTTPConnection(HOST, port, timeout=120)
        self.headers = {
            "Authorization": f"Token {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }

    def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.conn.request("POST", path, body=body, headers=self.headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.conn.close()


def bulk_body(tag: str, count: int) -> bytes:
    items = [{"long_url": f"https://www.example.com/{tag}/item-{i}?utm=b"} for i in range(count)]
    return json.dumps({"items": items}).encode()


def check_bulk(status: int, payload: bytes, count: int) -> None:
    if status != 200:
        raise BenchError(f"bulk call answered {status}: {payload[:500]!r}")
    body = json.loads(payload)
    if body["created"] != count:
        raise BenchError(f"bulk call created {body['created']} of {count}: {payload[:500]!r}")


def bench_bulk(port: int, token: str, *, tag: str, batch: int, rounds: int, clients: int):
    """(per-call links/s for sequential calls, overall links/s with `clients` at once)."""
    client = Client(port, token)
    try:
        body = bulk_body(f"{tag}-warm", batch)
        check_bulk(*client.post("/api/v1/links/bulk/", body), batch)  # warm-up, not counted
        rates = []
        for round_no in range(rounds):
            body = bulk_body(f"{tag}-seq{round_no}", batch)
            started = time.perf_counter()
            status, payload = client.post("/api/v1/links/bulk/", body)
            elapsed = time.perf_counter() - started
            check_bulk(status, payload, batch)
            rates.append(batch / elapsed)
            print(f"  bulk call {round_no + 1}: {batch} links in {elapsed:.3f} s", flush=True)
    finally:
        client.close()

    bodies = [
        [bulk_body(f"{tag}-par{c}-{r}", batch) for r in range(rounds)] for c in range(clients)
    ]
    errors: list[BaseException] = []
    barrier = threading.Barrier(clients + 1)

    def worker(mine: list[bytes]) -> None:
        conn = Client(port, token)
        try:
            conn.post("/api/v1/links/bulk/", b'{"items": [{"long_url": "https://example.com/"}]}')
            barrier.wait()
            for body in mine:
                check_bulk(*conn.post("/api/v1/links/bulk/", body), batch)
        except BaseException as exc:  # reported after the join
            errors.append(exc)
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=worker, args=(b,)) for b in bodies]
    for thread in threads:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise BenchError(f"concurrent bulk calls failed: {errors[0]!r}")
    return rates, clients * rounds * batch / elapsed


def bench_single(port: int, token: str, *, tag: str, count: int):
    """(creates/s, latencies in ms) for `count` sequential single creates."""
    client = Client(port, token)
    latencies = []
    try:
        warm = json.dumps({"long_url": f"https://www.example.com/{tag}/warm"}).encode()
        client.post("/api/v1/links/", warm)
        bodies = [
            json.dumps({"long_url": f"https://www.example.com/{tag}/one-{i}"}).encode()
            for i in range(count)
        ]
        started = time.perf_counter()
        for body in bodies:
            t0 = time.perf_counter()
            status, payload = client.post("/api/v1/links/", body)
            latencies.append((time.perf_counter() - t0) * 1000)
            if status != 201:
                raise BenchError(f"single create answered {status}: {payload[:300]!r}")
        elapsed = time.perf_counter() - started
    finally:
        client.close()
    return count / elapsed, latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="bulk calls per client")
    parser.add_argument("--clients", type=int, default=2, help="concurrent bulk clients")
    parser.add_argument("--single", type=int, default=300, help="single creates per strategy")
    parser.add_argument("--strategies", default="pool,sequence,hash")
    parser.add_argument("--processes", type=int, default=2, help="WEB_CONCURRENCY")
    parser.add_argument("--threads", type=int, default=4, help="WEB_THREADS")
    parser.add_argument("--timeout", type=float, default=900, help="give up after (s)")
    parser.add_argument("--json", help="write the result rows here")
    args = parser.parse_args()
    for tool in ("mariadb", "redis-server", "make"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed")
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]

    # Stop (and clean up) when the whole run takes too long, whatever it is doing.
    def too_long(signum, frame):
        raise BenchError(f"the benchmark took longer than {args.timeout:.0f} s")

    signal.signal(signal.SIGALRM, too_long)
    signal.alarm(int(args.timeout))

    load_before = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="shorturl-bulk-bench-"))
    database = f"shorturl_bench_bulk_{os.getpid()}"
    base_env = {k: os.environ[k] for k in KEEP_ENV if k in os.environ}
    redis_port = free_port()
    redis = None
    server = None
    rows: list[dict] = []
    table: list[tuple[str, str, str, str]] = []
    try:
        redis = Proc(
            [
                shutil.which("redis-server"),
                "--port",
                str(redis_port),
                "--bind",
                HOST,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--protected-mode",
                "yes",
            ],
            base_env,
            workdir / "redis.log",
        )
        wait_until(
            lambda: redis_ping(redis_port), timeout=20, what="redis-server", proc=redis.popen
        )
        mariadb(
            f"DROP DATABASE IF EXISTS `{database}`; CREATE DATABASE `{database}` "
            "CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
        )
        port = free_port()
        env = base_env | {
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-secret-key-" + os.urandom(16).hex(),
            "DATABASE_URL": f"mysql://root@{HOST}:3306/{database}",
            "REDIS_URL": f"redis://{HOST}:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://{HOST}:{redis_port}/1",
            "STATIC_ROOT": str(workdir / "static"),
            "WEB_CONCURRENCY": str(args.processes),
            "WEB_THREADS": str(args.threads),
            "LOG_LEVEL": "WARNING",
            "SHOW_DEV_WARNING": "0",
            "API_WRITE_RATE": "1000000/min",
            "HOST": HOST,
            "PORT": str(port),
        }
        token, bulk_max = "", 0
        for index, strategy in enumerate(strategies):
            senv = env | {"SHORTURL_CODE_STRATEGY": strategy}
            print(f"== {strategy}: starting make serve on port {port}", flush=True)
            server = Proc(
                ["make", "--no-print-directory", "serve", f"HOST={HOST}", f"PORT={port}"],
                senv,
                workdir / f"serve-{strategy}.log",
            )
            wait_until(lambda: healthy(port), timeout=180, what="make serve", proc=server.popen)
            # Enough pool codes for every call (the worker's job in production).
            need = (1 + args.rounds * (1 + args.clients)) * 1000 + args.single + 2000
            manage = [PYTHON, "manage.py", "shell", "-c"]
            if index == 0:
                out = run([*manage, _SETUP.format(pool=need)], senv, timeout=300)
                info = json.loads(out.strip().splitlines()[-1])
                token, bulk_max = info["token"], info["bulk_max"]
            elif strategy == "pool":
                run([*manage, _POOL_TOP_UP.format(pool=need)], senv, timeout=300)

            rates, parallel = bench_bulk(
                port,
                token,
                tag=strategy,
                batch=bulk_max,
                rounds=args.rounds,
                clients=args.clients,
            )
            seq_rate = statistics.median(rates)
            for target, value in (
                (f"bulk links/s, {strategy}, 1 client, {bulk_max}/call (median)", seq_rate),
                (
                    f"bulk links/s, {strategy}, {args.clients} clients at once, {bulk_max}/call",
                    parallel,
                ),
            ):
                met = value >= BULK_GOAL
                measured = f"{value:,.0f} links/s"
                rows.append(
                    {"target": target, "measured": measured, "goal": ">= 5,000", "met": met}
                )
                table.append((target, measured, ">= 5,000", "yes" if met else "NO"))
            if args.single:
                per_s, lat = bench_single(port, token, tag=strategy, count=args.single)
                target = f"single create, {strategy}, 1 client ({args.single} calls)"
                measured = (
                    f"{per_s:,.0f}/s, p50 {percentile(lat, 50):.1f} ms, "
                    f"p99 {percentile(lat, 99):.1f} ms"
                )
                goal = "reported; every call 201"
                rows.append({"target": target, "measured": measured, "goal": goal, "met": True})
                table.append((target, measured, goal, "yes"))
            server.stop()
            server = None
    finally:
        signal.alarm(0)
        if server is not None:
            server.stop()
        if redis is not None:
            redis.stop()
        with contextlib.suppress(BenchError, subprocess.TimeoutExpired):
            mariadb(f"DROP DATABASE IF EXISTS `{database}`")

    widths = [max(len(row[i]) for row in table) for i in range(4)]
    header = ("target", "measured", "goal", "met")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    for row in (header, tuple("-" * w for w in widths), *table):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    print(
        f"(make serve: {args.processes} processes x {args.threads} threads, MariaDB + private "
        f"Redis, {os.cpu_count()} CPUs; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after: other work on the machine slows every figure)"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
