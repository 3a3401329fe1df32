"""numba's kernel cache as a disposable copy: a damaged file is compiled again, never an error.

numba keeps each compiled kernel in a data file (``.nbc``) listed by an index (``.nbi``). A
file cut short by a full disk or a killed writer, emptied, or garbled by a bad sync makes
numba's own load raise (``UnpicklingError``, ``EOFError``, an LLVM error) out of the kernel's
first call, where a decoder would report it as a corrupt archive; a flipped bit in the machine
code would load and run. So, for every cached kernel in the process:

* each file numba writes ends in a trailer, a digest of what precedes it (pickle ignores bytes
  past its end, so a numba without this module reads the files as before);
* a load checks the trailer where there is one, and any load that fails, for whatever reason,
  is a cache miss, as numba treats an index from another version: the kernel is compiled
  again and its files rewritten;
* the first such fault in a process is said once on stderr.

:func:`install` applies this when numba's caching module is imported (numba itself loads only
with the first kernel), through :func:`after_numba_cache_loads`, the one hook on that import
(the program's lighter cached loads use it too). A numba whose cache classes differ is left as
it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import io
import pickle
import sys
from collections.abc import Callable
from typing import Any

#: what a digest trailer starts with; the digest follows it
_MARK = b"\x00chunkpress-cache-digest\x00"
_DIGEST_BYTES = 16
_MODULE = "numba.core.caching"

_reported = False


class DamagedCacheFile(OSError):
    """A cache file that cannot be read back (numba's load takes an OSError as a miss)."""


def _digest(content: bytes) -> bytes:
    return hashlib.blake2b(content, digest_size=_DIGEST_BYTES).digest()


def with_trailer(content: bytes) -> bytes:
    """``content`` followed by its digest trailer."""
    return content + _MARK + _digest(content)


def verified(raw: bytes) -> bytes:
    """What precedes the trailer of ``raw`` (a file without one: all of it, unchecked);
    DamagedCacheFile where the digest does not match or the file is empty."""
    if not raw:
        raise DamagedCacheFile("empty")
    cut = len(raw) - len(_MARK) - _DIGEST_BYTES
    if cut >= 0 and raw[cut:cut + len(_MARK)] == _MARK:
        content = raw[:cut]
        if _digest(content) != raw[cut + len(_MARK):]:
            raise DamagedCacheFile("its digest does not match")
        return content
    return raw


def report(path: str, why: object) -> None:
    """Say once per process that a cache file was damaged and is compiled again."""
    global _reported
    if not _reported:
        _reported = True
        print(f"chunkpress: numba's kernel cache file {path} is damaged ({why}); compiling its kernels again",
              file=sys.stderr)


def _patch(caching) -> None:
    """Make numba's ``IndexDataCacheFile`` and ``Cache`` (module ``caching``) as described above."""
    files: Any = getattr(caching, "IndexDataCacheFile", None)
    cache: Any = getattr(caching, "Cache", None)
    if not (all(hasattr(files, n) for n in ("_open_for_write", "_load_index", "_load_data"))
            and hasattr(cache, "_load_overload")) or getattr(files, "_chunkpress_sturdy", False):
        return
    numba_open = files._open_for_write

    @contextlib.contextmanager
    def open_for_write(self, filepath):  # what numba writes, buffered, then written with its trailer
        buffer = io.BytesIO()
        yield buffer
        with numba_open(self, filepath) as out:
            out.write(with_trailer(buffer.getvalue()))

    def read_checked(path: str) -> bytes:
        with open(path, "rb") as f:
            return verified(f.read())

    def load_index(self):
        try:
            stream = io.BytesIO(read_checked(self._index_path))
            version = pickle.load(stream)
            if version != self._version:
                return {}  # another numba's index: a miss, as numba has it
            stamp, overloads = pickle.loads(stream.read())
        except FileNotFoundError:
            return {}
        except Exception as exc:  # noqa: BLE001 - whatever the damage, the index is a miss
            report(self._index_path, exc)
            return {}
        if stamp != self._source_stamp or not isinstance(overloads, dict):
            return {}
        return overloads

    def load_data(self, name):
        path = self._data_path(name)
        try:
            return pickle.loads(read_checked(path))
        except FileNotFoundError:
            raise
        except Exception as exc:  # noqa: BLE001 - numba's load takes an OSError as a miss
            report(path, exc)
            raise DamagedCacheFile(str(exc)) from None

    numba_load_overload = cache._load_overload  # under numba's load_overload and the program's lighter one

    def load_overload(self, sig, target_context):
        try:
            return numba_load_overload(self, sig, target_context)
        except Exception as exc:  # noqa: BLE001 - data that reads but does not rebuild: compile again
            report(getattr(self, "_cache_path", "?"), exc)
            return None

    files._open_for_write = open_for_write
    files._load_index = load_index
    files._load_data = load_data
    files._chunkpress_sturdy = True
    cache._load_overload = load_overload


#: what runs on numba's caching module once it has been imported, in the order given
_PATCHES: list[Callable[[Any], None]] = []


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds numba's caching module as usual, and runs :data:`_PATCHES` on it once it has run."""

    def find_spec(self, name, path, target=None):
        if name != _MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        numba_exec = loader.exec_module

        def exec_module(module):
            numba_exec(module)
            for patch in _PATCHES:
                patch(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_numba_cache_loads(patch: Callable[[Any], None]) -> None:
    """``patch(numba.core.caching)``: now where numba is loaded, else once it loads (so a
    command that compiles nothing never imports numba for it)."""
    if _MODULE in sys.modules:
        patch(sys.modules[_MODULE])
        return
    if patch not in _PATCHES:
        _PATCHES.append(patch)
    if not any(isinstance(finder, _PatchOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


def install() -> None:
    """Apply this module to numba's cache (:func:`after_numba_cache_loads`)."""
    after_numba_cache_loads(_patch)
