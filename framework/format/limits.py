"""Hard limits that every decoder checks before it allocates.

A crafted archive can claim any sizes; these limits make it fail fast (in microseconds, before
any large allocation) with a FormatError that names the field.

* ``MAX_LENGTH``: no archive holds more than 2^40 bytes (1 TiB) of original data.
* ``memory_limit()``: decompression needs at most about 9 bytes per output byte (8 per decoded
  symbol, 1 per output byte) plus the payload; it refuses to start when that would exceed the
  limit: the call's own bound (``max_memory=`` on ``chunkpress.decompress`` and the others, set
  here by :func:`bounded_memory` for that call only, in its own thread or task), else
  ``CHUNKPRESS_MAX_MEMORY`` bytes if set, else half of the machine's physical memory.
* The command line also caps its process's address space while a coder decodes
  (:func:`address_space_cap`), so that a plugin's decoder cannot allocate past the limit
  either; a library call never changes its host process's limits.
  Compression needs about 26 bytes per input byte plus about 200 per distinct pair (see
  ``chunkpress.engine.linkedstring``): about 63 bytes per input byte at 100 MB of text (6,299 MB).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from collections.abc import Callable

from ..errors import ConfigError, FormatError

MAX_LENGTH = 1 << 40
BYTES_PER_SYMBOL = 8
MEMORY_ENV = "CHUNKPRESS_MAX_MEMORY"

#: the bound of the call in progress (None: the environment's or the default)
_CALL_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("chunkpress_max_memory", default=None)
#: whether decoding caps the address space: only the command line, which owns its process
_CAP_ADDRESS_SPACE: contextvars.ContextVar[bool] = contextvars.ContextVar("chunkpress_cap_address_space",
                                                                          default=False)


@contextlib.contextmanager
def bounded_memory(max_memory: int | None):
    """Within the block, decoding in this thread (or task) is bounded by ``max_memory`` bytes,
    as python-zstandard bounds a call with ``max_output_size``; None keeps the default. Other
    threads keep their own bounds."""
    if max_memory is None:
        yield
        return
    check_max_memory(max_memory)
    token = _CALL_LIMIT.set(max_memory)
    try:
        yield
    finally:
        _CALL_LIMIT.reset(token)


def check_max_memory(max_memory) -> None:
    """ConfigError unless ``max_memory`` is None or a positive number of bytes."""
    if max_memory is not None and (isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory <= 0):
        raise ConfigError(f"max_memory must be a positive number of bytes, got {max_memory!r}")


@contextlib.contextmanager
def address_space_cap():
    """Within the block, every decode also caps the process's address space (see
    :func:`decoding_memory_cap`): for the command line, whose process is its own."""
    token = _CAP_ADDRESS_SPACE.set(True)
    try:
        yield
    finally:
        _CAP_ADDRESS_SPACE.reset(token)


def memory_limit() -> int:
    call = _CALL_LIMIT.get()
    if call is not None:
        return call
    value = os.environ.get(MEMORY_ENV)
    if value:
        try:
            return int(value)
        except ValueError:
            raise FormatError(f"{MEMORY_ENV} must be a number of bytes, got {value!r}") from None
    return _half_the_memory()


@functools.cache
def _half_the_memory() -> int:
    """Half of the machine's physical memory (8 GiB where it cannot be read), asked once."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 << 30


#: What a job holds per input byte at most, measured on periodic text and on one long word
#: (the worst cases): learning (word-level BPE on ab x 5e6: 44 bytes beyond the interpreter),
#: encoding with a dictionary (one 10 MB word: 45), counting words (a shard's token starts,
#: ends, hashes and ids: up to 48), and reading a rules file (each one-byte varint becomes an
#: int64, the symbols' lengths another) or a tokenizer.json (parsed JSON objects). An input is
#: refused, or cut into pieces, past :func:`work_limit` of these.
FIT_BYTES_PER_BYTE = 64
ENCODE_BYTES_PER_BYTE = 64
COUNT_BYTES_PER_BYTE = 64
READ_BYTES_PER_BYTE = 32


#: what a job may always take at once, whatever the memory limit
LEAST_WORK = 1 << 16


def work_limit(bytes_per_byte: int) -> int:
    """The most input bytes a job may take at once when it holds ``bytes_per_byte`` for each of
    them: what fits the memory limit (at least LEAST_WORK)."""
    return max(LEAST_WORK, memory_limit() // bytes_per_byte)


def fits(need: Callable[[int], int], length: int) -> bool:
    """Whether a job of ``length`` bytes, which needs ``need(length)`` bytes, fits the memory
    limit (up to LEAST_WORK always does, as in :func:`work_limit`)."""
    return length <= LEAST_WORK or need(length) <= memory_limit()


def most_that_fits(need: Callable[[int], int], most: int) -> int:
    """The largest length up to ``most`` (at least LEAST_WORK) that :func:`fits`, ``need(n)``
    bytes at length ``n`` (a function that does not fall as ``n`` grows). For a job whose need
    is not a constant a byte (a coder's tables sized by the input, with a floor)."""
    lo, hi = LEAST_WORK, max(LEAST_WORK, most)
    if fits(need, hi):
        return hi
    limit = memory_limit()
    while hi - lo > 1:  # lo fits (or is the floor), hi does not
        mid = (lo + hi) // 2
        if need(mid) <= limit:
            lo = mid
        else:
            hi = mid
    return lo


def check_allocation(what: str, n_bytes: int) -> None:
    """FormatError if ``what`` (an archive's, rules file's or id file's claim) would need
    ``n_bytes``, beyond the memory limit: checked before allocating."""
    limit = memory_limit()
    if n_bytes > limit:
        raise FormatError(
            f"{what} would need {n_bytes:,} bytes of memory, more than the limit of {limit:,} "
            f"(max_memory, or set {MEMORY_ENV} to raise it)"
        )


@contextlib.contextmanager
def decoding_memory_cap():
    """Within :func:`address_space_cap` (the command line), cap the process's address space at
    its current size plus :func:`memory_limit` while a coder decodes (Linux; elsewhere a no-op),
    so that no coder, built-in or plugin, can allocate past the limit whatever its payload
    claims: an allocation beyond it raises MemoryError. Elsewhere (a library call) a no-op:
    the limit is checked before each allocation instead."""
    if not _CAP_ADDRESS_SPACE.get():
        yield
        return
    try:
        import resource  # POSIX only: elsewhere the cap is a no-op

        with open("/proc/self/statm") as f:
            in_use = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        old = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):
        yield
        return
    cap = in_use + memory_limit()
    if old[0] != resource.RLIM_INFINITY and old[0] <= cap:
        yield  # a tighter cap is already set
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)
