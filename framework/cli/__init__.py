"""The ``chunkpress`` command line: it parses and calls the library. zstd-style
(``chunkpress [-d] FILE...``: :mod:`.files`) and the commands in ``options.COMMANDS`` (files,
tokens and reports, each in its module), one option set shared by both forms (:mod:`.options`)."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings

from ..engine import ahead
from ..engine.interruptible import kernel_abandoned
from ..errors import ChunkpressError
from ..format.limits import address_space_cap
from ..process import Terminated, hold_closed_standard_streams, load_cached_kernels_lightly, show_warning, sigterm_as_interrupt
from ..version import __version__
from . import files, report, tokens
from .options import LEADING_FLAGS, Files, Parser, check_levels, common, file_options, is_zstd_form, zstd_parser

#: the zstd form at a glance, under the commands in ``chunkpress --help``
ZSTD_FORM = """as zstd and xz (no command; 'chunkpress -d --help' lists every option):
  chunkpress [-1..-9] FILE...  each FILE to FILE.cpz: -1 fastest, -9 smallest (--fast, --best; none: -5)
  -d decompress, -t test, -l list (-lv: the detail), -c to stdout, -o OUT, -f overwrite,
  -r the files in folders, --rm remove the inputs, -T N a block archive's blocks on N processes"""


def build_parser() -> argparse.ArgumentParser:
    """The commands (``chunkpress COMMAND ...``); ``chunkpress --help`` lists them."""
    shared = common()
    parser = Parser(prog="chunkpress", parents=[shared], formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="chunkpress: compress text by growing a dictionary of chunks (levels -1 to -9).",
                    epilog=ZSTD_FORM)
    parser.add_argument("--version", action="version", version=f"chunkpress {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name, **kw):  # every command takes the common options, before or after its name
        return sub.add_parser(name, parents=[shared], **kw)

    for mode, helptext in (("compress", "compress files into .cpz archives"),
                           ("decompress", "restore the original files from archives (-t: check them)")):
        file_options(add(mode, help=helptext), mode)
    tokens.add_commands(add)
    files.add_inspect(add)
    report.add_commands(add, shared)
    return parser


def _study_run_implied(argv: list[str]) -> list[str]:
    """``chunkpress study STUDY.toml`` is ``chunkpress study run STUDY.toml``."""
    for i, token in enumerate(argv):
        if token in LEADING_FLAGS:
            continue
        if token == "study" and i + 1 < len(argv) and argv[i + 1] not in ("run", "report", "-h", "--help"):
            return [*argv[: i + 1], "run", *argv[i + 1:]]
        break
    return argv


def main(argv=None) -> int:
    hold_closed_standard_streams()
    argv = _study_run_implied(sys.argv[1:] if argv is None else [str(a) for a in argv])
    parser = zstd_parser() if is_zstd_form(argv) else build_parser()
    check_levels(parser, argv)
    args = parser.parse_args(argv)
    run = getattr(args, "func", lambda a: files.run(Files.of(a)))  # compress, decompress, the zstd form
    try:
        with sigterm_as_interrupt(), address_space_cap(), warnings.catch_warnings():
            if not getattr(args, "debug", False):
                warnings.showwarning = show_warning
            return run(args)
    except ChunkpressError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"chunkpress: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("chunkpress: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("chunkpress: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("chunkpress: error: out of memory", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader went away (`chunkpress inspect x | head`): stop quietly, as cat does;
        # point stdout at /dev/null so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def entry() -> None:
    """The ``chunkpress`` program: :func:`main`, then exit with its status. A kernel that did
    not stop after an interrupt may still run on its helper thread (``call_interruptibly``);
    the interpreter's teardown would free the code under it (a SIGSEGV instead of 130 or 143),
    so such a process flushes its streams and ends at once. Where numba's cache lacks a
    coder's loop, a helper process compiles it meanwhile (:mod:`chunkpress.engine.ahead`)."""
    load_cached_kernels_lightly()
    ahead.enable()
    code = main()
    ahead.stop_all()  # a helper whose compile this run did not wait for
    # the interpreter's last collections walk every object numba made, which a short run
    # waits for at its exit: a program that ends now need not
    gc.freeze()
    if kernel_abandoned():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):  # a reader gone, or a stream closed: nothing to say
                pass
        os._exit(code)
    sys.exit(code)
