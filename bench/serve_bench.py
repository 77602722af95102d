"""Redirects under `make serve` in both modes, with every visit stored, against baselines.

Starts, each with the same server settings (granian, WEB_CONCURRENCY processes x WEB_THREADS
threads) and all on loopback:

- nginx `return 302` (when nginx is installed) and a bare WSGI app answering 302: the ceilings;
- the product in the embedded mode (scripts/serve on a fresh SQLite file, background runner);
- the product in services mode (scripts/serve on a fresh MariaDB database and a throw-away
  redis-server, with a Celery worker and beat started the way `make worker`/`make beat` do).

Each contender is loaded by wrk in turn, for a few rounds, so machine noise hits all of them;
the ratios are the figures to quote. Then, in each mode, gated links: with targeting rules, and
with a visit cap never reached (rows beside the plain figure of the same run); services mode
with its Celery worker paused; in each mode, unknown codes of both shapes (made-up codes of the
generated shape never repeated); and in services mode a cold cache over `--cold-links` links.
Afterwards it waits until the visits stored equal the redirects wrk saw answered (wrk stops
with a request or so in flight per connection, so a few more may be stored, never fewer),
reports the resident memory of every web and Celery worker process, and stops everything it
started.

    .venv/bin/python bench/serve_bench.py [--seconds 8] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import answers_http, free_port, mariadb, start, stop, wait_until
from workload import (
    DESKTOP_CHROME,
    GATED_OPTIONS,
    create_gated_links,
    create_links,
    shell_json,
    wrk_fresh_codes_script,
    wrk_script,
)

ROOT = Path(__file__).resolve().parent.parent
# The bare WSGI app behind the product's server front (RSGI, bodies read before a thread is
# taken: shorturl_project/bodies.py): against "bare WSGI 302", what the front costs.
BARE_FRONT = "bare WSGI 302, RSGI front"
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))


def wrk(
    url: str, seconds: int, connections: int, script: Path | None = None, *, errors_ok=False
) -> dict:
    argv = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency"]
    if script:
        argv += ["-s", str(script)]
    out = subprocess.run([*argv, url], capture_output=True, text=True, check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if errors and not errors_ok:
        raise RuntimeError(f"{url}: {errors.group(1)} error responses\n{out}")
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "count": int(re.search(r"(\d+) requests in", out).group(1)),
        "p99_ms": float(p99.group(1)) * scale[p99.group(2)] if p99 else None,
    }


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


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found.append(child)
            queue.append(child)
    return found


def rss_mib(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    return round(int(match.group(1)) / 1024, 1) if match else None


def python_rss(proc: subprocess.Popen) -> list[float]:
    """RSS of every Python process in `proc`'s tree (granian's workers, Celery's children)."""
    values = []
    for pid in [proc.pid, *descendants(proc.pid)]:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"python" in cmdline.split(b"\0")[0] or b"granian" in cmdline or b"celery" in cmdline:
            value = rss_mib(pid)
            if value is not None:
                values.append(value)
    return values


def unknown_aliases(count: int) -> list[str]:
    """Alias-shaped words no link has."""
    rng = random.Random(11)
    return [f"no-such-campaign-{rng.randrange(10**9)}" for _ in range(count)]


_CODE_LENGTH = "from django.conf import settings; print(settings.SHORTURL_CODE_LENGTH)"


def wait_for(port: int, proc: subprocess.Popen) -> None:
    wait_until(lambda: answers_http(port), timeout=120, what=f"a server on port {port}", proc=proc)


def median(values: list[float]) -> float:
    return statistics.median(values)


