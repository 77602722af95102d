"""The product on a Redis Cluster (REDIS_CLUSTER=1): three masters started here on spare
loopback ports, never the shared Redis. Links are created, redirected from memory and from
Redis, revoked, and their visits forwarded, stored and rolled up, with the link entries spread
over the masters and every multi-key script inside one hash slot.
"""

import random
import shutil
import socket
import subprocess
import time

import pytest
from django.test import Client

from analytics import capture, services, spool
from analytics.models import HourlyClick, VisitRecord
from core.redis_conn import redis_client, reset_redis_state, uses_cluster
from links import cache as link_cache
from links.services.change import link_revoke
from links.services.create import link_create

pytestmark = pytest.mark.django_db(transaction=True)


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _free_cluster_ports(count: int) -> list[int]:
    """Ports whose cluster bus port (port + 10,000) is free and valid too."""
    ports: list[int] = []
    for port in random.sample(range(20_000, 50_000), 200):
        if _is_free(port) and _is_free(port + 10_000):
            ports.append(port)
        if len(ports) == count:
            return ports
    pytest.skip("no free loopback ports for a throw-away cluster")


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory):
    if not (shutil.which("redis-server") and shutil.which("redis-cli")):
        pytest.skip("needs redis-server and redis-cli to start a throw-away cluster")
    ports = _free_cluster_ports(3)
    servers = []
    for port in ports:
        directory = tmp_path_factory.mktemp(f"cluster-{port}")
        servers.append(
            subprocess.Popen(
                [
                    "redis-server",
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                cwd=directory,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pings = [
                subprocess.run(
                    ["redis-cli", "-p", str(port), "ping"], capture_output=True, text=True
                ).stdout.strip()
                for port in ports
            ]
            if pings == ["PONG"] * 3:
                break
            time.sleep(0.1)
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{port}" for port in ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
        while time.monotonic() < deadline + 20:
            info = subprocess.run(
                ["redis-cli", "-p", str(ports[0]), "cluster", "info"],
                capture_output=True,
                text=True,
            ).stdout
            if "cluster_state:ok" in info:
                break
            time.sleep(0.2)
        yield f"redis://127.0.0.1:{ports[0]}/0"
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=10)


@pytest.fixture
def on_cluster(cluster_url, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": cluster_url,
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.DefaultClient",
                "CONNECTION_FACTORY": "core.redis_conn.ClusterConnectionFactory",
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
        }
    }
    settings.SHORTURL_LOCAL_REDIRECTS = True
    settings.NODE_SYNC_MAX_LAG = 60.0
    reset_redis_state()
    assert uses_cluster()
    link_cache.forget_sync_position()
    link_cache.apply_remote_changes()
    yield redis_client()
    link_cache.forget_sync_position()


def test_links_redirect_revoke_and_count_on_a_redis_cluster(on_cluster, user):
    client = on_cluster
    links = [link_create(user=user, long_url=f"https://example.com/c/{n}").link for n in range(30)]
    alias = link_create(user=user, long_url="https://example.com/alias", alias="cluster-sale").link
    browser = Client()
    for link in [*links, alias]:
        assert browser.get(f"/{link.code}")["Location"] == link.long_url  # from the database
        assert browser.get(f"/{link.code}")["Location"] == link.long_url  # from memory
    assert browser.get("/no-such-sale").status_code == 404

    # The entries are spread over the masters, each next to its own version counter.
    nodes = {client.get_node_from_key(link_cache.entry_key(link.code)).name for link in links}
    assert len(nodes) == 3
    assert all(client.exists(link_cache.entry_key(link.code)) for link in links)

    link_revoke(code=links[0].code, user=user)
    assert browser.get(f"/{links[0].code}").status_code == 410
    link_cache.apply_remote_changes()  # the change notice is read back from the cluster
    assert browser.get(f"/{links[0].code}").status_code == 410

    # Visits: spooled, forwarded to the buffer, stored and rolled up by the tagged scripts.
    answered = 2 * len(links) + 2
    assert spool.pending_visits() == answered
    assert capture.forward_spooled_visits() == answered
    while services.flush_pending():
        pass
    services.aggregate_hourly()
    assert VisitRecord.objects.count() == answered
    assert HourlyClick.objects.get(link=alias).clicks == 2


def test_a_redirect_without_local_entries_asks_the_cluster(on_cluster, user, settings):
    """With SHORTURL_LOCAL_REDIRECTS off, every redirect reads its entry from the cluster and
    pushes its visit itself (no fused script across slots)."""
    settings.SHORTURL_LOCAL_REDIRECTS = False
    link = link_create(user=user, long_url="https://example.com/no-local").link
    browser = Client()
    for _ in range(3):
        assert browser.get(f"/{link.code}").status_code == 302
    while services.flush_pending():
        pass
    assert VisitRecord.objects.filter(link=link).count() == 3
