"""The product on a Redis Cluster (REDIS_CLUSTER=1): three masters started here on spare
loopback ports, never the shared Redis. Links are created, redirected from memory and from
Redis, revoked, and their visits forwarded, stored and rolled up, with the link entries spread
over the masters and every multi-key script inside one hash slot.
"""

import subprocess

import pytest
from django.test import Client

from analytics import capture, services, spool
from analytics.models import HourlyClick, VisitRecord
from core.redis_conn import redis_client, reset_redis_state, uses_cluster
from links import cache as link_cache
from links.services.change import link_revoke
from links.services.create import link_create
from tests import redis_servers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory):
    redis_servers.require("redis-server", "redis-cli")
    # Each node's cluster bus port (port + 10,000) must be free and valid too.
    ports = redis_servers.free_ports(
        3, also_free=lambda port: port < 55_000 and redis_servers.is_free(port + 10_000)
    )
    servers = [
        redis_servers.start(
            tmp_path_factory.mktemp(f"cluster-{port}"),
            port,
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
        )
        for port in ports
    ]
    try:
        redis_servers.wait_answering(ports)
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
        redis_servers.wait_until(
            lambda: "cluster_state:ok" in redis_servers.cli(ports[0], "cluster", "info"),
            timeout=20,
            what="the throw-away cluster's state ok",
        )
        yield f"redis://127.0.0.1:{ports[0]}/0"
    finally:
        redis_servers.stop(servers)


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