def wait_stored(bench: Bench, mode: str, answered: int, timeout: float = 120) -> float:
    """Seconds until `mode` has stored as many visits as were answered (at most `timeout`)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout and bench.stored(mode) < answered:
        time.sleep(0.5)
    return round(time.monotonic() - started, 1)


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.workdir = Path(tempfile.mkdtemp(prefix="shorturl-serve-bench-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.cleanups: list = []
        self.base_env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"REDIS_URL", "CELERY_BROKER_URL", "DATABASE_URL", "NODE_STATE_DIR"}
        } | {
            "SHOW_DEV_WARNING": "0",
            "DEBUG": "0",
            "SECRET_KEY": "bench-only-secret-key-bench-only-secret-key",
            "WEB_CONCURRENCY": str(args.processes),
            "WEB_THREADS": str(args.threads),
            "LOG_LEVEL": "WARNING",
            "PYTHON": PYTHON,
            # Every request comes from 127.0.0.1: the per-client limit on 404s would answer the
            # unknown-code rounds with 429s, which is not the path they measure.
            "SHORTURL_NOT_FOUND_RATE": "",
        }
        self.env: dict[str, dict] = {}
        self.ports: dict[str, int] = {}

    def serve(self, name: str, env: dict) -> None:
        self.ports[name] = free_port()
        # Each server collects its own static files: two collectstatic runs into one
        # directory trip over each other's compressed files.
        env = env | {"STATIC_ROOT": str(self.workdir / f"static-{name}")}
        self.env[name] = env
        self.procs[name] = start(
            ["scripts/serve"], env | {"PORT": str(self.ports[name])}, self.workdir / f"{name}.log"
        )

    def start_embedded(self) -> None:
        database = self.workdir / "embedded.sqlite3"
        self.serve("embedded", self.base_env | {"DATABASE_URL": f"sqlite:///{database}"})

    def start_services(self) -> None:
        redis_port = free_port()
        redis_dir = self.workdir / "redis"
        redis_dir.mkdir()
        self.procs["redis"] = start(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(redis_dir),
            ],
            {},
            self.workdir / "redis.log",
        )
        database = f"shorturl_bench_serve_{os.getpid()}"
        mariadb(f"DROP DATABASE IF EXISTS {database}; CREATE DATABASE {database}")
        self.cleanups.append(lambda: mariadb(f"DROP DATABASE IF EXISTS {database}"))
        self.database = database
        env = self.base_env | {
            "DATABASE_URL": f"mysql://root@127.0.0.1:3306/{database}",
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/1",
            "NODE_STATE_DIR": str(self.workdir / "services-node"),
        }
        self.redis_port = redis_port
        time.sleep(0.5)
        self.serve("services", env)
        wait_for(self.ports["services"], self.procs["services"])  # migrated before the worker
        celery = str(Path(PYTHON).with_name("celery"))
        self.procs["worker"] = start(
            [celery, "-A", "shorturl_project", "worker", "--loglevel=warning"],
            env,
            self.workdir / "worker.log",
        )
        self.procs["beat"] = start(
            [
                celery,
                "-A",
                "shorturl_project",
                "beat",
                "--loglevel=warning",
                f"--schedule={self.workdir / 'celerybeat-schedule'}",
            ],
            env,
            self.workdir / "beat.log",
        )

    def stored(self, mode: str) -> int:
        if mode == "embedded":
            with sqlite3.connect(self.workdir / "embedded.sqlite3", timeout=30) as db:
                return db.execute("SELECT COUNT(*) FROM analytics_visitrecord").fetchone()[0]
        return self.count("analytics_visitrecord")

    def count(self, table: str) -> int:
        """Rows in a table of the bench's own services database."""
        return int(mariadb(f"SELECT COUNT(*) FROM {self.database}.{table}"))  # noqa: S608

    def stop_all(self) -> None:
        for proc in reversed(list(self.procs.values())):
            stop(proc)
        for cleanup in self.cleanups:
            try:
                cleanup()
            except Exception as exc:  # report and go on stopping
                print(f"cleanup failed: {exc}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--processes", type=int, default=2, help="WEB_CONCURRENCY")
    parser.add_argument("--threads", type=int, default=4, help="WEB_THREADS")
    parser.add_argument("--links", type=int, default=200)
    parser.add_argument("--cold-links", type=int, default=100_000)
    parser.add_argument("--modes", default="embedded,services")
    parser.add_argument("--json", help="write the rows and the raw figures here as JSON")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install wrk")
    modes = [mode for mode in args.modes.split(",") if mode]

    bench = Bench(args)
    raw: dict[str, dict] = {}
    answered = dict.fromkeys(modes, 0)
    stored: dict[str, int] = {}
    extra: dict[str, dict] = {}
    rss: dict[str, list[float]] = {}
    try:
        bare_port = free_port()
        bench.ports["bare WSGI 302"] = bare_port
        bench.procs["bare WSGI 302"] = start(
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
                str(bare_port),
                "bench.bare_wsgi:application",
            ],
            bench.base_env,
            bench.workdir / "bare.log",
        )
        front_port = free_port()
        bench.ports[BARE_FRONT] = front_port
        bench.procs[BARE_FRONT] = start(
            [
                *(PYTHON, "-m", "granian", "--interface", "rsgi", "--no-ws"),
                *("--workers", str(args.processes), "--port", str(front_port)),
                "bench.bare_front:application",
            ],
            bench.base_env,
            bench.workdir / "bare-front.log",
        )
        nginx_port = free_port()
        server = nginx(nginx_port, bench.workdir)
        if server is not None:
            bench.procs["nginx return 302"] = server
            bench.ports["nginx return 302"] = nginx_port
        if "embedded" in modes:
            bench.start_embedded()
        if "services" in modes:
            bench.start_services()
        contenders = [
            name
            for name in ("nginx return 302", "bare WSGI 302", BARE_FRONT, *modes)
            if name in bench.procs
        ]
        for name in contenders:
            wait_for(bench.ports[name], bench.procs[name])
        scripts: dict[str, Path] = {}
        gated_scripts: dict[tuple[str, str], Path] = {}
        for mode in modes:
            codes = create_links(args.links, bench.env[mode])
            scripts[mode] = wrk_script(codes, bench.workdir / f"{mode}-codes.lua")
            # Made now, while nothing writes: after the rounds the embedded runner is still
            # rolling their visits up, and SQLite's one writer lock made this create time out.
            for kind in GATED_OPTIONS:
                codes = create_gated_links(kind, args.links, bench.env[mode])
                gated_scripts[mode, kind] = wrk_script(
                    codes, bench.workdir / f"{mode}-{kind}.lua", DESKTOP_CHROME
                )
            url = f"http://127.0.0.1:{bench.ports[mode]}"
            answered[mode] += wrk(url, 2, 8, scripts[mode])["count"]  # warm every worker

        raw = {name: {"rps": [], "p99_ms": []} for name in contenders}
        quiesced: dict[str, list[float]] = {mode: [] for mode in modes}
        for round_no in range(1, args.rounds + 1):
            line = []
            for name in contenders:
                url = f"http://127.0.0.1:{bench.ports[name]}"
                if name in modes:
                    result = wrk(url, args.seconds, args.connections, scripts[name])
                    answered[name] += result["count"]
                    # Let this mode store its visits before the next contender runs: a backlog
                    # being stored in the background would slow whichever is measured next.
                    quiesced[name].append(wait_stored(bench, name, answered[name]))
                else:
                    result = wrk(url + "/x", args.seconds, args.connections)
                raw[name]["rps"].append(result["rps"])
                raw[name]["p99_ms"].append(result["p99_ms"])
                line.append(f"{name} {result['rps']:7.0f} (p99 {result['p99_ms']:.1f} ms)")
            print(f"round {round_no}: " + " | ".join(line), flush=True)
        extra["seconds to store each round's visits"] = quiesced
        print(f"seconds until each round's visits were stored: {quiesced}", flush=True)

        # Gated links (issue #15), right after the plain rounds so both figures come from one
        # run: decided in serving/gates.py instead of the fused read-and-count (links with rules:
        # User-Agent parsed, address looked up, visit recorded with its destination; capped
        # links: one row UPDATE per person's click).
        for (mode, kind), script in gated_scripts.items():
            url = f"http://127.0.0.1:{bench.ports[mode]}"
            answered[mode] += wrk(url, 2, 8, script)["count"]  # warm every worker
            wait_stored(bench, mode, answered[mode])
            result = wrk(url, args.seconds, args.connections, script)
            answered[mode] += result["count"]
            wait_stored(bench, mode, answered[mode])
            extra[f"{kind} link ({mode})"] = result
            print(
                f"{mode} {kind} link: {result['rps']:.0f} req/s (p99 {result['p99_ms']:.1f} ms)",
                flush=True,
            )

        if "services" in modes:
            # The web node's own capacity: the same load with the Celery worker and beat
            # stopped (SIGSTOP), so they do not store visits on the same two cores meanwhile.
            # The visits wait in Redis and are stored once they go on (checked below).
            url = f"http://127.0.0.1:{bench.ports['services']}"
            paused = [bench.procs["worker"], bench.procs["beat"]]
            for proc in paused:
                os.killpg(proc.pid, signal.SIGSTOP)
            try:
                result = wrk(url, args.seconds, args.connections, scripts["services"])
            finally:
                for proc in paused:
                    os.killpg(proc.pid, signal.SIGCONT)
            answered["services"] += result["count"]
            extra["services, worker paused"] = result
            wait_stored(bench, "services", answered["services"])
            print(
                f"services, worker paused: {result['rps']:.0f} req/s "
                f"(p99 {result['p99_ms']:.1f} ms)",
                flush=True,
            )
        # Unknown codes, in every mode: 5,000 made-up aliases in turn, and made-up codes of the
        # generated shape with a valid check character, a new one for every request (a code
        # asked twice would be answered the second time from the negative entry the first
        # left, which is not what a flood of guesses costs).
        body_length = int(shell_json(_CODE_LENGTH, bench.env[modes[0]]))
        unknown = (
            ("unknown aliases", wrk_script(unknown_aliases(5000), bench.workdir / "aliases.lua")),
            (
                "unknown generated",
                wrk_fresh_codes_script(body_length, bench.workdir / "unknown-generated.lua"),
            ),
        )
        for mode in modes:
            url = f"http://127.0.0.1:{bench.ports[mode]}"
            for label, script in unknown:
                result = wrk(url, args.seconds, args.connections, script, errors_ok=True)
                extra[f"{label} ({mode})"] = result
                print(f"{mode} {label}: {result['rps']:.0f} req/s", flush=True)

        for mode in modes:
            started = time.monotonic()
            count = 0
            while time.monotonic() - started < 120:
                count = bench.stored(mode)
                if count >= answered[mode]:
                    break
                time.sleep(0.5)
            stored[mode] = count
            extra[f"{mode} stored after"] = {"seconds": round(time.monotonic() - started, 1)}
            print(f"{mode}: {count} visits stored for {answered[mode]} answered", flush=True)

        for name in [*modes, "worker"]:
            if name in bench.procs:
                rss[name] = python_rss(bench.procs[name])

        if "services" in modes and args.cold_links:
            extra["cold cache"] = cold_cache(bench, args)
    finally:
        bench.stop_all()

    rows = summarise(args, modes, raw, answered, stored, extra, rss)
    width = max(len(row["target"]) for row in rows)
    print()
    print(f"{'target':<{width}}  {'measured':<44}  {'goal':<24}  met")
    for row in rows:
        met = {True: "yes", False: "NO", None: "-"}[row["met"]]
        print(f"{row['target']:<{width}}  {row['measured']:<44}  {row['goal']:<24}  {met}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": rows, "raw": raw, "extra": extra, "rss_mib": rss}, indent=2)
        )
    lost = {mode: answered[mode] - stored.get(mode, 0) for mode in modes}
    if any(value > 0 for value in lost.values()):
        sys.exit(f"LOST VISITS: {lost}")
    shutil.rmtree(bench.workdir, ignore_errors=True)


