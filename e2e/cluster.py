"""A whole multi-machine topology on loopback, for the failover drills (e2e/drills/, `make drills`).

- MariaDB Galera: three nodes (Debian's mariadb-server and galera-4), each its own data
  directory and ports; the second and third join by a full copy from a donor (mariabackup SST).
- Redis with Sentinel: one master, two replicas, three sentinels (quorum 2).
- HAProxy (deploy/haproxy/haproxy.cfg, the file production starts from) in front of the web
  nodes (checking /healthz/node) and of the Galera nodes (deploy/haproxy/galera-check: Synced only).
- Two web nodes started with `make serve`, two Celery workers (`make worker`) and one beat, all
  from the production install (requirements.txt only), each web node with its own node state.

Nothing here touches the shared MariaDB (3306) or Redis (6379). Every process is stopped by
`Cluster.stop()`; logs stay in test-artifacts/drills/.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import harness
from harness import HOST, HarnessError, Proc, free_port, start_process, wait_until

ARTIFACTS = harness.REPO / "test-artifacts" / "drills"
HAPROXY_DIR = harness.REPO / "deploy" / "haproxy"
GALERA_PROVIDER = "/usr/lib/galera/libgalera_smm.so"
SENTINEL_MASTER = "shorturl"
DATABASE = "shorturl"
# Per web node: one process of four threads, so that two nodes, two workers, three database
# nodes, six Redis processes and the load all fit on a 2-core machine.
WEB_CONCURRENCY = 1


def redis_cli(port: int, *args: str) -> str:
    return harness.run(
        ["redis-cli", "-h", HOST, "-p", str(port), *args], env=harness.clean_env(), timeout=10
    ).strip()


@dataclass(repr=False)
class Node:
    """One server process of the cluster (a Redis server, a sentinel), on its own port."""

    name: str
    workdir: Path
    log_path: Path
    port: int = field(default_factory=free_port)
    proc: Proc | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"


@dataclass(repr=False)
class GaleraNode(Node):
    """A MariaDB Galera node: its client port, and its own ports for the group, IST and SST."""

    gcomm_port: int = field(default_factory=free_port)
    ist_port: int = field(default_factory=free_port)
    sst_port: int = field(default_factory=free_port)

    def status(self, name: str) -> str:
        out = harness.mariadb(f"SHOW GLOBAL STATUS LIKE '{name}'", self.port, timeout=5)
        return out.split("\t", 1)[1].strip() if "\t" in out else ""

    def synced(self) -> bool:
        try:
            return self.status("wsrep_local_state") == "4"
        except HarnessError:
            return False


@dataclass(repr=False)
class Cluster:
    workdir: Path
    env: dict[str, str]  # what every product process of the cluster gets
    galera: list[GaleraNode] = field(default_factory=list)
    redis: list[Node] = field(default_factory=list)
    sentinels: list[Node] = field(default_factory=list)
    haproxy: Proc | None = None
    web_port: int = field(default_factory=free_port)
    db_port: int = field(default_factory=free_port)
    db_any_port: int = field(default_factory=free_port)
    stats_port: int = field(default_factory=free_port)
    web: dict[str, harness.Deployment] = field(default_factory=dict)
    workers: dict[str, Proc] = field(default_factory=dict)
    beat: Proc | None = None
    front: harness.Deployment | None = None  # the web front (HAProxy), with the demo API key

    def __repr__(self) -> str:
        return f"Cluster(http://{HOST}:{self.web_port})"

    # -- Galera

    def _galera_config(self, node: GaleraNode, *, bootstrap: bool) -> Path:
        """The node's own my.cnf. A file rather than arguments: the SST script hands the server's
        arguments to mariadb-backup, which refuses them when they start with --no-defaults."""
        members = ",".join(f"{HOST}:{n.gcomm_port}" for n in self.galera)
        options = ";".join(
            (
                f"gmcast.listen_addr=tcp://{HOST}:{node.gcomm_port}",
                f"ist.recv_addr={HOST}:{node.ist_port}",
                "gcache.size=128M",
                # Loopback: a node that stops answering is let go of in a few seconds.
                "evs.suspect_timeout=PT3S",
                "evs.inactive_timeout=PT6S",
            )
        )
        settings = {
            "datadir": node.workdir / "data",
            "port": node.port,
            "bind-address": HOST,
            "socket": node.workdir / "mariadb.sock",
            "pid-file": node.workdir / "mariadb.pid",
            "user": "root",
            "innodb-buffer-pool-size": "64M",
            "innodb-flush-log-at-trx-commit": 2,
            # What Galera needs: row-based replication, interleaved auto-increment locks, InnoDB.
            "binlog-format": "ROW",
            "innodb-autoinc-lock-mode": 2,
            "default-storage-engine": "InnoDB",
            "wsrep-on": "ON",
            "wsrep-provider": GALERA_PROVIDER,
            "wsrep-cluster-name": "shorturl-drills",
            "wsrep-cluster-address": f"gcomm://{'' if bootstrap else members}",
            "wsrep-node-name": node.name,
            "wsrep-node-address": f"{HOST}:{node.gcomm_port}",
            "wsrep-node-incoming-address": f"{HOST}:{node.port}",
            "wsrep-provider-options": f'"{options}"',
            "wsrep-sst-method": "mariabackup",
            "wsrep-sst-auth": "root:",
            "wsrep-sst-receive-address": f"{HOST}:{node.sst_port}",
            "wsrep-slave-threads": 2,
        }
        config = node.workdir / "my.cnf"
        lines = ["[mysqld]", *(f"{key}={value}" for key, value in settings.items())]
        config.write_text("\n".join(lines) + "\n")
        return config

    def start_galera_node(self, node: GaleraNode, *, bootstrap: bool = False) -> None:
        harness.init_mariadb_datadir(node.workdir / "data")
        config = self._galera_config(node, bootstrap=bootstrap)
        node.proc = start_process(
            node.name,
            [shutil.which("mariadbd") or "/usr/sbin/mariadbd", f"--defaults-file={config}"],
            env=harness.clean_env(),
            log_path=node.log_path,
        )
        # A joiner first takes a full copy (SST) or the writes it missed (IST) from a donor.
        wait_until(
            lambda: node.proc.exited() is None and node.synced(),
            timeout=180,
            what=f"Galera {node.name} on port {node.port} to be Synced",
        )

    def galera_size(self, node: GaleraNode) -> int:
        return int(node.status("wsrep_cluster_size") or 0)

    # -- Redis and Sentinel

    def start_redis_node(self, node: Node, *, replica_of: int | None) -> None:
        node.workdir.mkdir(parents=True, exist_ok=True)
        # A master refuses writes it cannot copy to a replica: with the product's WAIT after
        # each forwarded batch, no acknowledged visit lives on the master alone.
        more = ["--min-replicas-to-write", "1", "--min-replicas-max-lag", "10"]
        if replica_of is not None:
            more += ["--replicaof", HOST, str(replica_of)]
        node.proc, _ = harness.start_redis(
            node.workdir, node.log_path, node.port, *more, name=node.name
        )

    def start_sentinel(self, node: Node, master_port: int) -> None:
        node.workdir.mkdir(parents=True, exist_ok=True)
        conf = node.workdir / "sentinel.conf"
        if not conf.exists():  # sentinel rewrites its file with what it learns; keep that
            conf.write_text(
                f"port {node.port}\n"
                f"bind {HOST}\n"
                f"dir {node.workdir}\n"
                f"sentinel monitor {SENTINEL_MASTER} {HOST} {master_port} 2\n"
                f"sentinel down-after-milliseconds {SENTINEL_MASTER} 1000\n"
                f"sentinel failover-timeout {SENTINEL_MASTER} 6000\n"
                f"sentinel parallel-syncs {SENTINEL_MASTER} 1\n"
            )
        node.proc = start_process(
            node.name,
            [shutil.which("redis-sentinel") or "redis-sentinel", str(conf)],
            env=harness.clean_env(),
            log_path=node.log_path,
        )
        harness.wait_answering(
            node.proc, lambda: harness.redis_ping(node.port), 20, f"{node.name} on port {node.port}"
        )

    def redis_master_port(self) -> int:
        out = redis_cli(
            self.sentinels[0].port, "SENTINEL", "get-master-addr-by-name", SENTINEL_MASTER
        )
        return int(out.split()[-1])

    def redis_node_at(self, port: int) -> Node:
        return next(node for node in self.redis if node.port == port)

    def linked_replicas(self) -> int:
        info = redis_cli(self.redis_master_port(), "INFO", "replication")
        return sum(
            1 for line in info.splitlines() if line.startswith("slave") and "state=online" in line
        )

    # -- HAProxy

    def start_haproxy(self) -> None:
        env = harness.clean_env(
            WEB_LISTEN=f"{HOST}:{self.web_port}",
            WEB_HOST="localhost",
            DB_LISTEN=f"{HOST}:{self.db_port}",
            DB_ANY_LISTEN=f"{HOST}:{self.db_any_port}",
            STATS_LISTEN=f"{HOST}:{self.stats_port}",
            ADMIN_SOCKET=str(self.admin_socket),
            WEB1=f"{HOST}:{self.web['web1'].port}",
            WEB2=f"{HOST}:{self.web['web2'].port}",
            DB1=self.galera[0].address,
            DB2=self.galera[1].address,
            DB3=self.galera[2].address,
            GALERA_CHECK=str(HAPROXY_DIR / "galera-check"),
            ERRORFILE_503=str(HAPROXY_DIR / "503.http"),
        )
        config = HAPROXY_DIR / "haproxy.cfg"
        harness.run([shutil.which("haproxy") or "haproxy", "-c", "-f", str(config)], env=env)
        self.haproxy = start_process(
            "haproxy",
            [shutil.which("haproxy") or "haproxy", "-W", "-db", "-f", str(config)],
            env=env,
            log_path=ARTIFACTS / "haproxy.log",
        )

    @property
    def admin_socket(self) -> Path:
        return self.workdir / "haproxy.sock"

    def haproxy_admin(self, command: str) -> str:
        """One command on HAProxy's admin socket (e.g. "show errors"); its answer."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.admin_socket))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode(errors="replace")

    def haproxy_backends_up(self) -> dict[str, str]:
        """server name → UP/DOWN/... for the web nodes and the one-writer database front."""
        answer = harness.get_fresh(self.stats_port, "/;csv", timeout=5)
        rows = [line.split(",") for line in answer.body.decode().splitlines() if line]
        return {f"{row[0]}/{row[1]}": row[17] for row in rows[1:] if len(row) > 17}

    # -- the product's processes

    def _node_env(self, name: str, port: int, *, db_port: int | None = None) -> dict[str, str]:
        env = dict(self.env)
        if db_port is not None:
            env["DATABASE_URL"] = f"mysql://root@{HOST}:{db_port}/{DATABASE}"
        env.update(
            PORT=str(port),
            PIDFILE=str(self.workdir / name / "server.pid"),
            NODE_STATE_DIR=str(self.workdir / name / "node-state"),
            STATIC_ROOT=str(self.workdir / name / "static"),
        )
        return env

    def _web_deployment(self, name: str) -> harness.Deployment:
        """A web node's Deployment, not started (HAProxy needs its port before it runs)."""
        port = free_port()
        (self.workdir / name).mkdir(parents=True, exist_ok=True)
        dep = self.web[name] = harness.Deployment(
            mode="services",
            port=port,
            env=self._node_env(name, port),
            workdir=self.workdir / name,
            log_dir=ARTIFACTS,
            pidfile=self.workdir / name / "server.pid",
        )
        return dep

    def start_web(self, name: str) -> harness.Deployment:
        dep = self.web[name]
        dep.procs["web"] = start_process(
            name,
            [*harness.make_command("serve"), f"HOST={HOST}", f"PORT={dep.port}"],
            env=dep.env,
            log_path=ARTIFACTS / f"{name}.log",
        )
        wait_until(
            lambda: (
                dep.procs["web"].exited() is None
                and harness.get_fresh(dep.port, "/healthz", timeout=5).status == 200
            ),
            timeout=harness.START_TIMEOUT,
            what=f"{name} on port {dep.port} to answer /healthz with 200",
        )
        return dep

    def kill_web(self, name: str) -> None:
        """SIGKILL the whole node (server, its workers and its runner), as a host dying would."""
        _kill(self.web[name].procs.pop("web"))

    def start_worker(self, name: str) -> Proc:
        log_path = ARTIFACTS / f"{name}.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        proc = start_process(
            name,
            [*harness.make_command("worker"), f"WORKER_NAME={name}@%h"],
            # Workers store visits on any synced node: certification conflicts between them are
            # what the product's retries are for.
            env=self._node_env(name, 0, db_port=self.db_any_port),
            log_path=log_path,
        )
        self.workers[name] = proc
        _wait_for_line(proc, rf"{name}@\S+ ready\.", offset=offset)
        return proc

    def kill_worker(self, name: str) -> None:
        _kill(self.workers.pop(name))

    # -- logs

    def count_in_logs(self, pattern: str, offsets: dict[Path, int]) -> int:
        """Lines matching `pattern` written to any log since `offsets` were taken."""
        regex = re.compile(pattern)
        found = 0
        for path in ARTIFACTS.glob("*.log"):
            text = harness.tail(path, start=offsets.get(path, 0), max_lines=10**7)
            found += sum(1 for line in text.splitlines() if regex.search(line))
        return found

    # -- everything

    def stop(self) -> None:
        procs: list[Proc | None] = [self.haproxy]
        procs += [dep.procs.get("web") for dep in self.web.values()]
        procs += [self.beat, *self.workers.values()]
        procs += [node.proc for node in self.sentinels + self.redis + self.galera]
        for proc in procs:
            if proc is not None and proc.exited() is None:
                proc.stop(grace=10)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _kill(proc: Proc) -> None:
    """SIGKILL `proc`'s whole process group and wait for it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pgid, signal.SIGKILL)
    proc.popen.wait(timeout=10)


def _wait_for_line(proc: Proc, pattern: str, *, offset: int = 0, timeout: float = 90) -> None:
    """Wait until `proc`'s log says `pattern` after byte `offset` (a restarted process appends
    to the log its first run wrote)."""
    regex = re.compile(pattern)

    def said() -> bool:
        if proc.exited() is not None:
            raise HarnessError(f"{proc.name} exited:\n{harness.tail(proc.log_path, start=offset)}")
        return bool(regex.search(harness.tail(proc.log_path, start=offset, max_lines=10_000)))

    wait_until(said, timeout=timeout, interval=0.25, what=f"{proc.name} to say {pattern!r}")


def start_cluster(venv: Path, *, progress=print) -> Cluster:
    """Start every part, in dependency order; on failure stop what was started and raise."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    workdir = Path(tempfile.mkdtemp(prefix="shorturl-drills-"))
    cluster = Cluster(workdir=workdir, env={})
    try:
        began = time.monotonic()
        cluster.galera = [
            GaleraNode(f"galera{i}", workdir / f"galera{i}", ARTIFACTS / f"galera{i}.log")
            for i in (1, 2, 3)
        ]
        for node in cluster.galera:
            node.workdir.mkdir(parents=True)
        cluster.start_galera_node(cluster.galera[0], bootstrap=True)
        for node in cluster.galera[1:]:
            cluster.start_galera_node(node)
        harness.mariadb(
            f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
            cluster.galera[0].port,
        )
        progress(f"Galera: 3 nodes synced in {time.monotonic() - began:.0f} s")

        cluster.redis = [
            Node(f"redis{i}", workdir / f"redis{i}", ARTIFACTS / f"redis{i}.log") for i in (1, 2, 3)
        ]
        master = cluster.redis[0]
        cluster.start_redis_node(master, replica_of=None)
        for node in cluster.redis[1:]:
            cluster.start_redis_node(node, replica_of=master.port)
        cluster.sentinels = [
            Node(f"sentinel{i}", workdir / f"sentinel{i}", ARTIFACTS / f"sentinel{i}.log")
            for i in (1, 2, 3)
        ]
        for node in cluster.sentinels:
            cluster.start_sentinel(node, master.port)
        wait_until(lambda: cluster.linked_replicas() == 2, timeout=30, what="2 Redis replicas")
        progress("Redis: a master, 2 replicas, 3 sentinels")

        sentinels = ",".join(f"{HOST}:{node.port}" for node in cluster.sentinels)
        # A deployment's settings as the e2e layer gives them (harness.base_env), for several
        # nodes: the visitor's own X-Forwarded-For then HAProxy's, one process a node.
        cluster.env = harness.base_env(0, workdir / "unused.pid")
        cluster.env.update(
            NUM_PROXIES="2",
            WEB_CONCURRENCY=str(WEB_CONCURRENCY),
            DATABASE_URL=f"mysql://root@{HOST}:{cluster.db_port}/{DATABASE}",
            REDIS_SENTINELS=sentinels,
            REDIS_SENTINEL_MASTER=SENTINEL_MASTER,
            BEAT_SCHEDULE=str(workdir / "celerybeat-schedule"),
        )
        # The web nodes need HAProxy's database front, HAProxy needs the web nodes' ports.
        for name in ("web1", "web2"):
            cluster._web_deployment(name)
        cluster.start_haproxy()
        wait_until(
            lambda: cluster.haproxy_backends_up().get("galera_one_writer/db1") == "UP",
            timeout=30,
            what="HAProxy to see the Galera writer up",
        )
        for name in ("web1", "web2"):  # one after the other: the first one migrates
            cluster.start_web(name)
        progress(f"web: 2 nodes (make serve) behind HAProxy on port {cluster.web_port}")

        front = harness.Deployment(
            mode="services",
            port=cluster.web_port,
            env=cluster._node_env("web1", cluster.web["web1"].port),
            workdir=workdir,
            log_dir=ARTIFACTS,
            pidfile=workdir / "front.pid",
        )
        front.manage("ensure_demo_users")
        match = re.search(r"\b([0-9a-f]{40})\b", front.manage("drf_create_token", "demo"))
        if not match:
            raise HarnessError("no API token for demo")
        front.token = match.group(1)
        cluster.front = front
        wait_until(
            lambda: all(
                state == "UP"
                for name, state in cluster.haproxy_backends_up().items()
                if name.startswith("web_nodes/web")
            ),
            timeout=30,
            what="HAProxy to see both web nodes up",
        )

        for name in ("worker1", "worker2"):
            cluster.start_worker(name)
        cluster.beat = start_process(
            "beat",
            harness.make_command("beat"),
            env=cluster._node_env("beat", 0),
            log_path=ARTIFACTS / "beat.log",
        )
        _wait_for_line(cluster.beat, r"beat: Starting")
        progress(
            f"Celery: 2 workers and beat; the cluster was up in {time.monotonic() - began:.0f} s"
        )
    except BaseException:
        cluster.stop()
        raise
    return cluster
