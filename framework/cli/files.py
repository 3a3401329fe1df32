"""compress, decompress, test (-t), list (-l) and inspect: each input through the one Compressor
or Decompressor its options make, as zstd treats files (an error is reported for its file and
the others still run; outputs appear only when complete)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

from .. import firstcompile
from .. import progress as meters
from ..compressor import Compressor
from ..decompressor import Decompressor
from ..errors import ChunkpressError, InputError
from ..fileio import StreamingOutput, check_not_input, check_writable, default_output, file_size, files_under, opened
from ..process import naming, shown, warnings_about
from ..tables import LIST_COLUMNS, columns, key_values, list_row
from .options import Common, Files


def run(opts: Files) -> int:
    """The command: every input, each to its own output (or all to stdout)."""
    inputs = _inputs(opts)
    if opts.mode == "list":
        return _list(opts.common, inputs)
    if opts.remove and (opts.output == "-" or opts.mode == "test"):
        print("chunkpress: note: --rm keeps the inputs when writing to stdout or testing", file=sys.stderr)
    if opts.mode == "compress":
        compressor = Compressor(rules=opts.rules, **opts.settings)
        config = compressor.pipeline.config
        parts = firstcompile.run_parts(compressor.level.number if compressor.level else None, config)
        # the coder's loop compiles in a helper while the dictionary is learned
        alongside = firstcompile.started_ahead(config.coder.name)
        meters.announce_first_compile(parts, opts.common.quiet, alongside=alongside)
        return _each(opts.common, inputs, lambda path: _compress(compressor, opts, path))
    meters.announce_first_compile(firstcompile.coders_parts(), opts.common.quiet, one_of=True)  # coder not known yet
    decompressor = Decompressor(rules=opts.rules)
    return _each(opts.common, inputs, lambda path: _decompress(decompressor, opts, path))


def _inputs(opts: Files) -> list[str]:
    """The inputs: stdin when none is given and it is not a terminal; with -r, the files under
    each folder (compressing: those not ending in .cpz; decompressing: those that do)."""
    inputs = list(opts.inputs)
    if not inputs:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no input: give files, or pipe data in ('-' reads stdin)")
        inputs = ["-"]
    if inputs.count("-") > 1:
        raise InputError("'-' (stdin) can be given once")
    if opts.recursive:
        inputs = [found for path in inputs for found in files_under(path, opts.mode == "compress")]
    if opts.output is not None and len(inputs) > 1 and opts.output != "-":
        raise InputError("-o names one output; with several inputs leave it out (each gets its own)")
    return inputs


def _list(common: Common, inputs: list[str]) -> int:
    """-l: one row an archive under a header, as zstd lists; -lv: each archive's header and parts."""
    if common.verbose:
        return _each(common, inputs, lambda path: print(key_values(describe(path, False),
                                                                   path if len(inputs) > 1 else None)))
    rows: list[dict] = []
    status = _each(common, inputs, lambda path: rows.append(list_row(shown(path), describe(path, False))))
    if rows:
        print(columns(rows, LIST_COLUMNS, left=("codecs", "file")))
    return status


def _each(common: Common, inputs: list[str], one: Callable[[str], None]) -> int:
    """``one(input)`` for every input: an error is reported for its file (the message starts
    with the file's name) and the others still run; the exit status is the first error's."""
    status = 0
    for path in inputs:
        try:
            with warnings_about(path):
                one(path)
        except ChunkpressError as exc:
            if common.debug:
                raise
            named = naming(exc, path)
            if len(inputs) == 1:
                raise named from None
            print(f"chunkpress: error: {named}", file=sys.stderr)
            status = status or exc.exit_code
    return status


def _output(opts: Files, path: str, compressing: bool) -> str:
    out = opts.output or default_output(path, compressing, opts.force)
    check_writable(out, opts.force)
    if compressing and out == "-" and sys.stdout.isatty() and not opts.force:  # as zstd: no archive on a terminal
        raise InputError("not writing an archive to a terminal: redirect stdout, give -o, or -f to insist")
    check_not_input(path, out)
    return out


