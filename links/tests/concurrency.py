"""Real threads, each with its own database connection, released together: what the races
the services must survive look like in a test."""

import threading

from django.db import connections


def all_at_once(count: int, call) -> tuple[list, list[str]]:
    """Run call(i) in `count` threads released together; (results, errors)."""
    results, errors = [], []
    barrier = threading.Barrier(count)

    def worker(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(call(i))
        except Exception as exc:  # collected and asserted by the caller
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results, errors
