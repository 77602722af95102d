"""Visit ingest: how many buffered visits one worker process enriches and stores per second.

The target (issue #11): one Celery worker process enriches and stores >= 15,000 visits/s from a
pre-filled buffer of 100,000 realistic visits (mixed IPs and User-Agents, 5 % bots).

Everything runs on loopback and is thrown away afterwards: a private `redis-server` on a free
port (the shared Redis is never touched) and a fresh MariaDB database
`shorturl_bench_ingest_<pid>` on 127.0.0.1:3306 (root, no password), migrated by `manage.py
migrate`. A child process creates a few hundred links and pre-fills the buffer with visit
messages built by the product's own encoder (analytics.messages.encode_visit); then ONE child
process, the worker, runs the Celery task's body (`analytics.tasks.flush_visits_task`, i.e.
`flush_pending(max_seconds=10)`) in a loop until the buffer is empty, as a solo-pool Celery
worker fed by beat would, minus the broker round trip between ticks. The clock starts before the
first flush (cold parsers and GeoIP reader included) and stops when the buffer is empty.

    .venv/bin/python bench/ingest_bench.py [--visits 100000] [--json PATH] [--profile PATH]

`--profile PATH` runs the worker under cProfile and writes the stats there (slower; for reading
where the time goes, not for the figure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import HOST, mariadb, start_redis, stop

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GOAL = 15_000  # visits/s, issue #11
DB_PREFIX = "shorturl_bench_ingest_"
STEP_TIMEOUT = 900  # s, any one child step; the whole run stays bounded


# --- Realistic traffic ---------------------------------------------------------------------------
# Browsers as their current releases write them (desktop, phones, tablets, in-app browsers),
# versions spread over the last couple of years, so the pool holds hundreds of distinct strings
# with a long tail, as a real access log does. Popular strings are drawn far more often (Zipf).

_ANDROID_MODELS = [
    "SM-S918B", "SM-S911B", "SM-A546B", "SM-A536B", "SM-G991B", "SM-A145R", "SM-N986B",
    "Pixel 7", "Pixel 8 Pro", "Pixel 6a", "M2101K6G", "22101316G", "2201117TY", "CPH2451",
    "RMX3085", "V2207", "moto g(60)", "ANE-LX1", "LE2113", "K",
]  # fmt: skip
_ANDROID_TABLETS = ["SM-X200", "SM-T505", "Lenovo TB-X606F", "SM-X710"]
_IOS = ["15_8", "16_6_1", "16_7_2", "17_1_2", "17_2_1", "17_4_1", "17_5", "17_6_1", "18_0", "18_1"]
_MAC = ["10_15_7", "10_15_6", "11_7_10", "13_6_1", "14_2_1"]
_WIN = ["Windows NT 10.0; Win64; x64", "Windows NT 10.0; WOW64", "Windows NT 6.1; Win64; x64"]
_LINUX = ["X11; Linux x86_64", "X11; Ubuntu; Linux x86_64", "X11; Fedora; Linux x86_64"]
_WEBKIT = "AppleWebKit/537.36 (KHTML, like Gecko)"
_SAFARI_WK = "AppleWebKit/605.1.15 (KHTML, like Gecko)"

BOT_USER_AGENTS = [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/128.0.6613.137 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
    "+http://www.google.com/bot.html)",
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
    "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; "
    "+http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
    "curl/7.81.0",
    "curl/8.5.0",
    "curl/8.7.1",
    "python-requests/2.31.0",
    "python-requests/2.32.3",
    "Go-http-client/1.1",
    "Go-http-client/2.0",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "Twitterbot/1.0",
    "TelegramBot (like TwitterBot)",
    "WhatsApp/2.23.20.0",
    "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
    "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
    "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
    "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/120.0.6099.109 Safari/537.36",
    "Wget/1.21.4",
    "okhttp/4.12.0",
]


def browser_user_agents(rnd: random.Random) -> list[str]:
    """Several hundred distinct real-world browser User-Agents, most popular first."""
    uas: list[str] = []

    def chrome_version() -> str:
        major = rnd.randint(112, 131)
        # Reduced UA strings (Chrome 110+) mostly say x.0.0.0; some embedders keep the build.
        if rnd.random() < 0.6:
            return f"{major}.0.0.0"
        return f"{major}.0.{rnd.randint(5600, 6800)}.{rnd.randint(40, 220)}"

    for _ in range(150):  # Chrome desktop
        platform = rnd.choice(_WIN * 3 + [f"Macintosh; Intel Mac OS X {rnd.choice(_MAC)}"]
                              + _LINUX)  # fmt: skip
        uas.append(f"Mozilla/5.0 ({platform}) {_WEBKIT} Chrome/{chrome_version()} Safari/537.36")
    for _ in range(140):  # Chrome on Android phones
        model = rnd.choice(_ANDROID_MODELS)
        android = rnd.choice(["10", "11", "12", "13", "14"])
        uas.append(
            f"Mozilla/5.0 (Linux; Android {android}; {model}) {_WEBKIT} "
            f"Chrome/{chrome_version()} Mobile Safari/537.36"
        )
    for _ in range(90):  # Safari on iPhone
        ios = rnd.choice(_IOS)
        version = ".".join(ios.split("_")[:2])
        uas.append(
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) {_SAFARI_WK} "
            f"Version/{version} Mobile/15E148 Safari/604.1"
        )
    for _ in range(25):  # iPad
        ios = rnd.choice(_IOS)
        uas.append(
            f"Mozilla/5.0 (iPad; CPU OS {ios} like Mac OS X) {_SAFARI_WK} "
            f"Version/{'.'.join(ios.split('_')[:2])} Mobile/15E148 Safari/604.1"
        )
    for _ in range(40):  # Safari on macOS
        uas.append(
            f"Mozilla/5.0 (Macintosh; Intel Mac OS X {rnd.choice(_MAC)}) {_SAFARI_WK} "
            f"Version/{rnd.choice(['16.6', '17.1', '17.2.1', '17.4.1', '17.6', '18.0', '18.1'])} "
            "Safari/605.1.15"
        )
    for _ in range(60):  # Firefox
        major = rnd.randint(115, 132)
        mac = f"Macintosh; Intel Mac OS X {rnd.choice(['10.15', '14.2'])}"
        platform = rnd.choice([*_WIN, *_LINUX, mac])
        uas.append(f"Mozilla/5.0 ({platform}; rv:{major}.0) Gecko/20100101 Firefox/{major}.0")
    for _ in range(15):  # Firefox on Android
        major = rnd.randint(115, 132)
        uas.append(
            f"Mozilla/5.0 (Android {rnd.choice(['12', '13', '14'])}; Mobile; rv:{major}.0) "
            f"Gecko/{major}.0 Firefox/{major}.0"
        )
    for _ in range(50):  # Edge
        major = rnd.randint(115, 131)
        uas.append(
            f"Mozilla/5.0 ({rnd.choice(_WIN)}) {_WEBKIT} Chrome/{major}.0.0.0 Safari/537.36 "
            f"Edg/{major}.0.{rnd.randint(1900, 2900)}.{rnd.randint(40, 120)}"
        )
    for _ in range(30):  # Samsung Internet
        uas.append(
            f"Mozilla/5.0 (Linux; Android {rnd.choice(['13', '14'])}; "
            f"{rnd.choice(_ANDROID_MODELS[:7])}) {_WEBKIT} "
            f"SamsungBrowser/{rnd.choice(['22.0', '23.0', '24.0', '25.0'])} "
            f"Chrome/{rnd.randint(111, 125)}.0.0.0 Mobile Safari/537.36"
        )
    for _ in range(25):  # Chrome on iOS, Android tablets
        ios = rnd.choice(_IOS)
        uas.append(
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) {_SAFARI_WK} "
            f"CriOS/{rnd.randint(118, 131)}.0.{rnd.randint(6000, 6800)}.{rnd.randint(30, 150)} "
            "Mobile/15E148 Safari/604.1"
        )
        uas.append(
            f"Mozilla/5.0 (Linux; Android 13; {rnd.choice(_ANDROID_TABLETS)}) {_WEBKIT} "
            f"Chrome/{chrome_version()} Safari/537.36"
        )
    for _ in range(25):  # in-app browsers: WeChat, Facebook, Instagram
        ios = rnd.choice(_IOS)
        uas.append(
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) {_SAFARI_WK} Mobile/15E148 "
            f"MicroMessenger/8.0.{rnd.randint(40, 52)}({rnd.choice(['0x18002f2c', '0x1800312d'])}) "
            "NetType/WIFI Language/zh_CN"
        )
        uas.append(
            f"Mozilla/5.0 (Linux; Android 13; {rnd.choice(_ANDROID_MODELS)}; wv) {_WEBKIT} "
            f"Version/4.0 Chrome/{chrome_version()} Mobile Safari/537.36 "
            f"[FB_IAB/FB4A;FBAV/{rnd.randint(430, 480)}.0.0.{rnd.randint(10, 60)}."
            f"{rnd.randint(60, 120)};]"
        )
        uas.append(
            f"Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) {_SAFARI_WK} Mobile/15E148 "
            f"Instagram {rnd.randint(300, 350)}.0.0.{rnd.randint(10, 40)}.{rnd.randint(80, 120)} "
            "(iPhone14,5; iOS 17_1; en_US; en; scale=3.00; 1170x2532; 123456789)"
        )
    for _ in range(15):  # Opera
        uas.append(
            f"Mozilla/5.0 ({rnd.choice(_WIN)}) {_WEBKIT} Chrome/{rnd.randint(118, 130)}.0.0.0 "
            f"Safari/537.36 OPR/{rnd.randint(104, 114)}.0.0.0"
        )
    unique = list(dict.fromkeys(uas))
    rnd.shuffle(unique)  # the Zipf rank below decides popularity, not the family order above
    return unique


def public_ipv4(rnd: random.Random) -> str:
    import ipaddress

    while True:
        address = ipaddress.IPv4Address(rnd.randint(1 << 24, (224 << 24) - 1))
        if address.is_global:
            return str(address)


def public_ipv6(rnd: random.Random) -> str:
    # A home /64 of an ISP's allocation (2a0x: Europe, 240x: Asia, 260x: America) + an interface id
    prefix = rnd.choice([0x2A00, 0x2A01, 0x2A02, 0x2A03, 0x2400, 0x2401, 0x2406, 0x2600, 0x2601,
                         0x2602, 0x2603, 0x2604, 0x2605, 0x2607, 0x2800, 0x2803])  # fmt: skip
    words = [prefix] + [rnd.randint(0, 0xFFFF) for _ in range(7)]
    return ":".join(f"{w:x}" for w in words)


def zipf_weights(count: int, exponent: float) -> list[float]:
    return [1.0 / (rank**exponent) for rank in range(1, count + 1)]


def build_traffic(visits: int, link_count: int, seed: int = 11) -> list[tuple[int, str, str, str]]:
    """(link index, IP, User-Agent, referrer) per visit.

    People: a pool of visitors (an address and the browser they use; a few share an address,
    as behind a NAT), drawn with a Zipf law so that many come back while a long tail comes once;
    30 % IPv6. Bots: 5 % of the visits, from crawler and script User-Agents on their own addresses.
    """
    rnd = random.Random(seed)
    browsers = browser_user_agents(rnd)
    browser_weights = zipf_weights(len(browsers), 1.0)
    visitor_count = max(50, visits // 4)
    addresses = [public_ipv6(rnd) if rnd.random() < 0.3 else public_ipv4(rnd)
                 for _ in range(int(visitor_count * 0.9))]  # fmt: skip
    people = list(
        zip(
            (rnd.choice(addresses) for _ in range(visitor_count)),
            rnd.choices(browsers, browser_weights, k=visitor_count),
            strict=True,
        )
    )
    people_weights = zipf_weights(len(people), 0.7)
    bot_addresses = [public_ipv4(rnd) for _ in range(300)]
    link_weights = zipf_weights(link_count, 0.9)
    referrers = ["", "", "", "https://www.google.com/", "https://t.co/",
                 "https://www.facebook.com/", "https://l.instagram.com/",
                 "https://www.linkedin.com/", "https://mail.google.com/",
                 "https://news.ycombinator.com/item?id=41234567",
                 "android-app://com.slack/"]  # fmt: skip
    # Drawn in bulk: random.choices walks its cumulative weights once per call, not per draw.
    links = rnd.choices(range(link_count), link_weights, k=visits)
    humans = rnd.choices(people, people_weights, k=visits)
    out = []
    for link, (ip, ua) in zip(links, humans, strict=True):
        if rnd.random() < 0.05:
            out.append((link, rnd.choice(bot_addresses), rnd.choice(BOT_USER_AGENTS), ""))
        else:
            out.append((link, ip, ua, rnd.choice(referrers)))
    return out


# --- Child roles (run with Django set up, in the bench's database) -------------------------------


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shorturl_project.settings")
    import django

    django.setup()


def role_fill(visits: int, link_count: int) -> dict:
    _django()
    import uuid

    from django.contrib.auth import get_user_model

    from analytics import buffer
    from analytics.messages import encode_visit
    from core.redis_conn import redis_client
    from links.cache import LinkEntry
    from links.services.create import link_create

    user = get_user_model().objects.create_user("bench-ingest")
    entries = []
    for i in range(link_count):
        link = link_create(user=user, long_url=f"https://example.com/campaign/{i}").link
        entries.append(LinkEntry.from_link(link))
    traffic = build_traffic(visits, link_count)
    client = redis_client()
    pipe = client.pipeline(transaction=False)
    batch = []
    for link, ip, ua, referrer in traffic:
        meta = {"REMOTE_ADDR": ip, "HTTP_USER_AGENT": ua, "HTTP_REFERER": referrer}
        batch.append(encode_visit(meta, entries[link], event_id=uuid.uuid4().hex))
        if len(batch) == 1000:
            pipe.rpush(buffer.VISITS_KEY, *batch)
            batch = []
    if batch:
        pipe.rpush(buffer.VISITS_KEY, *batch)
    pipe.execute()
    return {
        "buffered": client.llen(buffer.VISITS_KEY),
        "links": link_count,
        "distinct_ips": len({ip for _, ip, _, _ in traffic}),
        "ipv6_share": sum(":" in ip for _, ip, _, _ in traffic) / len(traffic),
        "distinct_uas": len({ua for _, _, ua, _ in traffic}),
        "bot_share": sum(ua in BOT_USER_AGENTS for _, _, ua, _ in traffic) / len(traffic),
    }


def role_worker(profile: str | None) -> dict:
    """The worker: the Celery task's body, run until the buffer is empty."""
    _django()
    from analytics import buffer
    from analytics.models import VisitRecord
    from analytics.tasks import flush_visits_task
    from core.redis_conn import redis_client

    client = redis_client()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
    started, cpu_started = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    tasks = 0
    while (waiting := buffer.status(client))["buffered"] or waiting["processing"]:
        flush_visits_task()  # what `celery worker --pool solo` runs on each beat tick
        tasks += 1
        if time.perf_counter() - started > STEP_TIMEOUT - 60:
            break
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    if profiler:
        profiler.disable()
        profiler.dump_stats(profile)
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,  # the worker's own CPU: less at the mercy of a busy machine
        "tasks": tasks,
        "stored": VisitRecord.objects.count(),
        "left": (left := buffer.status(client))["buffered"] + left["processing"],
        "dead": client.llen(buffer.DEAD_KEY),
    }


