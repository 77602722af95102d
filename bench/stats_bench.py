"""Stats (API and page) of a link with 1,000,000 visits against one with 1,000 (issue #11).

Builds a fresh MariaDB database `shorturl_bench_stats_<pid>` on 127.0.0.1:3306 (root, no
password), migrates it, stores two links' visits straight into VisitRecord with multi-row
INSERTs (30 days, varied countries/cities/ISPs/browsers/devices/referrers, repeat visitors,
5 % bots), rolls up the hours with the product's own `rebuild_hourly`, starts the product with
`make serve` (its own throw-away redis-server on a free loopback port) and times over HTTP, for
both links (each made when its first visit came): the stats API (token) over the default range
and 30 days, and the stats page (session login) over 7, 30 and 90 days and all time,
round-robin so machine noise hits every target alike. Prints median / p95 and the ratio 1M / 1k
of the medians (the goal is at most 2x), then each target's first view: one request after the
stats cache of closed days and weeks was emptied. Everything started is stopped and the database
dropped at the end. Loopback only.

    .venv/bin/python bench/stats_bench.py [--large 1000000] [--small 1000] [--days 30]
                                          [--reps 9] [--json PATH]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis as redis_lib
import requests
from processes import HOST, free_port, mariadb, start, start_redis, stop, wait_until

ROOT = Path(__file__).resolve().parent.parent
DATABASE = f"shorturl_bench_stats_{os.getpid()}"
PASSWORD = "bench-stats-password-1"  # noqa: S105 (a throw-away user in a throw-away database)
GOAL = 2.0
# In the cache keys of the unique visitors of closed days and weeks (analytics.selectors).
STATS_CACHE_MARK = "bucket-people"
# What the product reads from the environment: never inherited from whoever runs the bench.
_PRODUCT_PREFIXES = ("DATABASE_", "REDIS_", "CELERY_", "SHORTURL_", "ANALYTICS_", "GEOIP_")
_PRODUCT_PREFIXES += ("API_", "WEB_", "DJANGO_")
_PRODUCT_NAMES = {"DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "ALLOWED_HOSTS", "PORT", "HOST"}
_PRODUCT_NAMES |= {"PIDFILE", "VENV", "PYTHON", "STATIC_ROOT", "EMBEDDED_STATE_DIR", "MAKEFLAGS"}
_PRODUCT_NAMES |= {"MAKELEVEL", "MFLAGS", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"}


# --- the visits ---------------------------------------------------------------------------------

COUNTRIES = [
    ("United States", "US"),
    ("China", "CN"),
    ("Germany", "DE"),
    ("India", "IN"),
    ("United Kingdom", "GB"),
    ("France", "FR"),
    ("Brazil", "BR"),
    ("Japan", "JP"),
    ("Canada", "CA"),
    ("Spain", "ES"),
    ("Italy", "IT"),
    ("Mexico", "MX"),
    ("Netherlands", "NL"),
    ("Australia", "AU"),
    ("Poland", "PL"),
    ("Sweden", "SE"),
    ("Turkey", "TR"),
    ("Indonesia", "ID"),
    ("South Korea", "KR"),
    ("Argentina", "AR"),
    ("Nigeria", "NG"),
    ("Egypt", "EG"),
    ("Vietnam", "VN"),
    ("Philippines", "PH"),
    ("South Africa", "ZA"),
    ("Switzerland", "CH"),
    ("Austria", "AT"),
    ("Belgium", "BE"),
    ("Chile", "CL"),
    ("Colombia", "CO"),
    ("Kenya", "KE"),
    ("Norway", "NO"),
    ("Denmark", "DK"),
    ("Finland", "FI"),
    ("Portugal", "PT"),
    ("Ireland", "IE"),
    ("Israel", "IL"),
    ("Singapore", "SG"),
    ("Thailand", "TH"),
    ("Ukraine", "UA"),
]
# (User-Agent, browser, version, OS, OS version, device, is_bot)
AGENTS = [
    ("Windows NT 10.0; Win64; x64) Chrome/{v}", "Chrome", "", "Windows", "10", "PC"),
    ("Macintosh; Intel Mac OS X 10_15_7) Safari/{v}", "Safari", "", "Mac OS X", "10.15", "PC"),
    ("Windows NT 10.0; rv:121.0) Firefox/{v}", "Firefox", "", "Windows", "10", "PC"),
    ("Windows NT 10.0) Edg/{v}", "Edge", "", "Windows", "11", "PC"),
    ("X11; Linux x86_64) Chrome/{v}", "Chrome", "", "Linux", "", "PC"),
    ("iPhone; CPU iPhone OS 17_2) Mobile Safari/{v}", "Mobile Safari", "", "iOS", "17.2", "Mobile"),
    (
        "Linux; Android 14; Pixel 8) Chrome Mobile/{v}",
        "Chrome Mobile",
        "",
        "Android",
        "14",
        "Mobile",
    ),
    ("Linux; Android 13) SamsungBrowser/{v}", "Samsung Internet", "", "Android", "13", "Mobile"),
    ("iPhone) MicroMessenger/{v}", "WeChat", "", "iOS", "16.6", "Mobile"),
    ("iPad; CPU OS 17_1) Safari/{v}", "Mobile Safari", "", "iOS", "17.1", "Tablet"),
    ("Linux; Android 12; SM-X700) Chrome/{v}", "Chrome", "", "Android", "12", "Tablet"),
    ("PlayStation 5) Other/{v}", "Other", "", "Other", "", "Other"),
]  # "Mozilla/5.0 (" + [0]: User-Agent; then browser, (unused), OS, OS version, device
BOTS = [
    "Googlebot",
    "Slackbot-LinkExpanding",
    "Twitterbot",
    "facebookexternalhit",
    "WhatsApp",
    "TelegramBot",
    "Discordbot",
    "curl",
    "python-requests",
    "LinkedInBot",
]
REFERRER_HOSTS = [
    "t.co",
    "www.facebook.com",
    "l.facebook.com",
    "www.google.com",
    "www.linkedin.com",
    "news.ycombinator.com",
    "www.reddit.com",
    "mail.google.com",
    "outlook.live.com",
    "www.bing.com",
    "duckduckgo.com",
    "www.instagram.com",
    "m.youtube.com",
    "www.tiktok.com",
    "weibo.com",
    "www.baidu.com",
    "medium.com",
    "substack.com",
    "github.com",
    "stackoverflow.com",
    "blog.example.org",
    "partner.example.net",
]
COLUMNS = [
    *("link_id", "code", "event_id", "client_id", "client_ip", "visit_time", "user_agent"),
    *("referrer", "country", "country_code", "province", "city", "isp", "browser_type"),
    *("browser_version", "os_type", "os_version", "device_type", "is_bot", "bot_name"),
    "bot_kind",
]


def _zipf_weights(n: int, s: float = 1.1) -> list[float]:
    return [1 / (rank**s) for rank in range(1, n + 1)]


class Visitors:
    """`count` visits by a pool of visitors: each visitor has one IP, User-Agent and place."""

    def __init__(self, rnd: random.Random, visits: int):
        self.rnd = rnd
        pool = max(10, int(visits * 0.6))  # ~45 % of visits come from someone seen before
        places = []
        for country, code in COUNTRIES:
            for p in range(rnd.randint(3, 6)):
                for c in range(rnd.randint(2, 5)):
                    places.append(
                        (country, code, f"{country} region {p}", f"{country} city {p}.{c}")
                    )
        rnd.shuffle(places)
        places.append(("", "", "", ""))  # not located
        isps = [f"ISP {i} Telecom" for i in range(80)] + [""]
        self.pool = pool
        self.place = rnd.choices(places, weights=_zipf_weights(len(places), 0.9), k=pool)
        self.isp = rnd.choices(isps, weights=_zipf_weights(len(isps), 0.8), k=pool)
        self.agent = rnd.choices(range(len(AGENTS)), weights=_zipf_weights(len(AGENTS)), k=pool)
        self.bot = [rnd.random() < 0.05 for _ in range(pool)]
        self.bot_name = rnd.choices(BOTS, k=pool)
        self.version = rnd.choices(["120.0", "121.0", "119.0.2", "17.2", "118.0"], k=pool)

    def ip(self, i: int) -> str:
        digest = hashlib.blake2b(i.to_bytes(8, "big"), digest_size=4).digest()
        return f"{digest[0] % 223 + 1}.{digest[1]}.{digest[2]}.{digest[3]}"

    def rows(self, link_id: int, code: str, count: int, now: datetime, days: int):
        rnd = self.rnd
        span = days * 86400 - 120
        # Oldest first, and event ids in the same order, so the indexes grow at their ends
        # (random keys into a small buffer pool made a million rows take over ten minutes).
        ages = sorted((rnd.random() ** 0.8 * span + 60 for _ in range(count)), reverse=True)
        prefix = os.urandom(8).hex()
        for n, age in enumerate(ages):
            i = int(rnd.paretovariate(1.2) * 7919) % self.pool  # some visitors come back often
            ip = self.ip(i)
            when = now - timedelta(seconds=age)  # busier lately
            bot = None
            if self.bot[i]:
                name = self.bot_name[i]
                ua = f"{name}/1.0 (+https://example.com/bot)"
                bot = detected_bot(ua)
                browser, version, os_type, os_version, device = name, "", "Other", "", "Bot"
                referrer = ""
            else:
                template, browser, _, os_type, os_version, device = AGENTS[self.agent[i]]
                version = self.version[i]
                ua = "Mozilla/5.0 (" + template.format(v=version)
                if rnd.random() < 0.35:
                    referrer = ""
                else:
                    host = rnd.choice(REFERRER_HOSTS)
                    referrer = (
                        f"https://{host}/{rnd.choice(['', 'post/', 'r/x/'])}{rnd.randint(1, 9999)}"
                    )
            country, ccode, province, city = self.place[i]
            yield (
                link_id,
                code,
                f"{prefix}{n:016x}",
                hashlib.sha1(f"{ip}&{ua}".encode()).hexdigest(),  # noqa: S324 (the product's id)
                ip,
                when.replace(tzinfo=None),
                ua,
                referrer,
                country,
                ccode,
                province,
                city,
                self.isp[i],
                browser,
                version,
                os_type,
                os_version,
                device,
                self.bot[i],
                bot.name if bot else "",
                bot.kind if bot else "",
            )


@functools.cache
def detected_bot(user_agent: str):
    """The bot's name and kind as a flush would store them (analytics.bots)."""
    from analytics.bots import detect_bot

    return detect_bot(user_agent)


