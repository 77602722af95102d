"""A Bloom filter of every generated code, in a file of the node's state dir (`codes.filter`)
mapped into every web process, so that a made-up code of the generated shape (anyone can compute
its check character) is a 404 without a round trip to Redis or a query: a filter that lacks a
code says so for certain.

Reads are memory reads of the map, no lock and no system call. Adds (every create on this node,
and other nodes' creates read from the change stream by the node's sync) set the code's bits in
the shared map under the filter's own lock. A build writes a new file from the database and
puts it in place with os.replace; adds made meanwhile are noted in a journal which the build
replays before the replace, so none is lost. Processes notice the new file through a counter in
the generation table that the build bumps (readers), and through the path's inode (adds).

The filter is used only while it is marked complete; who builds it, and when it may be trusted,
is the rest of the link cache's business (codesets builds it, changes adds other nodes' codes):
the filter knows nothing of Redis or the database.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import math
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.core.signals import setting_changed
from django.dispatch import receiver

from core.node_state import generations, state_dir
from links.codes.shape import is_generated_shape

logger = logging.getLogger(__name__)

FILTER_FILE = "codes.filter"
# Present only while a build runs: the codes added since the build began to read the database.
JOURNAL_FILE = "codes.filter.journal"
# Taken by adds and by a build's start and end; a file of its own, as the filter is replaced.
_LOCK_FILE = "codes-filter.lock"
_BUILD_LOCK_FILE = "codes-filter-build.lock"  # one build at a time: they share the journal
# The generation-table key a build bumps after putting a new file in place (no code has a NUL).
GENERATION_KEY = "\0codes-filter"

_MAGIC = b"SUCODEFL"
_VERSION = 1
# magic, format version, hash count k, complete flag, bit count m, capacity, codes added,
# wall-clock time the build began to read the database.
_HEADER = struct.Struct("<8sHHIQQQd")
_HEADER_SIZE = 64  # the bits start here, 8-byte aligned
_COMPLETE_OFFSET = 12
_ADDED_OFFSET = 32
_FLAG = struct.Struct("<I")
_COUNT = struct.Struct("<Q")
_TWO_HASHES = struct.Struct("<QQ")

HASHES = 7  # k for ~1 % false positives at capacity (m/n = 9.6 bits per code)
BITS_PER_CODE = 9.6
MIN_CAPACITY = 100_000
# A build sizes for twice the codes it finds, so the filter stays under ~1 % false positives
# until the links have doubled; past its capacity it is built again, larger.
HEADROOM = 2


def capacity_for(codes: int) -> int:
    return max(HEADROOM * codes, MIN_CAPACITY)


def _bit_count(capacity: int) -> int:
    return math.ceil(capacity * BITS_PER_CODE / 64) * 64


def _hashes(code: str) -> tuple[int, int]:
    # One blake2b per code, split into two 64-bit hashes combined as h1 + i*h2 (Kirsch and
    # Mitzenmacher): the same positions in every process and on every machine, unlike hash(),
    # which is salted per process. The second is made odd so that the k positions differ.
    first, second = _TWO_HASHES.unpack(hashlib.blake2b(code.encode(), digest_size=16).digest())
    return first, second | 1


@dataclass(frozen=True, slots=True)
class FilterHeader:
    hashes: int
    bits: int
    capacity: int
    added: int
    complete: bool
    built_at: float


class CodeFilter:
    """One open filter file: its bits mapped read-write and shared with every process."""

    def __init__(self, path: Path):
        fd = os.open(path, os.O_RDWR)
        try:
            self.inode = os.fstat(fd).st_ino
            size = os.fstat(fd).st_size
            if size < _HEADER_SIZE:
                raise ValueError(f"{path}: too short for a code filter")
            # The map keeps its own reference to the file: the descriptor is not needed after.
            self._map = mmap.mmap(fd, size, mmap.MAP_SHARED)
        finally:
            os.close(fd)
        magic, version, hashes, _, bits, capacity, _, _ = _HEADER.unpack_from(self._map, 0)
        if magic != _MAGIC or version != _VERSION or size < _HEADER_SIZE + bits // 8:
            raise ValueError(f"{path}: not a code filter of format {_VERSION}")
        self.hashes, self.bits, self.capacity = hashes, bits, capacity

    @property
    def complete(self) -> bool:
        return self._map[_COMPLETE_OFFSET] == 1

    def header(self) -> FilterHeader:
        _, _, hashes, complete, bits, capacity, added, built_at = _HEADER.unpack_from(self._map)
        return FilterHeader(hashes, bits, capacity, added, complete == 1, built_at)

    def may_contain(self, code: str) -> bool:
        first, second = _hashes(code)
        bits, bitmap = self.bits, self._map
        for i in range(self.hashes):
            position = (first + i * second) % bits
            if not bitmap[_HEADER_SIZE + (position >> 3)] >> (position & 7) & 1:
                return False  # an unknown code usually stops at the first or second bit
        return True

    def _add(self, codes: Iterable[str]) -> None:
        """Set the codes' bits (the caller holds the filter's lock)."""
        added = _set_bits(self._map, _HEADER_SIZE, codes, self.hashes, self.bits)
        if added:
            total = _COUNT.unpack_from(self._map, _ADDED_OFFSET)[0] + added
            _COUNT.pack_into(self._map, _ADDED_OFFSET, total)

    def _mark_incomplete(self) -> None:
        _FLAG.pack_into(self._map, _COMPLETE_OFFSET, 0)


def _set_bits(bitmap, base: int, codes: Iterable[str], hashes: int, bits: int) -> int:
    """Set each code's bits in `bitmap` from byte `base` on; returns how many codes set at least
    one new bit (a code added again, an edited link's, does not count twice)."""
    added = 0
    for code in codes:
        first, second = _hashes(code)
        new = False
        for i in range(hashes):
            position = (first + i * second) % bits
            index = base + (position >> 3)
            mask = 1 << (position & 7)
            byte = bitmap[index]
            if not byte & mask:
                bitmap[index] = byte | mask
                new = True
        added += new
    return added


# --- This process's view -------------------------------------------------------------------

# "current": (the generation read before opening, the open filter or None when there is none).
# Maps are never closed by hand: another thread may be reading one; each goes with its last user.
_open: dict[str, tuple[int, CodeFilter | None] | None] = {"current": None}
_lock: dict[str, object] = {"fd": None, "threads": threading.Lock()}


@receiver(setting_changed)
def _settings_changed(setting: str, **kwargs) -> None:
    if setting == "NODE_STATE_DIR":  # tests switch state dirs; a running server never does
        _open["current"] = None
        fd = _lock["fd"]
        _lock["fd"] = None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _forked() -> None:
    # The child takes its own lock descriptor (the parent's would share the parent's flock) and
    # a fresh thread lock (another thread of the parent may have held it at the fork).
    _open["current"] = None
    _lock.update(fd=None, threads=threading.Lock())


os.register_at_fork(after_in_child=_forked)


def filter_path() -> Path:
    return state_dir() / FILTER_FILE


def _open_filter() -> CodeFilter | None:
    try:
        return CodeFilter(filter_path())
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # a file of another format: the next build replaces it


def _current() -> CodeFilter | None:
    """This process's open filter, reopened when a build put a new one in place: one read of
    the generation table per call."""
    generation = generations().read(GENERATION_KEY)
    current = _open["current"]
    if current is None or current[0] != generation:
        current = _open["current"] = (generation, _open_filter())
    return current[1]


def certainly_absent(code: str) -> bool:
    """True when `code` is of the generated shape and the node's complete filter lacks it, so
    no generated code is `code`. The caller decides whether the filter may be trusted yet."""
    if not is_generated_shape(code):
        return False
    current = _current()
    return current is not None and current.complete and not current.may_contain(code)


def header() -> FilterHeader | None:
    """The node's filter as it stands (None when there is none)."""
    current = _current()
    return None if current is None else current.header()


@contextmanager
def _locked() -> Iterator[None]:
    # flock excludes other processes only: this process's threads share the descriptor, so
    # they take a thread lock first (as GenerationTable does).
    with _lock["threads"]:
        fd = _lock["fd"]
        if fd is None:
            fd = _lock["fd"] = os.open(state_dir() / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _in_place() -> CodeFilter | None:
    """The filter now at the path (under the lock): a process whose map is of a file a build
    has since replaced opens the new one, so its adds are not lost with the old file."""
    current = _open["current"]
    try:
        inode = os.stat(filter_path()).st_ino
    except FileNotFoundError:
        if current is not None and current[1] is not None:
            # Deleted under the running node: the processes that still map it would refuse the
            # codes added from now on, so it stops counting for all of them (and is built again).
            current[1]._mark_incomplete()
        return None
    if current is None or current[1] is None or current[1].inode != inode:
        current = _open["current"] = (generations().read(GENERATION_KEY), _open_filter())
    return current[1]


def add(codes: Iterable[str]) -> None:
    """Note new generated codes (others are ignored): in the filter in place, and in the
    journal while a build runs."""
    generated = [code for code in codes if is_generated_shape(code)]
    if not generated:
        return
    with _locked():
        journal = state_dir() / JOURNAL_FILE
        try:
            fd = os.open(journal, os.O_WRONLY | os.O_APPEND)
        except FileNotFoundError:
            pass  # no build running
        else:
            try:
                os.write(fd, "".join(code + "\n" for code in generated).encode())
            except OSError:
                # A full disk: the build under way would lack these codes, so it must not call
                # its filter complete (it finds its journal gone).
                logger.warning("The code filter's journal could not be written", exc_info=True)
                with contextlib.suppress(OSError):
                    journal.unlink()
            finally:
                os.close(fd)
        current = _in_place()
        if current is not None:
            current._add(generated)


def mark_incomplete() -> None:
    """The filter in place may lack codes (changes were missed): unused until the next build."""
    with _locked():
        current = _in_place()
        if current is not None:
            current._mark_incomplete()


# Codes read between two calls of a build's `meanwhile` callback.
BUILD_CHUNK = 5000


def build(
    read_codes: Callable[[], Iterable[str]],
    *,
    expected: int,
    meanwhile: Callable[[], object] | None = None,
) -> FilterHeader:
    """Write a filter of every code `read_codes()` yields (sized for `expected` codes with
    headroom) and put it in place of the old one; it is complete unless an add could not note
    its codes meanwhile. `read_codes` is called only once the journal exists, so that a code is
    either in what it reads or noted in the journal by its add. `meanwhile()` is called every
    BUILD_CHUNK codes (the node's sync keeps reading the change stream during a long build)."""
    capacity = capacity_for(expected)
    bits = _bit_count(capacity)
    directory = state_dir()
    journal = directory / JOURNAL_FILE
    build_fd = os.open(directory / _BUILD_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(build_fd, fcntl.LOCK_EX)
        with _locked():
            journal.write_bytes(b"")
        try:
            began = time.time()
            bitmap = bytearray(_HEADER_SIZE + bits // 8)
            added = 0
            chunk: list[str] = []
            for code in read_codes():
                chunk.append(code)
                if len(chunk) >= BUILD_CHUNK:
                    added += _set_bits(bitmap, _HEADER_SIZE, chunk, HASHES, bits)
                    chunk.clear()
                    if meanwhile is not None:
                        meanwhile()
            added += _set_bits(bitmap, _HEADER_SIZE, chunk, HASHES, bits)
            with _locked():
                try:
                    noted = journal.read_text().split()
                    complete = True
                except FileNotFoundError:  # an add could not note its codes (see add)
                    noted, complete = [], False
                added += _set_bits(bitmap, _HEADER_SIZE, noted, HASHES, bits)
                _HEADER.pack_into(
                    bitmap, 0, _MAGIC, _VERSION, HASHES, int(complete), bits, capacity, added, began
                )
                _write_in_place(directory, bitmap)
                # After the replace, under the lock: an add after this sees the new inode, and a
                # reader that sees the new counter opens the new file.
                generations().bump(GENERATION_KEY)
                with contextlib.suppress(FileNotFoundError):
                    journal.unlink()
        finally:
            with contextlib.suppress(FileNotFoundError):
                journal.unlink()  # a failed build: adds need not be noted any more
    finally:
        os.close(build_fd)  # releases the build lock
    return FilterHeader(HASHES, bits, capacity, added, complete, began)


def _write_in_place(directory: Path, content: bytearray) -> None:
    temporary = directory / f"{FILTER_FILE}.tmp"  # one build at a time
    with open(temporary, "wb") as handle:
        handle.write(content)
        handle.flush()
        # On disk before it replaces the old file: after a power cut the path must not name a
        # file of zeros that calls itself complete.
        os.fsync(handle.fileno())
    os.replace(temporary, directory / FILTER_FILE)


def needs_build(*, max_age: float) -> bool:
    """No complete filter in place, more codes in it than it was sized for, or built more than
    `max_age` seconds ago."""
    current = _current()
    if current is None:
        return True
    state = current.header()
    return (
        not state.complete or state.added > state.capacity or time.time() - state.built_at > max_age
    )