def _skips_link(opts: Files, path: str) -> bool:
    """With --rm, a symbolic link named as an input is left alone, as zstd does."""
    skip = opts.remove and path != "-" and os.path.islink(path)
    if skip and not opts.common.quiet:
        print(f"chunkpress: note: {path}: a symbolic link, skipped (--rm would remove the link, not its file)",
              file=sys.stderr)
    return skip


def _compress(compressor: Compressor, opts: Files, path: str) -> None:
    if _skips_link(opts, path):
        return
    out = _output(opts, path, True)
    started, size = time.monotonic(), file_size(path)
    blocks = compressor.wants_blocks(size)
    total = compressor.pipeline.config.limits.max_rules
    with opened(path) as source, StreamingOutput(out, opts.force, binary=True, like=path, times=True) as sink, \
            meters.Progress("compress", size if blocks else total, unit="B" if blocks else "rules", unit_scale=blocks,
                            quiet=opts.common.quiet) as progress, \
            meters.coding_progress(quiet=opts.common.quiet):
        read, written = compressor.copy_stream(source, sink, size=size, rules_progress=progress.rules,
                                               blocks_progress=lambda n, done: progress.update(done, blocks=n))
    _summary(opts.common, path, read, written, started, out)
    _remove(opts, path, out)


def _decompress(decompressor: Decompressor, opts: Files, path: str) -> None:
    if _skips_link(opts, path):
        return
    out = None if opts.mode == "test" else _output(opts, path, False)
    started, size = time.monotonic(), file_size(path)
    with opened(path) as source, meters.coding_progress(quiet=opts.common.quiet):
        if out is None:  # -t
            total = decompressor.copy_stream(source, None)
            if opts.common.verbose and not opts.common.quiet:
                print(f"{shown(path)}: OK ({total:,} bytes)", file=sys.stderr)
            return
        with StreamingOutput(out, opts.force, like=path, times=True) as sink, \
                meters.Progress("decompress", size, unit="B", unit_scale=True, quiet=opts.common.quiet) as progress:
            total = decompressor.copy_stream(
                source, sink, progress=lambda n: progress.update(source.tell() if size else 0, blocks=n))
    _summary(opts.common, path, size or 0, total, started, out)
    _remove(opts, path, out)


def _remove(opts: Files, path: str, out: str | None) -> None:
    """--rm: the input goes once its output is complete (never with stdout, or when testing)."""
    if opts.remove and out not in (None, "-") and path != "-":
        try:
            os.unlink(path)
        except OSError as exc:
            raise InputError(f"cannot remove {path}: {exc.strerror or exc}") from None


def _summary(common: Common, path: str, size_in: int, size_out: int, started: float, out: str | None) -> None:
    """zstd's line when a file is done: on a terminal, with -v, or after a long job in a log; never -q."""
    seconds = time.monotonic() - started
    if not common.quiet and (common.verbose or sys.stderr.isatty() or seconds >= meters.LOG_SECONDS):
        print(meters.summary_line(shown(path), size_in, size_out, seconds, out), file=sys.stderr)


def describe(path: str, per_block: bool) -> dict:
    """An archive's header and parts (a block archive: its totals; each block with ``per_block``)."""
    with opened(path) as source:
        return Decompressor().describe(source, per_block)


def cmd_inspect(args: argparse.Namespace) -> int:
    """Each archive's header and parts (``-lv``); a block archive's totals (each block's in
    --json). Several archives: a titled section each, or a JSON list."""
    if not args.json:
        return _list(Common(verbose=True), args.input)
    infos: list[dict] = []
    status = _each(Common.of(args), args.input, lambda path: infos.append(describe(path, True)))
    print(json.dumps(infos[0] if len(infos) == 1 else infos, indent=2, default=int))
    return status


def add_inspect(add) -> None:
    p = add("inspect", help="show archives' headers and sizes by part")
    p.add_argument("input", nargs="+", help="archives ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="as JSON (a block archive: each block too)")
    p.set_defaults(func=cmd_inspect)