def insert_visits(connection, rows, batch: int = 5000) -> int:
    """Multi-row INSERTs (mysqlclient's executemany), one commit per batch. The rows come oldest
    first, so every index on the visits grows at its end for each link."""
    sql = "INSERT INTO analytics_visitrecord ({}) VALUES ({})".format(  # noqa: S608
        ", ".join(COLUMNS), ", ".join(["%s"] * len(COLUMNS))
    )
    with connection.cursor() as cursor:
        chunk, total = [], 0
        for row in rows:
            chunk.append(row)
            if len(chunk) == batch:
                cursor.executemany(sql, chunk)
                total += len(chunk)
                chunk = []
        if chunk:
            cursor.executemany(sql, chunk)
            total += len(chunk)
    return total


def build_data(sizes: dict[str, int], days: int, redis_url: str) -> dict:
    """Migrate, create the owner and one link per size, store visits, roll up. In-process."""
    os.environ.update(
        DATABASE_URL=f"mysql://root@{HOST}:3306/{DATABASE}",
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        SHOW_DEV_WARNING="0",
    )
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from analytics.models import VisitRecord
    from analytics.services import rebuild_hourly
    from links.models import UrlLink
    from links.services.create import link_create

    call_command("migrate", verbosity=0)
    owner = get_user_model().objects.create_user("bench-owner", password=PASSWORD)
    token = Token.objects.create(user=owner).key
    now = datetime.now(UTC)
    links = {}
    for name, count in sizes.items():
        link = link_create(user=owner, long_url=f"https://example.com/campaign/{name}").link
        # Made when its first visit came, so "all time" spans the visits, not the minutes since.
        UrlLink.objects.filter(pk=link.pk).update(created_at=now - timedelta(days=days))
        started = time.monotonic()
        rows = Visitors(random.Random(count), count).rows(link.pk, link.code, count, now, days)
        insert_visits(connection, rows)
        print(
            f"  {name}: {count:,} visits stored in {time.monotonic() - started:.1f} s", flush=True
        )
        links[name] = link
    started = time.monotonic()
    rebuild_hourly(since=now - timedelta(days=days + 1))
    print(f"  rebuild_hourly: {time.monotonic() - started:.1f} s", flush=True)
    expected = {}
    for name, link in links.items():
        expected[name] = {
            "code": link.code,
            "visits": VisitRecord.objects.filter(link=link).count(),
        }
    connection.close()
    return {"token": token, "links": expected}


