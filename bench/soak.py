"""`make soak`: a bounded soak of services mode at the highest rate this machine gives.

Starts the product the way it is deployed (scripts/serve on a fresh MariaDB database and a
throw-away redis-server, a Celery worker and beat), creates links, then loads it with wrk on
loopback for `--seconds` (60 by default) with a mix of

- 90 % redirects of existing links,
- 9 % unknown codes (made-up aliases, never repeated),
- 1 % creates through the API (a new long URL each time, token auth),

and checks, after the worker has caught up:

- no answer was a 5xx;
- the visits stored equal the redirects served (wrk counts the answers it read; a request in
  flight when it stops may be served without being counted, so stored may exceed the count by
  at most one request per connection, never fall short of it);
- every create answered 201 and made its link (give or take those in flight, as above).

It prints the mix, the rates, and the resident memory of the web and worker processes at the
start of the load and at its end; exits 1 when a check fails. Loopback only, bounded in time;
stops everything it started.

    .venv/bin/python bench/soak.py [--seconds 60] [--connections 32] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from processes import wait_until
from serve_bench import Bench, python_rss, wait_for
from workload import create_links, shell_json

_API_KEY_SCRIPT = (
    "from django.contrib.auth.models import User\n"
    "from rest_framework.authtoken.models import Token\n"
    "import json; print(json.dumps(Token.objects.create(user=User.objects.get(username='bench'))"
    ".key))\n"
)

# wrk's Lua: each thread picks a request by a random draw and counts the answers by status; the
# main thread sums the threads' counts in done() and prints them as one JSON line.
_SCRIPT = """
local codes = {%(codes)s}
local token = "%(token)s"
local threads = {}
local thread_count = 0
function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_no", thread_count)
  table.insert(threads, thread)
end
function init(args)
  math.randomseed(os.time() * 1000 + thread_no * 7919)
  counts = {}
  sent = 0
  created_body = 0
end
request = function()
  sent = sent + 1
  local draw = math.random()
  if draw < 0.90 then
    return wrk.format("GET", "/" .. codes[math.random(#codes)])
  elseif draw < 0.99 then
    return wrk.format("GET", "/soak-unknown-" .. thread_no .. "-" .. sent)
  end
  local body = '{"long_url": "https://example.com/soak/' .. thread_no .. '/' .. sent .. '"}'
  return wrk.format("POST", "/api/v1/links/", {
    ["Authorization"] = "Token " .. token,
    ["Content-Type"] = "application/json",
  }, body)
end
response = function(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end
done = function(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    local theirs = thread:get("counts")
    for status, n in pairs(theirs) do
      total[tostring(status)] = (total[tostring(status)] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do
    table.insert(parts, string.format('"%%s": %%d', status, n))
  end
  io.write("SOAK_COUNTS {" .. table.concat(parts, ", ") .. "}\\n")
  io.write(string.format("SOAK_LATENCY_P99_MS %%.1f\\n", latency:percentile(99) / 1000))
end
"""


def run_wrk(url: str, script: Path, seconds: int, connections: int) -> dict[int, int]:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
        timeout=seconds + 120,
    ).stdout
    counts = re.search(r"SOAK_COUNTS (\{.*\})", out)
    if counts is None:
        raise RuntimeError(f"wrk printed no counts:\n{out}")
    return {int(status): n for status, n in json.loads(counts.group(1)).items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--processes", type=int, default=2, help="WEB_CONCURRENCY")
    parser.add_argument("--threads", type=int, default=4, help="WEB_THREADS")
    parser.add_argument("--links", type=int, default=500)
    parser.add_argument("--json", help="write the figures here as JSON")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is needed: apt-get install wrk")

    bench = Bench(args)
    # A soak measures the product, not its guards against one abusive client: every request
    # comes from 127.0.0.1, so the per-client limits are raised out of the way.
    bench.base_env |= {
        "API_WRITE_RATE": "1000000/min",
        "API_READ_RATE": "1000000/min",
        "SHORTURL_NOT_FOUND_RATE": "1000000/min",
    }
    failures: list[str] = []
    try:
        bench.start_services()
        wait_for(bench.ports["services"], bench.procs["services"])
        env = bench.env["services"]
        codes = create_links(args.links, env)
        token = shell_json(_API_KEY_SCRIPT, env)
        script = bench.workdir / "soak.lua"
        script.write_text(_SCRIPT % {"codes": ",".join(f'"{c}"' for c in codes), "token": token})
        url = f"http://127.0.0.1:{bench.ports['services']}"
        links_before = bench.count("links_urllink")
        rss_start = {
            "web": python_rss(bench.procs["services"]),
            "worker": python_rss(bench.procs["worker"]),
        }
        print(f"soak: {args.seconds} s, {args.connections} connections, {url}", flush=True)
        started = time.monotonic()
        counts = run_wrk(url, script, args.seconds, args.connections)
        took = time.monotonic() - started
        rss_end = {
            "web": python_rss(bench.procs["services"]),
            "worker": python_rss(bench.procs["worker"]),
        }
        served = sum(n for status, n in counts.items() if 300 <= status < 400)
        # The worker stores what the redirects spooled; wait for it (bounded).
        try:
            wait_until(
                lambda: bench.stored("services") >= served,
                timeout=180,
                what="the worker to store the soak's visits",
            )
        except RuntimeError as exc:
            failures.append(str(exc))
        time.sleep(3)  # anything still in flight lands now; more would be a double count
        stored = bench.stored("services")
        created = bench.count("links_urllink") - links_before
        total = sum(counts.values())
        errors = sum(n for status, n in counts.items() if status >= 500)
        rate = total / took
        lines = [
            f"requests: {total:,} in {took:.0f} s = {rate:,.0f}/s; answers by status: "
            + ", ".join(f"{status}: {n:,}" for status, n in sorted(counts.items())),
            f"redirects served: {served:,}; visits stored: {stored:,}",
            f"creates answered 201: {counts.get(201, 0):,}; links created: {created:,}",
            f"5xx answers: {errors}",
            f"RSS at start / end (MiB): web {rss_start['web']} / {rss_end['web']}; "
            f"worker {rss_start['worker']} / {rss_end['worker']}",
        ]
        print("\n".join(lines))
        if errors:
            failures.append(f"{errors} answers were 5xx")
        if not served <= stored <= served + args.connections:
            failures.append(f"{stored:,} visits stored for {served:,} redirects served")
        # Like the visits: a create in flight when wrk stopped is made but not counted.
        if not counts.get(201, 0) <= created <= counts.get(201, 0) + args.connections:
            failures.append(f"{counts.get(201, 0):,} creates answered 201, {created:,} links made")
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {
                        "seconds": took,
                        "counts": counts,
                        "served": served,
                        "stored": stored,
                        "created": created,
                        "rss_start": rss_start,
                        "rss_end": rss_end,
                    },
                    indent=2,
                )
            )
    finally:
        bench.stop_all()
    if failures:
        print("SOAK FAILED: " + "; ".join(failures))
        return 1
    print("soak passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