def cold_cache(bench: Bench, args: argparse.Namespace) -> dict:
    """Every request a code no process or Redis has cached: `--cold-links` links bulk-created,
    Redis's link entries dropped, the web server restarted (empty process caches)."""
    env = bench.env["services"]
    script = (
        "import json\n"
        "from django.contrib.auth.models import User\n"
        "from links.services.bulk import link_create_many\n"
        "u = User.objects.create_user('cold')\n"
        "codes = []\n"
        f"for start in range(0, {args.cold_links}, 1000):\n"
        "    items = [{'long_url': f'https://example.com/cold/{i}'}\n"
        f"             for i in range(start, min(start + 1000, {args.cold_links}))]\n"
        "    result = link_create_many(user=u, items=items)\n"
        "    codes += [r.link.code for r in result if r.link is not None]\n"
        "print(json.dumps(codes))\n"
    )
    started = time.monotonic()
    codes = shell_json(script, env)
    created_seconds = time.monotonic() - started
    import redis

    client = redis.Redis(port=bench.redis_port)
    for keys in iter(lambda: client.scan(0, match="shorturl:link:*", count=10_000)[1], []):
        client.delete(*keys)
    stop(bench.procs["services"])
    bench.serve("services", env)
    wait_for(bench.ports["services"], bench.procs["services"])
    random.Random(5).shuffle(codes)
    lua = wrk_script(codes, bench.workdir / "cold.lua")
    url = f"http://127.0.0.1:{bench.ports['services']}"
    result = wrk(url, min(args.seconds, 5), args.connections, lua)
    result.update(links=len(codes), created_seconds=round(created_seconds, 1))
    print(
        f"services cold cache over {len(codes)} links: {result['rps']:.0f} req/s "
        f"(p99 {result['p99_ms']:.1f} ms)",
        flush=True,
    )
    return result


