"""The services pass's workers each take their own Redis database numbers
(tests/worker_backends.py): two sharing one would flush each other's cache and take each
other's Celery tasks."""

import pytest

from tests.worker_backends import SharedBackend, check_apart, moved


def test_the_first_worker_keeps_the_configured_numbers():
    assert moved("redis://127.0.0.1:6379/15", 0) == "redis://127.0.0.1:6379/15"


def test_later_workers_step_down_two_numbers_each_so_cache_and_broker_never_meet():
    cache = [moved("redis://127.0.0.1:6379/15", n) for n in range(3)]
    broker = [moved("redis://127.0.0.1:6379/14", n) for n in range(3)]
    numbers = [url.rsplit("/", 1)[1] for url in cache + broker]
    assert numbers == ["15", "13", "11", "14", "12", "10"]


def test_tls_urls_and_their_options_keep_their_form():
    assert moved("rediss://cache:6380/15?ssl_cert_reqs=none", 1) == (
        "rediss://cache:6380/13?ssl_cert_reqs=none"
    )


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379", "amqp://guest@127.0.0.1:5672//"])
def test_a_url_no_worker_can_have_alone_stops_the_run_instead_of_being_shared(url):
    assert moved(url, 0) == url  # one process: nothing to share
    with pytest.raises(SharedBackend, match="SERVICES_WORKERS=0"):
        moved(url, 1)


def test_running_out_of_database_numbers_is_an_error_not_a_shared_database():
    with pytest.raises(SharedBackend, match="too many test workers"):
        moved("redis://127.0.0.1:6379/5", 2)


def test_cache_and_broker_numbers_an_even_gap_apart_would_meet_and_are_refused():
    check_apart("redis://h:6379/15", "redis://h:6379/14")  # next to each other: apart
    with pytest.raises(SharedBackend, match="differ by an even number"):
        check_apart("redis://h:6379/15", "redis://h:6379/13")