def child(role: str, env: dict, *extra: str) -> dict:
    out = subprocess.run(
        [PYTHON, __file__, "--role", role, *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(
            f"{role} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- The run -------------------------------------------------------------------------------------


def run_once(args, lanes: int) -> tuple[dict, dict]:
    """Fill a fresh database and Redis with the traffic, let one worker store it; thrown away."""
    workdir = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    database = f"{DB_PREFIX}{os.getpid()}"
    redis = None
    created = False
    try:
        redis, port = start_redis(workdir)
        mariadb(f"CREATE DATABASE `{database}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
        created = True
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DATABASE_", "REDIS_", "CELERY_", "GEOIP_", "ANALYTICS_"))
        }
        env.update(
            DATABASE_URL=f"mysql://root@{HOST}:3306/{database}",
            REDIS_URL=f"redis://{HOST}:{port}/0",
            CELERY_BROKER_URL=f"redis://{HOST}:{port}/1",
            DEBUG="0",  # as in production: DEBUG would keep every query in memory
            SECRET_KEY="ingest-bench-not-secret",  # noqa: S106
            SHOW_DEV_WARNING="0",
        )
        env["ANALYTICS_FLUSH_LANES"] = str(lanes)
        if args.batch_size:
            env["ANALYTICS_BATCH_SIZE"] = str(args.batch_size)
        subprocess.run(
            [PYTHON, "manage.py", "migrate", "--noinput"],
            cwd=ROOT, env=env, check=True, capture_output=True, timeout=STEP_TIMEOUT,
        )  # fmt: skip
        print(f"filling the buffer with {args.visits:,} visits over {args.links} links ...")
        fill = child("fill", env, "--visits", str(args.visits), "--links", str(args.links))
        print(f"worker flushing {fill['buffered']:,} visits with {lanes} lane(s) ...")
        extra = ["--profile", str(Path(args.profile).resolve())] if args.profile else []
        work = child("worker", env, *extra)
    finally:
        if redis is not None:
            stop(redis)
        if created:
            mariadb(f"DROP DATABASE IF EXISTS `{database}`")
        shutil.rmtree(workdir, ignore_errors=True)
    return fill, work


def result_rows(fill: dict, work: dict, lanes: int, *, goal: bool) -> tuple[list[dict], bool]:
    """The table's rows for one run; `goal`: this run is the one the target is judged on."""
    rate = work["stored"] / work["seconds"] if work["seconds"] else 0.0
    complete = work["stored"] == fill["buffered"] and not work["left"] and not work["dead"]
    rows = [
        {
            "target": f"ingest: one worker, {lanes} lane(s), {fill['buffered']:,} visits",
            "measured": f"{rate:,.0f} visits/s ({work['stored']:,} in {work['seconds']:.2f} s)",
            "goal": f">= {GOAL:,} visits/s" if goal else "(for comparison)",
            "met": (rate >= GOAL or not goal) and complete,
        },
        {
            "target": f"ingest, {lanes} lane(s): every buffered visit stored once",
            "measured": f"{work['stored']:,} stored of {fill['buffered']:,} "
            f"({work['left']} left, {work['dead']} dead)",
            "goal": "stored == buffered",
            "met": complete,
        },
    ]
    print(
        f"traffic: {fill['distinct_ips']:,} distinct IPs ({fill['ipv6_share']:.0%} IPv6), "
        f"{fill['distinct_uas']} distinct User-Agents, {fill['bot_share']:.1%} bots, "
        f"{fill['links']} links; {work['tasks']} flush task run(s); worker CPU "
        f"{work['cpu_seconds']:.2f} s ({work['cpu_seconds'] / max(1, work['stored']) * 1e6:.0f} "
        f"µs/visit); load average {os.getloadavg()[0]:.1f}"
    )
    return rows, complete


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--visits", type=int, default=100_000)
    parser.add_argument("--links", type=int, default=300)
    parser.add_argument(
        "--batch-size",
        type=int,
        help="ANALYTICS_BATCH_SIZE for the worker (default: the product's)",
    )
    parser.add_argument(
        "--lanes",
        default="1,2",
        help="comma-separated ANALYTICS_FLUSH_LANES values, one run each; the target is judged "
        "on the last (default 1,2: one lane for comparison, then the product's default)",
    )
    parser.add_argument("--json", help="write result rows here (for make bench)")
    parser.add_argument("--profile", help="run the worker under cProfile, stats to this file")
    parser.add_argument("--role", choices=["fill", "worker"], help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.role == "fill":
        print(json.dumps(role_fill(args.visits, args.links)))
        return 0
    if args.role == "worker":
        print(json.dumps(role_worker(args.profile)))
        return 0

    if not shutil.which("redis-server") or not shutil.which("mariadb"):
        sys.exit("needs redis-server and the mariadb client (and MariaDB on 127.0.0.1:3306)")
    lane_counts = [int(count) for count in args.lanes.split(",")]
    rows, complete = [], True
    for index, lanes in enumerate(lane_counts):
        fill, work = run_once(args, lanes)
        last = index == len(lane_counts) - 1
        lane_rows, lane_complete = result_rows(fill, work, lanes, goal=last)
        rows += lane_rows
        complete = complete and lane_complete
    width = max(len(row["target"]) for row in rows)
    mwidth = max(len(row["measured"]) for row in rows)
    print(f"{'target':<{width}}  {'measured':<{mwidth}}  {'goal':<20}  met")
    for row in rows:
        print(
            f"{row['target']:<{width}}  {row['measured']:<{mwidth}}  {row['goal']:<20}  "
            f"{'yes' if row['met'] else 'NO'}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    # A goal not reached is a row of the table; only a lost or repeated visit fails the run.
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