GATED_LABELS = {"rules": "link with rules", "capped": "capped link (cap never reached)"}


def summarise(args, modes, raw, answered, stored, extra, rss) -> list[dict]:
    nginx_rps = median(raw["nginx return 302"]["rps"]) if "nginx return 302" in raw else None
    rows = []

    def ratio(value: float) -> str:
        return f"{value / nginx_rps:.3f}x nginx" if nginx_rps else "no nginx"

    # The bare WSGI app's ratio is the ceiling for any WSGI app on this server and machine: what
    # a redirect that did no work at all would reach (the services target is read against it).
    for name in ("nginx return 302", "bare WSGI 302", BARE_FRONT):
        if name in raw:
            value = median(raw[name]["rps"])
            rows.append(
                {
                    "target": f"baseline: {name}",
                    "measured": f"{value:,.0f} req/s = {ratio(value)}, "
                    f"p99 {median(raw[name]['p99_ms']):.1f} ms",
                    "goal": "-",
                    "met": None,
                }
            )
    goals = {"services": (0.5, 5.0), "embedded": (0.25, None)}
    for mode in modes:
        value = median(raw[mode]["rps"])
        p99 = median(raw[mode]["p99_ms"])
        want, want_p99 = goals[mode]
        met = nginx_rps is not None and value >= want * nginx_rps
        goal = f">= {want}x nginx" + (f", p99 <= {want_p99:g} ms" if want_p99 else "")
        if want_p99:
            met = met and p99 <= want_p99
        rows.append(
            {
                "target": f"redirect, cache hit, {mode} ({args.connections} conns)",
                "measured": f"{value:,.0f} req/s = {ratio(value)}, p99 {p99:.1f} ms",
                "goal": goal,
                "met": met,
            }
        )
        rows.append(
            {
                "target": f"visits stored == redirects answered, {mode}",
                "measured": f"{stored.get(mode, 0):,} stored / {answered[mode]:,} answered",
                "goal": "stored >= answered",
                "met": stored.get(mode, 0) >= answered[mode],
            }
        )
    for mode in modes:
        for kind in GATED_OPTIONS:
            key = f"{kind} link ({mode})"
            if key not in extra:
                continue
            hit = median(raw[mode]["rps"])
            value = extra[key]["rps"]
            rows.append(
                {
                    "target": f"redirect, {GATED_LABELS[kind]}, {mode}",
                    "measured": f"{value:,.0f} req/s = {value / hit:.2f}x plain link, "
                    f"p99 {extra[key]['p99_ms']:.1f} ms",
                    "goal": "reported",
                    "met": None,
                }
            )
    if "services, worker paused" in extra:
        paused = extra["services, worker paused"]
        rows.append(
            {
                "target": "redirect, cache hit, services, worker paused (web node alone)",
                "measured": f"{paused['rps']:,.0f} req/s = {ratio(paused['rps'])}, "
                f"p99 {paused['p99_ms']:.1f} ms",
                "goal": ">= 0.5x nginx, p99 <= 5 ms",
                "met": bool(nginx_rps)
                and paused["rps"] >= 0.5 * nginx_rps
                and paused["p99_ms"] <= 5.0,
            }
        )
    for mode in modes:
        hit = median(raw[mode]["rps"])
        for label in ("unknown aliases", "unknown generated"):
            key = f"{label} ({mode})"
            if key in extra:
                value = extra[key]["rps"]
                rows.append(
                    {
                        "target": key,
                        "measured": f"{value:,.0f} req/s = {value / hit:.2f}x cache hit",
                        "goal": ">= 1x cache hit",
                        "met": value >= hit,
                    }
                )
    if "services" in modes and "cold cache" in extra:
        cold = extra["cold cache"]
        rows.append(
            {
                "target": f"cold cache over {cold['links']:,} links (services)",
                "measured": f"{cold['rps']:,.0f} req/s, p99 {cold['p99_ms']:.1f} ms",
                "goal": "reported",
                "met": None,
            }
        )
    for name, values in rss.items():
        rows.append(
            {
                "target": f"RSS per process: {name}",
                "measured": ", ".join(f"{value:.0f}" for value in sorted(values)) + " MiB",
                "goal": "reported",
                "met": None,
            }
        )
    return rows


if __name__ == "__main__":
    main()
