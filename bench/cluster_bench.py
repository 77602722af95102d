"""Scaling on the drills' cluster (e2e/cluster.py): one web node against two behind HAProxy, and
the visit ingest rate with one Celery worker against two. Everything on this machine.

Redirects: wrk (DESKTOP_CHROME, 50 links in turn) against
- one web node directly (no proxy),
- HAProxy with the second node taken out (`disable server` on its admin socket),
- HAProxy with both nodes,
in turns, `--rounds` times, so machine noise hits all three; the ratios are the figures to quote.

Ingest: with the workers stopped, wrk makes a backlog of visits (they wait in Redis), then one
worker (and later two) is started and the time until every answered visit is stored is taken.

    .venv/bin/python bench/cluster_bench.py [--seconds 8] [--rounds 3] [--backlog-seconds 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from serve_bench import wrk
from workload import DESKTOP_CHROME, wrk_script

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "e2e"))

import cluster as topology  # noqa: E402 - e2e/ is put on the path just above
import harness  # noqa: E402

LINKS = 50
CONNECTIONS = 64


def stored_visits(cluster: topology.Cluster) -> int:
    table = f"{topology.DATABASE}.analytics_visitrecord"
    out = harness.mariadb(f"SELECT COUNT(*) FROM {table}", cluster.galera[0].port)  # noqa: S608
    return int(out.strip() or 0)


def drain_rate(cluster: topology.Cluster, workers: list[str], url: str, script, seconds: int):
    """Stop every worker, make a backlog with wrk for `seconds`, start `workers`; visits stored
    per second while the backlog drains, and the backlog's size."""
    for name in list(cluster.workers):
        cluster.workers.pop(name).stop()
    before = stored_visits(cluster)
    answered = wrk(url, seconds, CONNECTIONS, script)["count"]
    time.sleep(2)  # the web nodes forward their spools to Redis
    began = time.monotonic()
    for name in workers:
        cluster.start_worker(name)
    started = time.monotonic() - began
    # The first worker may store some while the second starts: timed from here, on what is left.
    left = answered - (stored_visits(cluster) - before)
    began = time.monotonic()
    harness.wait_until(
        lambda: stored_visits(cluster) - before >= answered,
        timeout=600,
        interval=0.25,
        what=f"{answered} visits stored by {len(workers)} worker(s)",
    )
    took = time.monotonic() - began
    return {
        "workers": len(workers),
        "backlog": answered,
        "timed": left,
        "seconds": round(took, 1),
        "visits_per_s": round(left / took),
        "worker_start_s": round(started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backlog-seconds", type=int, default=10)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    venv = harness.build_production_venv()
    cluster = topology.start_cluster(venv)
    try:
        front = cluster.front
        codes = [
            harness.create_link(front, f"https://example.com/bench/cluster/{i}")["code"]
            for i in range(LINKS)
        ]
        script = wrk_script(codes, cluster.workdir / "codes.lua", DESKTOP_CHROME)
        one = f"http://{harness.HOST}:{cluster.web['web1'].port}"
        proxied = f"http://{harness.HOST}:{cluster.web_port}"
        for url in (one, proxied):
            wrk(url, 2, 8, script)  # warm every process's link cache

        rps: dict[str, list[float]] = {"one node": [], "HAProxy, one node": [], "HAProxy, two": []}
        for _ in range(args.rounds):
            rps["one node"].append(wrk(one, args.seconds, CONNECTIONS, script)["rps"])
            cluster.haproxy_admin("disable server web_nodes/web2")
            rps["HAProxy, one node"].append(wrk(proxied, args.seconds, CONNECTIONS, script)["rps"])
            cluster.haproxy_admin("enable server web_nodes/web2")
            time.sleep(1)
            rps["HAProxy, two"].append(wrk(proxied, args.seconds, CONNECTIONS, script)["rps"])
        medians = {name: statistics.median(values) for name, values in rps.items()}
        base = medians["one node"]
        rounds = f"median of {args.rounds} rounds of {args.seconds} s"
        print(f"\nredirects/s, {rounds}, wrk -c{CONNECTIONS}")
        for name, value in medians.items():
            print(f"  {name:20} {value:9.0f}   {value / base:.2f}x   {rps[name]}")

        ingest = [
            drain_rate(cluster, ["worker1"], proxied, script, args.backlog_seconds),
            drain_rate(cluster, ["worker1", "worker2"], proxied, script, args.backlog_seconds),
        ]
        print("\nvisits stored per second while a backlog drains")
        for row in ingest:
            print(
                f"  {row['workers']} worker(s): {row['timed']} of {row['backlog']} visits"
                f" in {row['seconds']} s"
                f" = {row['visits_per_s']}/s"
            )
        print(f"  two / one: {ingest[1]['visits_per_s'] / ingest[0]['visits_per_s']:.2f}x")
        if args.json:
            args.json.write_text(json.dumps({"redirects": rps, "ingest": ingest}, indent=2))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
