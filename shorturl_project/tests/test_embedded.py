"""The embedded mode's node-local state: shared generations and the one background runner."""

import threading
import time

from core import node_state
from links.cache import ProcessCache
from shorturl_project import embedded


def test_a_bump_seen_through_another_mapping_of_the_table(settings, tmp_path):
    """Two processes map the same file: a bump through one is read through the other."""
    settings.NODE_STATE_DIR = str(tmp_path)
    here = node_state.GenerationTable(tmp_path / "generations")
    there = node_state.GenerationTable(tmp_path / "generations")
    before = here.read("spring-sale")
    there.bump("spring-sale")
    assert here.read("spring-sale") == before + 1


def test_a_cached_entry_is_dropped_once_its_code_changed_elsewhere(settings, tmp_path):
    settings.NODE_STATE_DIR = str(tmp_path)
    cache = ProcessCache()
    tag = node_state.generations().read("spring-sale")
    cache.put("spring-sale", "old entry", ttl=60, generation=tag)
    assert cache.get("spring-sale") == "old entry"
    node_state.GenerationTable(tmp_path / "generations").bump("spring-sale")  # "another process"
    assert cache.get("spring-sale") is None


def test_an_entry_read_before_a_change_is_not_kept(settings, tmp_path):
    """Tagged with the counter read before the database read: a change committed meanwhile
    makes the entry stale at once."""
    settings.NODE_STATE_DIR = str(tmp_path)
    cache = ProcessCache()
    tag = node_state.generations().read("abc")
    node_state.generations().bump("abc")  # committed while the old row was being read
    cache.put("abc", "old row", ttl=60, generation=tag)
    assert cache.get("abc") is None


def _counting_job(counter: list[str], name: str) -> embedded.Job:
    return embedded.Job(name, 0.01, lambda: counter.append(name))


def test_one_runner_per_node_and_another_takes_over(settings, tmp_path):
    settings.NODE_STATE_DIR = str(tmp_path)
    ran: list[str] = []
    first = embedded.Runner([_counting_job(ran, "first")])
    second = embedded.Runner([_counting_job(ran, "second")])
    second.RETRY_LOCK_SECONDS = 0.05
    first.start()
    time.sleep(0.2)
    second.start()
    time.sleep(0.3)
    assert "first" in ran and "second" not in ran, "only the lock holder runs jobs"
    first.stopping.set()
    first.join(5)
    deadline = time.monotonic() + 5
    while "second" not in ran and time.monotonic() < deadline:
        time.sleep(0.05)
    second.stopping.set()
    second.join(5)
    assert "second" in ran, "the waiting runner took over"


def test_a_failing_job_does_not_stop_the_others(settings, tmp_path, caplog):
    settings.NODE_STATE_DIR = str(tmp_path)
    ran: list[str] = []

    def broken():
        raise RuntimeError("boom")

    runner = embedded.Runner([embedded.Job("broken", 0.01, broken), _counting_job(ran, "ok")])
    runner.start()
    deadline = time.monotonic() + 5
    while len(ran) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    runner.stopping.set()
    runner.join(5)
    assert len(ran) >= 3
    assert any("broken" in r.getMessage() for r in caplog.records)


def test_the_wsgi_wrapper_starts_one_runner_per_process(settings, tmp_path, monkeypatch):
    settings.NODE_STATE_DIR = str(tmp_path)
    started = []
    monkeypatch.setattr(embedded, "ensure_runner", lambda: started.append(threading.get_ident()))
    app = embedded.WithBackgroundJobs(lambda environ, start_response: [b"ok"])
    for _ in range(3):
        assert app({}, None) == [b"ok"]
    assert len(started) == 1


def test_a_forked_process_writes_its_own_spool_file(settings, tmp_path):
    """A server that forks workers after the parent wrote a visit: each process keeps its own
    file (and lock), so the parent's file is not taken for abandoned while the child lives."""
    import os

    from analytics import spool

    settings.NODE_STATE_DIR = str(tmp_path)
    spool.append('{"parent": 1}')
    pid = os.fork()
    if pid == 0:  # the child: one visit, then gone without running pytest's teardown
        try:
            spool.append('{"child": 1}')
            node_state.generations().bump("child-code")
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    files = spool.spool_files()
    assert len(files) == 2, [f.path.name for f in files]
    assert sorted(f.path.read_text() for f in files) == ['{"child": 1}\n', '{"parent": 1}\n']
    assert not next(f for f in files if "parent" in f.path.read_text()).abandoned()
    assert node_state.generations().read("child-code") == 1


def test_threads_of_one_process_never_lose_a_bump(settings, tmp_path):
    """flock excludes other processes but not this process's threads (they share the
    descriptor): without a thread lock two request threads could both read v and write v+1,
    and a counter that goes back can make a stale entry valid again."""
    import sys

    from core.node_state import GenerationTable

    table = GenerationTable(tmp_path / "generations")
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [
            threading.Thread(target=lambda: [table.bump("spring-sale") for _ in range(3000)])
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(before)
    assert table.read("spring-sale") == 12_000


def test_every_mode_serves_through_the_node_runner_wrapper():
    """The node's runner does the Redis part of changes made during an outage and loads the code
    set in services mode too, also with SHORTURL_LOCAL_REDIRECTS off: the WSGI app must start
    it in every mode."""
    from shorturl_project import wsgi

    assert isinstance(wsgi.application, embedded.WithBackgroundJobs)


def test_a_job_that_waits_by_itself_is_not_run_in_a_busy_loop_when_it_fails(settings, tmp_path):
    """The sync job runs again at once (its blocking read is its pause), but when it fails
    without waiting (Redis refusing connections) the runner pauses before the next run."""
    settings.NODE_STATE_DIR = str(tmp_path)
    runs: list[float] = []

    def fails_at_once() -> bool:
        runs.append(time.monotonic())
        return False

    runner = embedded.Runner([embedded.Job("sync", 0.0, fails_at_once, waits_itself=True)])
    runner.start()
    deadline = time.monotonic() + 5
    while len(runs) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    runner.stopping.set()
    runner.join(5)
    assert len(runs) >= 2
    # A busy loop would have run it thousands of times before the second run's pause ended.
    assert runs[1] - runs[0] >= embedded.Runner.FAILED_PAUSE_SECONDS * 0.9
