"""Failover drills under load, against the cluster of e2e/cluster.py (`make drills`).

Each drill: the load of load.py for a few seconds, one fault, a few seconds with it, the part
brought back, a few seconds more; then, once what was answered has had time to be stored:
- every redirect answered is one visit stored: none lost, none counted twice (a visit whose
  answer never reached its client, a 503 or a cut connection, may be stored: the server did
  serve it);
- every link answered 201 exists exactly once, however the creates were retried, and a URL the
  two creators sent at about the same moment was given one link (201 to one, 200 to the other);
- every answer was right or a clear 503, never another 5xx;
- an edit made afterwards reaches every web node;
- how long clients saw the fault and how long the part took to be back in service.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import cluster as topology
import harness
from load import ROWS, Load

LINKS = 8
BEFORE, DURING, AFTER = 4.0, 8.0, 4.0
SETTLE_TIMEOUT = 90.0
EDIT_TIMEOUT = 15.0
# What core.db.retry_on_conflict logs for each unit of work it runs again.
RETRY_LINE = r"(certification conflict|lock wait timeout|node not ready \(WSREP\)), retrying"


def _stored(front: harness.Deployment, codes: list[str]) -> dict[str, int]:
    counts = {}
    for code in codes:
        data = harness.stats(front, code)
        counts[code] = data["total_clicks"] + data["bot_clicks"]
    return counts


def _settled(front: harness.Deployment, expected: dict[str, int]) -> dict[str, int]:
    """Stored visits per code once every answered one is there and nothing moves for 3 s."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    last, still_since = None, time.monotonic()
    while True:
        counts = _stored(front, list(expected))
        if counts != last:
            last, still_since = counts, time.monotonic()
        reached = all(counts[code] >= n for code, n in expected.items())
        if (reached and time.monotonic() - still_since >= 3) or time.monotonic() > deadline:
            return counts
        time.sleep(0.5)


def _links_per_url(node_port: int, tag: str) -> dict[str, int]:
    # The tag is the drill's own (letters, digits, dashes): nothing here comes from outside.
    out = harness.mariadb(
        f"SELECT long_url, COUNT(*) FROM {topology.DATABASE}.links_urllink "  # noqa: S608
        f"WHERE long_url LIKE 'https://example.com/drill/{tag}/%' "
        "AND long_url NOT LIKE '%/edited/%' GROUP BY long_url",
        node_port,
    )
    rows = (line.split("\t") for line in out.splitlines() if line.strip())
    return {url: int(count) for url, count in rows}


def _edit_reaches_every_node(cluster: topology.Cluster, code: str, tag: str) -> float:
    target = f"https://example.com/drill/{tag}/edited/final"
    with cluster.front.api() as api:
        response = api.patch(
            cluster.front.url(f"/api/v1/links/{code}/"),
            json={"long_url": target},
            timeout=harness.HTTP_TIMEOUT,
        )
    assert response.status_code == 200, f"the final edit: {response.status_code} {response.text}"
    began = time.monotonic()
    for dep in cluster.web.values():
        harness.wait_until(
            lambda dep=dep: harness.get_fresh(dep.port, f"/{code}").location == target,
            timeout=EDIT_TIMEOUT,
            interval=0.1,
            what=f"the edit of /{code} to reach the web node on port {dep.port}",
        )
    return time.monotonic() - began


def drill(
    cluster: topology.Cluster,
    name: str,
    *,
    fault: Callable[[], None],
    bring_back: Callable[[], None],
    back_in_service: Callable[[], bool],
) -> dict:
    front = cluster.front
    tag = f"{name.lower().replace(' ', '-')}-{secrets.token_hex(4)}"
    links = {}
    for i in range(LINKS):
        long_url = f"https://example.com/drill/{tag}/clicked/{i}"
        links[harness.create_link(front, long_url)["code"]] = long_url
    edited = harness.create_link(front, f"https://example.com/drill/{tag}/edited/0")["code"]

    offsets = front.log_offsets()
    with Load(front, links, edited, tag) as load:
        time.sleep(BEFORE)
        fault_at = time.monotonic()
        fault()
        time.sleep(DURING)
        back_at = time.monotonic()
        bring_back()
        harness.wait_until(back_in_service, timeout=180, interval=0.2, what=f"{name}: back")
        recovered = time.monotonic() - back_at
        time.sleep(AFTER)
    seen = load.seen

    stored = _settled(front, dict(seen.answered) | {c: 0 for c in links if c not in seen.answered})
    answered = sum(seen.answered.values())
    total_stored = sum(stored.values())
    per_url = _links_per_url(cluster.galera[0].port, tag)
    duplicated = {url: n for url, n in per_url.items() if n > 1}
    missing_links = [url for url in seen.created if url not in per_url]
    split = {url: codes for url, codes in seen.created.items() if len(codes) > 1}
    lost_visits = sum(max(0, seen.answered[code] - stored[code]) for code in links)
    doubled_visits = max(0, total_stored - answered - seen.clicks_unanswered)
    span = seen.faulty_span(fault_at)
    row = {
        "drill": name,
        "answered": answered,
        "stored": total_stored,
        "unavailable": seen.unavailable,
        "cut": seen.lost,
        "server_errors": len(seen.server_errors),
        "duplicates": len(duplicated) + len(split) + doubled_visits,
        "lost": lost_visits + len(missing_links),
        "created": len(seen.created),
        "retried": cluster.count_in_logs(RETRY_LINE, offsets),
        "visible": "none" if span is None else f"{span[0]:.1f}-{span[1]:.1f}",
        "recovered": f"{recovered:.1f}",
        "edit_everywhere": f"{_edit_reaches_every_node(cluster, edited, tag):.2f}",
    }
    ROWS.append(row)
    # What HAProxy found wrong in requests or answers, for the logs of a failing drill.
    errors = cluster.haproxy_admin("show errors")
    (topology.ARTIFACTS / f"haproxy-errors-{tag}.txt").write_text(errors)
    print(row, f"edits: {seen.edits}", f"503s seen: {seen.unavailable_samples}")

    assert not seen.server_errors, f"{name}: 5xx other than 503: {seen.server_errors[:10]}"
    assert not seen.wrong, f"{name}: wrong answers: {seen.wrong[:10]}"
    assert lost_visits == 0, f"{name}: answered {dict(seen.answered)}, stored {stored}"
    assert doubled_visits == 0, (
        f"{name}: {total_stored} visits stored for {answered} answered redirects "
        f"and {seen.clicks_unanswered} unanswered clicks"
    )
    assert not duplicated, f"{name}: links stored more than once: {duplicated}"
    assert not split, f"{name}: one URL answered with several links: {split}"
    assert not missing_links, f"{name}: links answered but not stored: {missing_links[:5]}"
    assert answered > 0 and seen.created and seen.edits, f"{name}: the load did not run: {row}"
    return row


