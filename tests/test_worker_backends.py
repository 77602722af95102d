"""The services pass's workers each take their own Redis database numbers
(tests/worker_backends.py): two sharing one would flush each other's cache and take each
other's Celery tasks."""

import pytest

from tests.worker_backends import moved


def test_the_first_worker_keeps_the_configured_numbers():
    assert moved("redis://127.0.0.1:6379/15", 0) == "redis://127.0.0.1:6379/15"


def test_later_workers_step_down_two_numbers_each_so_cache_and_broker_never_meet():
    cache = [moved("redis://127.0.0.1:6379/15", n) for n in range(3)]
    broker = [moved("redis://127.0.0.1:6379/14", n) for n in range(3)]
    numbers = [url.rsplit("/", 1)[1] for url in cache + broker]
    assert numbers == ["15", "13", "11", "14", "12", "10"]


def test_a_url_without_a_database_number_is_left_alone():
    assert moved("redis://127.0.0.1:6379", 2) == "redis://127.0.0.1:6379"


def test_running_out_of_database_numbers_is_an_error_not_a_shared_database():
    with pytest.raises(RuntimeError, match="too many test workers"):
        moved("redis://127.0.0.1:6379/5", 2)
