"""Hard limits that every decoder checks before it allocates.

A crafted archive can claim any sizes; these limits make it fail fast (in microseconds, before
any large allocation) with a FormatError that names the field.

* ``MAX_LENGTH``: no archive holds more than 2^40 bytes (1 TiB) of original data.
* ``memory_limit()``: decompression needs at most about 9 bytes per output byte (8 per decoded
  symbol, 1 per output byte) plus the payload; it refuses to start when that would exceed the
  limit: ``CHUNKPRESS_MAX_MEMORY`` bytes if set, else half of the machine's physical memory.
  Compression needs about 26 bytes per input byte plus about 200 per distinct pair (see
  ``chunkpress.plugins.rewriters.linked``): about 63 bytes per input byte at 100 MB of text (6,299 MB).
"""

from __future__ import annotations

import contextlib
import os

from ..errors import FormatError

MAX_LENGTH = 1 << 40
BYTES_PER_SYMBOL = 8
MEMORY_ENV = "CHUNKPRESS_MAX_MEMORY"


def memory_limit() -> int:
    value = os.environ.get(MEMORY_ENV)
    if value:
        try:
            return int(value)
        except ValueError:
            raise FormatError(f"{MEMORY_ENV} must be a number of bytes, got {value!r}") from None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def check_allocation(what: str, n_bytes: int) -> None:
    """FormatError if decoding would need ``n_bytes`` for ``what``, beyond the memory limit."""
    limit = memory_limit()
    if n_bytes > limit:
        raise FormatError(
            f"the archive claims {what}: decoding would need {n_bytes:,} bytes, more than the "
            f"limit of {limit:,} (set {MEMORY_ENV} to raise it)"
        )


@contextlib.contextmanager
def decoding_memory_cap():
    """Cap the process's address space at its current size plus :func:`memory_limit` while a
    coder decodes (Linux; elsewhere a no-op), so that no coder, built-in or plugin, can allocate
    past the limit whatever its payload claims: an allocation beyond it raises MemoryError."""
    try:
        import resource

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