def test_a_galera_node_stopped_and_brought_back(cluster):
    """The node HAProxy sends writes to stops (SIGTERM, as a host going down for maintenance):
    HAProxy moves the writes to the next synced node; the node comes back by IST."""
    node = cluster.galera[0]

    def back() -> bool:
        return (
            node.synced()
            and cluster.galera_size(node) == 3
            and cluster.haproxy_backends_up().get("galera_one_writer/db1") == "UP"
        )

    drill(
        cluster,
        "Galera node stopped",
        fault=lambda: node.proc.stop(),
        bring_back=lambda: cluster.start_galera_node(node),
        back_in_service=back,
    )


def test_the_redis_master_killed(cluster):
    """SIGKILL of the Redis master: Sentinel promotes a replica; the old master, started
    again, comes back as a replica of the new one."""
    killed: list[topology.Node] = []

    def kill_master() -> None:
        node = cluster.redis_node_at(cluster.redis_master_port())
        node.proc.popen.kill()
        node.proc.popen.wait(timeout=10)
        killed.append(node)

    def start_again() -> None:
        # Started as a replica of whoever Sentinel made master (Sentinel would reconfigure it
        # anyway); its AOF is ignored once it has synced from the new master.
        cluster.start_redis_node(killed[0], replica_of=cluster.redis_master_port())

    drill(
        cluster,
        "Redis master killed",
        fault=kill_master,
        bring_back=start_again,
        back_in_service=lambda: cluster.linked_replicas() == 2,
    )


def test_a_web_node_killed(cluster):
    """SIGKILL of a whole web node (server, its process and its runner): HAProxy takes it out;
    started again, its spool's visits are forwarded and HAProxy takes it back."""

    def back() -> bool:
        return cluster.haproxy_backends_up().get("web_nodes/web1") == "UP"

    drill(
        cluster,
        "web node killed",
        fault=lambda: cluster.kill_web("web1"),
        bring_back=lambda: cluster.start_web("web1"),
        back_in_service=back,
    )


def test_a_worker_killed(cluster):
    """SIGKILL of a Celery worker mid-flush: the other worker takes its lanes over; the batch
    it had taken is stored once."""
    drill(
        cluster,
        "Celery worker killed",
        fault=lambda: cluster.kill_worker("worker1"),
        bring_back=lambda: cluster.start_worker("worker1"),
        back_in_service=lambda: "worker1" in cluster.workers,
    )


RACE_SCRIPT = """
import json, os, time
from django.contrib.auth import get_user_model
from links.services.create import link_create
user = get_user_model().objects.get(username="demo")
start, urls = float(os.environ["RACE_START"]), json.loads(os.environ["RACE_URLS"])
codes = []
for n, url in enumerate(urls):
    time.sleep(max(0.0, start + n * 0.25 - time.time()))
    codes.append(link_create(user=user, long_url=url).link.code)
print(json.dumps(codes))
"""


def test_one_owner_creating_one_url_through_two_galera_nodes_at_once_gets_one_link(cluster):
    """Two processes, each writing to its own Galera node, create the same URLs for one owner at
    the same instants. A plain create gives back the owner's link for that URL; across nodes
    that holds only because both creates write the owner's turn row (core.db.take_turn), so the
    second commit fails certification and its retry finds the first one's link."""
    tag = f"two-writers-{secrets.token_hex(4)}"
    urls = [f"https://example.com/drill/{tag}/{n}" for n in range(30)]
    start = time.time() + 8  # both processes loaded Django by then

    def create_through(node: topology.GaleraNode) -> tuple[list[str], str]:
        env = cluster._node_env(f"race-{node.name}", 0, db_port=node.port)
        env.update(RACE_START=str(start), RACE_URLS=json.dumps(urls))
        done = subprocess.run(
            [str(harness.VENV / "bin" / "python"), "manage.py", "shell", "-c", RACE_SCRIPT],
            cwd=harness.REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{node.name}: {done.stderr[-2000:]}"
        return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr

    with ThreadPoolExecutor(2) as pool:
        (first, first_log), (second, second_log) = pool.map(create_through, cluster.galera[:2])
    retried = sum(
        1 for line in (first_log + second_log).splitlines() if re.search(RETRY_LINE, line)
    )
    per_url = _links_per_url(cluster.galera[2].port, tag)
    ROWS.append(
        {
            "drill": "same URL, two writers",
            "created": f"{len(per_url)} of {len(urls)}",
            "duplicates": sum(n - 1 for n in per_url.values()),
            "retried": retried,
        }
    )
    assert first == second, "the two writers were given different links for one URL"
    assert per_url == dict.fromkeys(urls, 1), f"links per URL: {per_url}"
