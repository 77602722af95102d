"""The embedded mode's visit buffer: append-only files on local disk instead of a Redis list.

Each web process appends one JSON line per click to its own file, `visits-<pid>-<id>.jsonl`
(one `write()` to an O_APPEND file: no lock to wait for, no database write on the redirect),
and holds an flock on it while it writes there. The background runner
(shorturl_project.embedded) reads every file from where it stopped, stores the complete lines in
batches and remembers how far it got in `<file>.offset`. A file whose lock is free belongs to no
live process (it died, or moved on to a new file): once read to the end it is deleted.

What survives: a line is in the kernel's page cache once `write()` returns, which is before the
redirect is answered, so a SIGKILLed web process loses no visit it answered; the runner itself
may die mid-batch and the next one reads the batch again, the event id keeping each visit once.
A power cut can lose the last seconds not yet written to disk.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from core.node_state import node_lock, state_dir

logger = logging.getLogger(__name__)

PREFIX = "visits-"
SUFFIX = ".jsonl"
# A process starts a new file past this size so that read files can be deleted.
ROTATE_BYTES = 8 * 1024 * 1024
# Held while spooled visits are read and while pending hours are taken: one at a time per node.
SPOOL_LOCK = "spool"


class _Writer:
    """The current spool file of this process (reopened after a fork or a rotation)."""

    def __init__(self):
        self.path = state_dir() / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}"
        # Created and locked under a name drains do not list, then renamed: a drain must never
        # see the file unlocked (it would take it for abandoned and delete it).
        creating = self.path.with_name(self.path.name + ".creating")
        self.fd = os.open(creating, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)  # "a live process writes here"
        os.rename(creating, self.path)
        self.written = 0

    def close(self) -> None:
        os.close(self.fd)  # also drops the lock: the file is the runner's from now on


# "retired": the file before the current one, closed only at the next rotation: another thread
# may still be in its write() when a rotation happens (closing at once could make that write
# fail, or land in whatever file reuses the descriptor number).
_writer: dict[str, _Writer | None] = {"current": None, "retired": None}
_writer_lock = threading.Lock()


def _let_go_of_files() -> None:
    """Close this process's spool files; the next visit opens a new one. In a forked child the
    parent's files stay the parent's (closing this copy of the descriptor keeps the parent's
    lock); after a settings change (tests) the next file goes to the new state dir."""
    for role in ("current", "retired"):
        writer = _writer[role]
        _writer[role] = None
        if writer is not None:
            writer.close()


os.register_at_fork(after_in_child=_let_go_of_files)


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs) -> None:
    if setting == "NODE_STATE_DIR":  # a running server never changes it
        _let_go_of_files()


def _current_writer() -> _Writer:
    writer = _writer["current"]
    if writer is None or writer.written >= ROTATE_BYTES:
        with _writer_lock:
            writer = _writer["current"]
            if writer is not None:
                if writer.written < ROTATE_BYTES:
                    return writer
                retired = _writer["retired"]
                if retired is not None:
                    retired.close()  # drops its lock: the runner reads it to the end, deletes it
                _writer["retired"] = writer
            writer = _writer["current"] = _Writer()
    return writer


def append(record: str) -> None:
    """Keep one visit record (a line of JSON). Raises OSError when it could not be written."""
    line = (record.replace("\n", " ") + "\n").encode()
    writer = _current_writer()
    written = os.write(writer.fd, line)
    writer.written += written
    if written != len(line):
        raise OSError(f"short write to {writer.path} ({written} of {len(line)} bytes)")


# --- Reading (the runner, or drain_visits) ---------------------------------------------------


@dataclass
class SpoolFile:
    path: Path

    @property
    def offset_path(self) -> Path:
        return self.path.with_name(self.path.name + ".offset")

    def offset(self) -> int:
        try:
            return int(self.offset_path.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def save_offset(self, offset: int) -> None:
        temporary = self.offset_path.with_name(self.offset_path.name + ".tmp")
        temporary.write_text(str(offset))
        os.replace(temporary, self.offset_path)

    def abandoned(self) -> bool:
        """True when no process writes here any more (its writer's lock is free)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        finally:
            os.close(fd)
        return True

    def remove(self) -> None:
        for path in (self.path, self.offset_path):
            path.unlink(missing_ok=True)


def spool_files() -> list[SpoolFile]:
    """The spool files of this node, oldest first."""
    return [SpoolFile(path) for path in sorted(state_dir().glob(f"{PREFIX}*{SUFFIX}"))]


def _complete_lines(spool: SpoolFile, start: int, limit: int) -> Iterator[tuple[list[str], int]]:
    """Batches of up to `limit` complete lines from `start`, each with the offset after it."""
    with open(spool.path, "rb") as handle:
        handle.seek(start)
        batch: list[str] = []
        position = start
        for raw in handle:
            if not raw.endswith(b"\n"):
                break  # a line still being written (or cut short by a crash): not yet
            position += len(raw)
            batch.append(raw.decode("utf-8", errors="replace"))
            if len(batch) >= limit:
                yield batch, position
                batch = []
        if batch:
            yield batch, position


def drain(
    store: Callable[[list[str]], object],
    *,
    batch_size: int | None = None,
    limit: int | None = None,
    deadline: float | None = None,
) -> int:
    """Hand every complete spooled line to `store` in batches; returns how many lines were read.

    `limit`: stop after about that many lines (whole batches); the rest waits for the next call.
    `deadline` (time.monotonic()): wait for the node's lock until then at most (NodeLockBusy),
    and stop after the batch that passes it.

    `store` must be idempotent per record (it is: event ids), because a batch whose offset was
    not saved before a crash is read again. One drain at a time per node (the runner and the
    drain_visits command may both call this).
    """
    batch_size = batch_size or settings.ANALYTICS_BATCH_SIZE
    read = 0
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    with node_lock(SPOOL_LOCK, timeout=wait):
        for spool in spool_files():
            # Checked before reading: a writer that lets go after this check may still add
            # lines, which the next drain reads before it deletes the file.
            abandoned = spool.abandoned()
            offset = spool.offset()
            for lines, end in _complete_lines(spool, offset, batch_size):
                store(lines)
                spool.save_offset(end)
                offset = end
                read += len(lines)
                if limit is not None and read >= limit:
                    return read  # this file is not finished: it is not removed
                if deadline is not None and time.monotonic() >= deadline:
                    return read
            if abandoned:
                if spool.path.stat().st_size > offset:
                    logger.warning("Dropping an incomplete last line of %s", spool.path.name)
                spool.remove()
    return read


# --- Hours waiting for their roll-up (the embedded twin of analytics:hours in Redis) ----------

HOURS_FILE = "hours.pending"
AGGREGATING_FILE = "hours.aggregating"


def mark_hours(members: list[str]) -> None:
    """Note "link_id:hour_epoch" pairs to recompute (inside drain, which holds SPOOL_LOCK);
    written before the visits commit, so a crash can only cause a needless recompute."""
    if not members:
        return
    with open(state_dir() / HOURS_FILE, "a", encoding="ascii") as handle:
        handle.write("".join(member + "\n" for member in members))


def take_hours() -> list[str]:
    """Move the pending pairs aside (merged with a leftover from a crashed roll-up) and return
    them; pairs marked later wait for the next roll-up. Call hours_done() after."""
    with node_lock(SPOOL_LOCK):
        return _take_hours()


def _take_hours() -> list[str]:
    directory = state_dir()
    pending, aggregating = directory / HOURS_FILE, directory / AGGREGATING_FILE
    if pending.exists():
        if aggregating.exists():
            with open(aggregating, "a", encoding="ascii") as handle:
                handle.write(pending.read_text(encoding="ascii"))
            pending.unlink()
        else:
            os.replace(pending, aggregating)
    if not aggregating.exists():
        return []
    return sorted(set(aggregating.read_text(encoding="ascii").split()))


def hours_done() -> None:
    (state_dir() / AGGREGATING_FILE).unlink(missing_ok=True)


def pending_visits() -> int:
    """Spooled visits not stored yet (for the overview; reads the unread part of each file)."""
    waiting = 0
    for spooled in spool_files():
        try:
            with open(spooled.path, "rb") as handle:
                handle.seek(spooled.offset())
                waiting += sum(
                    chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b"")
                )
        except FileNotFoundError:
            continue
    return waiting
