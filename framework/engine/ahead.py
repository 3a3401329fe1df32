"""Compiling a coder's kernels on a spare core while a first run does its other work.

A cold run of a context-mixing level compiles the learner's kernels, then the coder's; a cold
``-d`` decodes the dictionary, then compiles the coder's loop. The ``chunkpress`` program (not
a library call: :func:`enable` is the program's choice) starts one helper process for a coder
whose kernels numba's cache lacks, as soon as it knows the coder: the helper compiles them
(:meth:`Coder.ahead_parts`) into the same cache while this process goes on, and the coder
waits for it (:func:`await_compiled_ahead`) right before its first call: meanwhile this process
compiles the shared parts the helper has not begun (:mod:`chunkpress.compile_helper` says how
they agree), then loads them all from the cache. An archive never depends on it: the helper
and the waiting process only compile, and a helper that fails or is not there leaves the
compile to this process, as without one.

A helper writes nothing but numba's cache, prints nothing, and ends with this process (it
watches its parent: :mod:`chunkpress.compile_helper`). No numba here: the program starts
helpers before any kernel loads.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from .interruptible import CompiledPart, first_compile_seconds, part_cache

#: the helper process's module (run with ``-m``)
HELPER = "chunkpress.compile_helper"

_enabled = False
#: helper processes by part, while this process has not waited for them
_helpers: dict[str, subprocess.Popen] = {}


def enable() -> None:
    """Let :func:`started` start helpers in this process (the ``chunkpress`` program does);
    any still running at exit are ended."""
    global _enabled
    if not _enabled:
        atexit.register(stop_all)
    _enabled = True


def _spare_core() -> bool:
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except AttributeError:  # not on Linux
        return (os.cpu_count() or 1) >= 2


def _writable(folder: Path | None) -> bool:
    """Whether numba can keep its cache files in ``folder`` (made where it is missing): a
    helper whose compile numba cannot keep would only make this process wait."""
    if folder is None:
        return False
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK)


def started(coder: str, part: CompiledPart | None) -> tuple[str, ...]:
    """Start a helper compiling ``coder``'s kernels (a registry name; ``part``, what they are,
    None where the coder does not compile ahead: :func:`chunkpress.firstcompile.ahead_part`)
    where this program enabled helpers, numba's cache lacks them and can keep them, no helper
    does it yet, and there is a core to spare. The names of the parts a helper compiles for it
    now (none, or its one part)."""
    if not _enabled or part is None or os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return ()
    if part.name not in _helpers:
        if not _spare_core() or not first_compile_seconds([part]) or not _writable(part_cache(part)):
            return ()
        _helpers[part.name] = subprocess.Popen([sys.executable, "-m", HELPER, coder, str(os.getpid())],
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                               stderr=subprocess.DEVNULL)
    return (part.name,)


#: the longest a coder waits for its helper (its compile takes well under a minute)
HELPER_WAIT_SECONDS = 600


def await_compiled_ahead(part: str, parts: Callable[[], Sequence] | None = None) -> None:
    """Wait for the helper compiling the kernels of ``part`` (the coder's
    :class:`~chunkpress.plugin.FirstCompile` kernel reference), if this process started one:
    the kernels are then in numba's cache. Meanwhile compile here the shared ones it hands
    over: ``parts`` gives the coder's ahead parts (the helper's list, as
    :meth:`Coder.ahead_parts` makes it; asked for only when a part is handed over). Nothing
    where none was started (a library call, a warm cache), and nothing more once it has
    ended. A coder calls it right before the first kernel its ahead parts compile."""
    helper = _helpers.pop(part, None)
    if helper is None:
        return
    try:
        if parts is not None:
            _compile_handed_over(helper, parts)
        helper.wait(HELPER_WAIT_SECONDS)
    except subprocess.TimeoutExpired:  # a helper far slower than a compile: this process compiles
        _stop(helper)
    except BaseException:  # an interrupt while waiting: the helper goes too
        _stop(helper)
        raise
    finally:
        _close_pipes(helper)


def share_compile_ahead(part: str, parts: Callable[[], Sequence]) -> None:
    """Compile here the shared parts the helper compiling ``part`` hands over (``parts`` as
    :func:`await_compiled_ahead` takes them), until it has none left, and go on while it
    compiles the rest: a coder whose own work before its first call compiles kernels of its own
    (a decoder's rules) calls it first, so that this process compiles those while the helper
    ends the loop's compile. Nothing where no helper was started."""
    helper = _helpers.get(part)
    if helper is None:
        return
    try:
        _compile_handed_over(helper, parts)
    except BaseException:  # an interrupt: the helper goes too
        _stop(_helpers.pop(part))
        raise


#: one thread at a time talks with a helper (each question waits for its answer)
_talking = threading.Lock()


def _compile_handed_over(helper: subprocess.Popen, parts: Callable[[], Sequence]) -> None:
    """Compile the parts ``helper`` hands over, one at a time, until it has none left."""
    assert helper.stdin is not None and helper.stdout is not None
    listed = None
    with _talking:
        try:
            while True:
                helper.stdin.write(b"claim\n")
                helper.stdin.flush()
                i = int(helper.stdout.readline() or -1)
                if i < 0:
                    return
                listed = listed if listed is not None else list(parts())
                try:
                    listed[i].compile()
                except Exception:  # noqa: BLE001  the helper compiles it when typing its caller, and the coder's own call reports a real fault
                    pass
                finally:  # compiled or not (an interrupt goes on up), the helper goes on
                    _tell(helper, f"done {i}\n")
        except (OSError, ValueError, IndexError):  # the helper gone or not understood: it only saves time
            with contextlib.suppress(OSError):  # its end of the talk: a part taken here goes back to it
                helper.stdin.close()


def _tell(helper: subprocess.Popen, line: str) -> None:
    """Write ``line`` to ``helper``; nothing where it has gone (Ctrl-C ends it with this
    process, whose interrupt must not turn into a broken pipe)."""
    assert helper.stdin is not None
    try:
        helper.stdin.write(line.encode())
        helper.stdin.flush()
    except OSError:
        pass


def _close_pipes(helper: subprocess.Popen) -> None:
    for pipe in (helper.stdin, helper.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:  # a broken pipe: the helper has gone
                pass


def stop_all() -> None:
    """End every helper still running (at exit: a compile of no further use here)."""
    while _helpers:
        _stop(_helpers.popitem()[1])


def _stop(helper: subprocess.Popen) -> None:
    _close_pipes(helper)
    if helper.poll() is None:
        helper.terminate()  # numba writes each cache file whole, under a temporary name first
        try:
            helper.wait(1.0)
        except subprocess.TimeoutExpired:
            helper.kill()
