"""Redirect throughput of shorturl against baselines, measured side by side in one session.

Every contender runs on gunicorn with the same worker count and is loaded by wrk in turn, round
after round, so machine noise hits all of them; the figures that matter are the ratios to the
bare WSGI 302 app. With Redis reachable, shorturl runs in services mode (cache and visit buffer
in Redis) and two more baselines join: the bare app plus one Redis RPUSH (the floor for a
redirect that keeps its visit) and DESIGN.md's stock Django view (full middleware, one
django-redis GET plus one RPUSH). The script also checks that every answered redirect left one
visit in the buffer.

    .venv/bin/python bench/redirect_bench.py [--seconds 10] [--rounds 3] [--connections 16]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from workload import create_links, wrk_script

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")


def redis_available() -> bool:
    try:
        import redis

        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
        return True
    except Exception:
        return False


def wait_for(port: int, path: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not start")


def start_gunicorn(app: str, port: int, workers: int, env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [
            PYTHON,
            "-m",
            "gunicorn",
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def run_wrk(url: str, seconds: int, connections: int, script: str | None) -> tuple[float, int]:
    cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if non2xx:
        raise RuntimeError(f"{url}: {non2xx.group(1)} error responses\n{out}")
    return float(match.group(1)), int(total.group(1))


@dataclass
class Contender:
    name: str
    app: str
    port: int
    path: str | None  # None: the short codes of the wrk script
    rps: list[float] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--links", type=int, default=200)
    parser.add_argument("--json", help="write the results here as JSON")
    parser.add_argument("--embedded", action="store_true", help="no Redis even if one is reachable")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install wrk")

    workdir = Path(tempfile.mkdtemp(prefix="shorturl-bench-"))
    env = {
        **os.environ,
        "SHOW_DEV_WARNING": "0",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-bench-only-secret-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "LOG_LEVEL": "WARNING",
    }
    services = not args.embedded and redis_available()
    if services:
        env["REDIS_URL"] = REDIS_URL
        env["CELERY_BROKER_URL"] = REDIS_URL
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
    mode = (
        "services (Redis cache + visit buffer)"
        if services
        else "embedded (visits stored in-process)"
    )

    manage = [PYTHON, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    codes = create_links(args.links, env, PYTHON)
    script = wrk_script(codes, workdir / "codes.lua")

    contenders = [
        Contender("bare WSGI 302", "bench.bare_wsgi:application", 8101, "/x"),
        Contender("shorturl", "shorturl_project.wsgi:application", 8102, None),
    ]
    if services:
        contenders[1:1] = [
            Contender("bare WSGI + 1 Redis RPUSH", "bench.redis_wsgi:application", 8103, "/x"),
            Contender("stock Django view", "bench.stock_django:application", 8104, None),
        ]
    procs = [start_gunicorn(c.app, c.port, args.workers, env) for c in contenders]
    redirects_answered = 0
    try:
        for contender in contenders:
            wait_for(contender.port, contender.path or f"/{codes[0]}")
        # Warm every cache entry once before measuring.
        run_wrk("http://127.0.0.1:8102", 2, 4, str(script))
        if services:
            client = redis.Redis.from_url(REDIS_URL)
            client.delete(*client.keys("analytics:*"))
        for round_no in range(1, args.rounds + 1):
            line = []
            for contender in contenders:
                url = f"http://127.0.0.1:{contender.port}{contender.path or ''}"
                rps, answered = run_wrk(
                    url, args.seconds, args.connections, None if contender.path else str(script)
                )
                contender.rps.append(rps)
                if contender.name == "shorturl":
                    redirects_answered += answered
                line.append(f"{contender.name} {rps:7.0f}")
            print(f"round {round_no}: " + "   ".join(line) + " req/s", flush=True)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    baseline = median(contenders[0].rps)
    summary = {
        "mode": mode,
        "workers": args.workers,
        "connections": args.connections,
        "seconds": args.seconds,
        "rounds": args.rounds,
        "req_per_s": {c.name: c.rps for c in contenders},
        "median_ratio_to_bare_wsgi": {
            c.name: round(median(c.rps) / baseline, 3) for c in contenders
        },
    }
    if services:
        summary["visits_buffered"] = client.llen("analytics:visits")
        summary["redirects_answered"] = redirects_answered
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
