"""Progress of a long job on stderr, as users of tqdm-based tools expect.

On a terminal: a tqdm bar, with percentage and ETA where the amount of work is known (a rule
limit, an input's size, a study's rows). In a log (stderr not a terminal): the same meter as a
plain line every ``LOG_SECONDS``, so a short job prints nothing and a long one shows it is
alive. ``quiet`` silences both. tqdm draws and rates; we only say how far the job is.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

#: a plain progress line in a log at most this often (the first one after as long)
LOG_SECONDS = 10.0


class Progress:
    """``update(done, **status)`` with the absolute amount done; ``write(line)`` prints a line
    above the bar; use as a context manager (or call ``close``)."""

    def __init__(self, label: str, total: int | None = None, unit: str = "it", quiet: bool = False,
                 stream=None, unit_scale: bool = False):
        self.stream = stream or sys.stderr
        self.label, self.total, self.unit, self.unit_scale = label, total, unit, unit_scale
        self.quiet = quiet
        self.started = self.logged = time.monotonic()
        self.bar = None
        if self.stream.isatty() and not quiet:
            from tqdm import tqdm  # only where a bar is drawn: a pipe or a log starts faster

            self.bar = tqdm(total=total, desc=label, unit=unit, unit_scale=unit_scale, file=self.stream,
                            dynamic_ncols=True, leave=False, mininterval=0.25, miniters=1)

    def update(self, done: int, **status) -> None:
        postfix = "  ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in status.items())
        if self.bar is not None:
            self.bar.set_postfix_str(postfix, refresh=False)
            self.bar.update(done - self.bar.n)  # tqdm redraws at most every mininterval
            return
        now = time.monotonic()
        if self.quiet or now - self.logged < LOG_SECONDS or not done:  # nothing done yet: compiling
            return
        self.logged = now
        from tqdm import tqdm  # a log line is due: only now is tqdm's meter needed

        meter = tqdm.format_meter(done, self.total, now - self.started, unit=self.unit, unit_scale=self.unit_scale,
                                  prefix=self.label, ncols=0)
        print(f"{meter}  {postfix}".rstrip(), file=self.stream, flush=True)

    def write(self, line: str) -> None:
        """A line of its own (a finished study row), printed above the bar."""
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # the learner's callback: rules so far, string length, total bits (-1: not traced)
    def rules(self, rules: int, n: int, total_bits: int) -> None:
        if total_bits >= 0:
            self.update(rules, N=n, bits=total_bits)
        else:
            self.update(rules, N=n)


def announce_first_compile(parts, quiet: bool = False, stream=None, one_of: bool = False, alongside=()) -> None:
    """On a terminal, one line before numba compiles the kernels of ``parts`` (CompiledParts:
    :mod:`chunkpress.firstcompile`) for the first time (``one_of``: of one of them, not known
    yet which; ``alongside``: the names of those a helper process compiles meanwhile), saying
    roughly how long it takes, so that a first run does not look hung; a pipe or a log gets
    nothing extra."""
    from .engine.interruptible import first_compile_seconds  # no numba: it looks at the cache's files

    stream = stream or sys.stderr
    if quiet or not stream.isatty():
        return
    seconds = max(map(first_compile_seconds, ([p] for p in parts)), default=0) if one_of else \
        first_compile_seconds(parts, alongside)
    if seconds:
        print(f"chunkpress: compiling the kernels for first use ({'up to ' if one_of else ''}about {seconds} s; "
              "later runs load them)", file=stream)


def summary_line(name: str, size_in: int, size_out: int, seconds: float, out: str | None) -> str:
    """The line zstd prints when a file is done: sizes, ratio, time and where it went."""
    where = "" if out is None else f" -> {'<stdout>' if out == '-' else out}"
    small, large = min(size_in, size_out), max(size_in, size_out)
    ratio = f" ({100 * small / large:.2f}%, {8 * small / large:.3f} bits/byte)" if small else ""
    return f"{name}: {size_in:,} -> {size_out:,} bytes{ratio} in {seconds:.1f} s{where}"


# ---------------------------------------------------------------- progress of compiled coders

#: how a compiled coder's progress is shown in this context: ``report(label, done, total)``,
#: or None (a library call: nothing is shown)
_CODING_REPORT: ContextVar = ContextVar("chunkpress_coding_report", default=None)


@contextmanager
def coding_progress(quiet: bool = False, stream=None):
    """Within it, coders that meter their compiled loop (``chunk-cm``) show it as a bar with
    an ETA on a terminal, or a line every :data:`LOG_SECONDS` in a log; one bar per phase."""
    bars: dict = {}

    def report(label: str, done: int, total: int) -> None:
        bar = bars.get(label)
        if bar is None or bar.total != total:  # a new block: a new bar
            if bar is not None:
                bar.close()
            bar = bars[label] = Progress(label, total, unit="chunks", quiet=quiet, stream=stream, unit_scale=True)
        bar.update(done)

    token = _CODING_REPORT.set(report)
    try:
        yield
    finally:
        _CODING_REPORT.reset(token)
        for bar in bars.values():
            bar.close()


def coding_meter(meter, total: int, label: str):
    """What :func:`~chunkpress.engine.interruptible.call_interruptibly` polls while a kernel counts
    its work in ``meter[0]``: None where no :func:`coding_progress` is active."""
    report = _CODING_REPORT.get()
    if report is None:
        return None
    return lambda: report(label, int(meter[0]), total)
