"""Redirect throughput of shorturl against a bare WSGI 302 app, measured side by side.

Both run on gunicorn with the same worker count and are loaded by wrk in alternating rounds,
so machine noise hits both; the figure that matters is the ratio. With Redis reachable the
shorturl server runs in services mode (cache and visit buffer in Redis), and the script checks
that every answered redirect left exactly one visit in the buffer.

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
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--links", type=int, default=200)
    parser.add_argument("--json", help="write the results here as JSON")
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
    services = redis_available()
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
    setup = (
        "from django.contrib.auth.models import User\n"
        "from links import services\n"
        "u = User.objects.create_user('bench')\n"
        "codes = [services.shorten(u, f'https://example.com/p/{i}').link.code\n"
        f"         for i in range({args.links})]\n"
        "import json; print(json.dumps(codes))\n"
    )
    out = subprocess.run(
        [*manage, "shell", "-c", setup],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    codes = json.loads(out.strip().splitlines()[-1])
    script = workdir / "codes.lua"
    script.write_text(
        "local codes = {" + ",".join(f'"{c}"' for c in codes) + "}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i + 1\n"
        "  return wrk.format('GET', '/' .. codes[(i % #codes) + 1])\n"
        "end\n"
    )

    bare = start_gunicorn("bench.bare_wsgi:application", 8101, args.workers, env)
    app = start_gunicorn("shorturl_project.wsgi:application", 8102, args.workers, env)
    results = {"bare": [], "shorturl": []}
    redirects_answered = 0
    try:
        wait_for(8101, "/")
        wait_for(8102, f"/{codes[0]}")
        # Warm every cache entry once before measuring.
        run_wrk("http://127.0.0.1:8102", 2, 4, str(script))
        if services:
            redis.Redis.from_url(REDIS_URL).delete(*redis.Redis.from_url(REDIS_URL).keys("*visit*"))
        for round_no in range(1, args.rounds + 1):
            bare_rps, _ = run_wrk("http://127.0.0.1:8101/x", args.seconds, args.connections, None)
            app_rps, answered = run_wrk(
                "http://127.0.0.1:8102", args.seconds, args.connections, str(script)
            )
            redirects_answered += answered
            results["bare"].append(bare_rps)
            results["shorturl"].append(app_rps)
            print(
                f"round {round_no}: bare WSGI {bare_rps:8.0f} req/s   shorturl {app_rps:8.0f} req/s"
                f"   ratio {app_rps / bare_rps:.2f}",
                flush=True,
            )
    finally:
        for proc in (bare, app):
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)

    best_bare, best_app = max(results["bare"]), max(results["shorturl"])
    summary = {
        "mode": mode,
        "workers": args.workers,
        "connections": args.connections,
        "seconds": args.seconds,
        "bare_rps": results["bare"],
        "shorturl_rps": results["shorturl"],
        "ratio_of_medians": sorted(results["shorturl"])[len(results["shorturl"]) // 2]
        / sorted(results["bare"])[len(results["bare"]) // 2],
        "ratio_of_best": best_app / best_bare,
    }
    if services:
        client = redis.Redis.from_url(REDIS_URL)
        buffered = sum(client.llen(k) for k in client.keys("*visit*") if client.type(k) == b"list")
        summary["visits_buffered"] = buffered
        summary["redirects_answered"] = redirects_answered
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