# --- timing -------------------------------------------------------------------------------------


def login(base: str) -> requests.Session:
    sess = requests.Session()
    sess.trust_env = False
    sess.get(f"{base}/accounts/login/", timeout=30).raise_for_status()
    answer = sess.post(
        f"{base}/accounts/login/",
        data={
            "username": "bench-owner",
            "password": PASSWORD,
            "csrfmiddlewaretoken": sess.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/login/"},
        allow_redirects=False,
        timeout=30,
    )
    if answer.status_code != 302:
        raise RuntimeError(f"login failed: {answer.status_code} {answer.text[:300]}")
    return sess


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--processes", type=int, default=2, help="WEB_CONCURRENCY")
    parser.add_argument(
        "--timeout",
        type=float,
        default=120,
        help="seconds one request may take; a target that times out is not repeated",
    )
    parser.add_argument("--json", help="write the result rows here")
    args = parser.parse_args()
    # Started in the background, SIGINT may be ignored: either signal runs the clean-up below.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if not shutil.which("redis-server"):
        sys.exit("redis-server is needed")

    workdir = Path(tempfile.mkdtemp(prefix="shorturl-stats-bench-"))
    procs: list[subprocess.Popen] = []
    mariadb(
        f"DROP DATABASE IF EXISTS `{DATABASE}`; "
        f"CREATE DATABASE `{DATABASE}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
    )
    try:
        redis, redis_port = start_redis(workdir)
        procs.append(redis)
        redis_url = f"redis://{HOST}:{redis_port}/0"
        print(f"database {DATABASE}, redis on port {redis_port}; storing visits...", flush=True)
        data = build_data({"1k": args.small, "1M": args.large}, args.days, redis_url)

        port = free_port()
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in _PRODUCT_NAMES and not k.startswith(_PRODUCT_PREFIXES)
        }
        env.pop("VIRTUAL_ENV", None)
        env |= {
            "DATABASE_URL": f"mysql://root@{HOST}:3306/{DATABASE}",
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": f"redis://{HOST}:{redis_port}/1",
            "SECRET_KEY": os.urandom(32).hex(),
            "DEBUG": "0",
            "ALLOWED_HOSTS": f"{HOST},localhost",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "SHOW_DEV_WARNING": "0",
            "STATIC_ROOT": str(workdir / "static"),
            "WEB_CONCURRENCY": str(args.processes),
            "LOG_LEVEL": "WARNING",
            "API_READ_RATE": "100000/min",
        }
        procs.append(
            start(
                ["make", "--no-print-directory", "serve", f"HOST={HOST}", f"PORT={port}"],
                env,
                workdir / "serve.log",
            )
        )
        base = f"http://{HOST}:{port}"

        def healthy():
            if procs[-1].poll() is not None:
                raise RuntimeError("make serve exited:\n" + (workdir / "serve.log").read_text())
            return requests.get(f"{base}/healthz", timeout=5).status_code == 200

        wait_until(healthy, timeout=180, what="make serve")
        page = login(base)
        api = requests.Session()
        api.trust_env = False
        api.headers["Authorization"] = f"Token {data['token']}"

        start_30d = (datetime.now(UTC) - timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
        targets = {
            "stats API, default range (7 d)": (api, "/api/v1/links/{code}/stats/"),
            "stats API, 30 days": (api, "/api/v1/links/{code}/stats/?start=" + start_30d),
            "stats page, default range (7 d)": (page, "/dashboard/links/{code}/"),
            "stats page, 30 days": (page, "/dashboard/links/{code}/?range=30d"),
            "stats page, 90 days": (page, "/dashboard/links/{code}/?range=90d"),
            "stats page, all time": (page, "/dashboard/links/{code}/?range=all"),
        }
        times: dict[tuple[str, str], list[float]] = {}
        first: dict[tuple[str, str], float] = {}
        timed_out: set[tuple[str, str]] = set()
        for rep in range(args.reps + 1):  # round 0 warms every process up on the 1k link
            for target, (sess, path) in targets.items():
                for name, info in data["links"].items():
                    if (target, name) in timed_out or (rep == 0 and name != "1k"):
                        continue
                    url = base + path.format(code=info["code"])
                    started = time.perf_counter()
                    try:
                        answer = sess.get(url, timeout=args.timeout)
                    except requests.Timeout:
                        timed_out.add((target, name))
                        times.setdefault((target, name), []).append(args.timeout * 1000)
                        print(f"  {target}, {name}: no answer in {args.timeout:.0f} s", flush=True)
                        continue
                    elapsed = time.perf_counter() - started
                    if answer.status_code != 200:
                        raise RuntimeError(f"{url}: {answer.status_code} {answer.text[:300]}")
                    if rep == 1 and target == "stats API, 30 days":
                        body = answer.json()
                        print(
                            f"  {name}: {info['visits']:,} visits; API 30 d: total_clicks "
                            f"{body['total_clicks']:,}, unique_visitors "
                            f"{body['unique_visitors']:,}, bot_clicks {body['bot_clicks']:,}",
                            flush=True,
                        )
                    if rep:
                        times.setdefault((target, name), []).append(elapsed * 1000)
            print(f"  round {rep}/{args.reps} done", flush=True)
        # A first view: what a page costs before the stats cache holds any of the link's closed
        # days or weeks (dropped from the bench's own Redis before each request).
        cache = redis_lib.Redis(host=HOST, port=redis_port)
        for target, (sess, path) in targets.items():
            for name, info in data["links"].items():
                if (target, name) in timed_out:
                    continue
                for key in cache.scan_iter(match=f"*{STATS_CACHE_MARK}*", count=1000):
                    cache.delete(key)
                started = time.perf_counter()
                sess.get(base + path.format(code=info["code"]), timeout=args.timeout)
                first[(target, name)] = (time.perf_counter() - started) * 1000
    finally:
        for proc in reversed(procs):
            stop(proc)
        try:
            mariadb(f"DROP DATABASE IF EXISTS `{DATABASE}`")
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    rows = []
    print()
    head = ("target", "1k median", "1k p95", "1M median", "1M p95", "ratio", "1M first")
    print(
        f"{head[0]:34} {head[1]:>10} {head[2]:>8} {head[3]:>10} {head[4]:>8} {head[5]:>6}"
        f" {head[6]:>9}"
    )
    for target in targets:
        small, large = times[(target, "1k")], times[(target, "1M")]
        ratio = statistics.median(large) / statistics.median(small)
        more = ">" if (target, "1M") in timed_out else ""
        print(
            f"{target:34} {statistics.median(small):8.1f}ms {percentile(small, 0.95):6.1f}ms "
            f"{more}{statistics.median(large):8.1f}ms {percentile(large, 0.95):6.1f}ms "
            f"{more}{ratio:5.2f}x {first.get((target, '1M'), float('nan')):7.1f}ms"
        )
        rows.append(
            {
                "target": f"{target}: {args.large:,} visits vs {args.small:,}",
                "measured": (
                    f"{more}{ratio:.2f}x (median {statistics.median(small):.1f} ms vs "
                    f"{statistics.median(large):.1f} ms; p95 {percentile(small, 0.95):.1f} vs "
                    f"{percentile(large, 0.95):.1f} ms; first view "
                    f"{first.get((target, '1M'), float('nan')):.1f} ms; {len(large)} runs"
                    + (f", timed out after {args.timeout:.0f} s)" if more else ")")
                ),
                "goal": f"<= {GOAL:.0f}x the 1k link's median",
                "met": ratio <= GOAL,
            }
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
