"""The command line's options: one argparse parser per command, one option set shared by the
zstd form (``chunkpress [-d] FILE...``) and the ``compress`` and ``decompress`` commands, and
the options as typed objects (:class:`Common`, :class:`Files`) that the commands take."""

from __future__ import annotations

import argparse
import os
import re

import attrs

from ..blockmode import parse_size
from ..config import pipeline_overrides
from ..text.pretokenizers import registered
from ..version import __version__

#: the commands; any other first word makes the command line zstd-style
COMMANDS = ("compress", "decompress", "train", "encode", "decode", "evaluate", "export-hf", "import-hf", "import-spm",
            "import-tiktoken", "study",
            "inspect", "plugins")
#: options that take no value and may come before a command
LEADING_FLAGS = {"-q", "--quiet", "-v", "--verbose", "--debug", "-k", "--keep"}
#: the pipeline's overrides, as options and as the keys of ``config.pipeline_overrides``
OVERRIDES = ("scorer", "rewriter", "coder", "pretokenizer", "segmenter", "boundary", "deletion", "normalizer",
             "max_rules", "vocab_size", "min_count", "superword_after", "picky", "learner", "param")
#: what an override's help says beyond its name
EXTRA_HELP = {"pretokenizer": ", merges stay inside words", "segmenter": ", how the vocabulary cuts text",
              "learner": ": merges (bottom-up, the scorer's), or top-down from word counts"}


def _registered(role: str) -> str:
    """The names registered for ``role``, as --help lists them (read from the registry)."""
    return " | ".join(registered(role))


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line like every other error (exit 2)."""

    def error(self, message: str):
        self.exit(2, f"chunkpress: error: {message} (see '{self.prog} --help')\n")


def check_levels(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Exit 2 on a level past -9 (-12, -19): argparse would read -19 as -1 -9, and zstd's
    levels go that high, so a zstd user would get another level than asked for."""
    takes_value = False
    for token in argv:
        if token == "--":
            return
        if not takes_value and re.fullmatch(r"-\d\d+", token):
            parser.error(f"compression levels are -1 to -9 (--fast, --best), not {token}")
        action = parser._option_string_actions.get(token.split("=")[0]) if token.startswith("-") else None
        takes_value = action is not None and action.nargs != 0 and "=" not in token


def size(text: str) -> int:
    """A block size: digits with an optional fraction and K, M or G (32M, 1.5G, 500000)."""
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def workers(text: str) -> int:
    """A number of worker processes: 0 (serial) to 1024."""
    if not text.isdigit() or int(text) > 1024:
        raise argparse.ArgumentTypeError(f"takes 0 (serial) to 1024 processes, not {text!r}")
    return int(text)


def sizes(text: str) -> tuple[int, ...]:
    """Vocabulary sizes, V or V,V,... (evaluate's --vocab-size)."""
    if not re.fullmatch(r"\d+(,\d+)*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a vocabulary size or a comma-separated list of them")
    return tuple(map(int, text.split(",")))


def threads(text: str) -> int:
    """-T N as zstd takes it: 0 = one worker per core, 1 = none (serial)."""
    return workers(text) or os.cpu_count() or 1


def common() -> Parser:
    """Options every command takes, before or after its name (as zstd and xz users expect)."""
    p = Parser(add_help=False)
    # SUPPRESS: a command's default must not undo the option given before the command
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress or summary lines (errors still go to stderr)")
    p.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="a summary line per file")
    p.add_argument("-k", "--keep", action="store_true", default=argparse.SUPPRESS,
                   help="keep the inputs (the default; accepted for zstd/xz habits)")
    return p


def pipeline_options(p: argparse.ArgumentParser, sweep: bool = False) -> None:
    """The pipeline: a level or a config, with overrides (compress and train); ``sweep``:
    --vocab-size takes several sizes (train)."""
    for n in range(1, 10):  # as in zstd and xz, the last level given wins
        p.add_argument(f"-{n}", dest="level", action="store_const", const=n,
                       help="level: 1 fastest ... 9 smallest (default 5)" if n == 1 else argparse.SUPPRESS)
    p.add_argument("--fast", dest="level", action="store_const", const=1, help="same as -1")
    p.add_argument("--best", dest="level", action="store_const", const=9, help="same as -9")
    p.add_argument("--config", help="TOML config instead of a level (the paper's method: examples/paper/mdl.toml)")
    for key in (*OVERRIDES[:8], "learner"):  # each role's choice, the names read from the registry
        p.add_argument(f"--{key}", help=f"{key} name (overrides the level or config): {_registered(key)}"
                       + EXTRA_HELP.get(key, ""))
    p.add_argument("--param", action="append", metavar="ROLE.KEY=VALUE", help="a param of any role's component "
                   "(repeatable), e.g. boundary.after=1000, coder.memory=22")
    p.add_argument("--max-rules", type=int, help="stop after this many rules")
    if sweep:
        p.add_argument("--vocab-size", type=sizes, metavar="V[,V...]",
                       help="stop at this many tokens, the 256 bytes included (HF's count); several sizes: a "
                       "top-down --learner's sweep, one pruning run, a rules file each (RULES with .V before "
                       "its extension)")
    else:
        p.add_argument("--vocab-size", type=int, help="stop at this many tokens, the 256 bytes included (HF's count)")
    p.add_argument("--min-count", type=int, help="only merge pairs seen at least this often")
    p.add_argument("--superword-after", type=int, metavar="T", help="SuperBPE: merges may join words once the "
                   "vocabulary has T tokens (the 256 bytes included)")
    p.add_argument("--picky", type=float, metavar="TAU", help="Picky BPE: a part of a merge whose count falls "
                   "to at most (1 - TAU) / TAU of the new token's leaves the vocabulary (0 < TAU <= 1)")


def file_options(p: argparse.ArgumentParser, mode: str | None) -> None:
    """The options of compress and decompress (``mode``), and of the zstd form (``mode`` None:
    -z/-d/-t/-l pick it)."""
    zstd_form, default = mode is None, mode or "compress"
    p.add_argument("inputs", nargs="*", metavar="FILE",
                   help="files or, with -r, folders ('-' or none with piped stdin: stdin to stdout)")
    modes = p.add_mutually_exclusive_group()
    if zstd_form:
        modes.add_argument("-z", "--compress", dest="mode", action="store_const", const="compress",
                          help="compress (the default)")
        modes.add_argument("-d", "--decompress", "--uncompress", dest="mode", action="store_const", const="decompress",
                          help="decompress")
        modes.add_argument("-l", "--list", dest="mode", action="store_const", const="list", help="describe archives")
    modes.add_argument("-t", "--test", dest="mode", action="store_const", const="test",
                      help="check archives (decode and verify) without writing anything")
    p.add_argument("-o", "--output", help="output path (one input; '-' for stdout)")
    p.add_argument("-c", "--stdout", action="store_const", const="-", dest="output",
                   help="write to stdout (several inputs: archives one after another, which decompress as one)")
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("--rm", action="store_true", help="remove each input once its output is complete")
    p.add_argument("-r", "--recursive", action="store_true", help="the files in folders, and in their folders")
    p.add_argument("-T", "--threads", "--workers", dest="workers", type=threads,
                   help="code a block archive's blocks in N worker processes (0: one per core); the archive is "
                        "the same bytes")
    p.add_argument("--block-size", type=size, help="blocks of at most SIZE (e.g. 32M), in bounded memory; "
                   "inputs over 256M, or too large for the memory limit, use blocks anyway")
    p.add_argument("--scheduler", help="compress blocks on the Dask scheduler at this address")
    p.add_argument("--rules", help="reuse this learned dictionary (a rules file) instead of learning one; "
                   "decompress: the rules an archive made with --rules-ref needs")
    p.add_argument("--rules-ref", action="store_true", help="with --rules: store its hash instead of the rules")
    p.add_argument("--shared-dictionary", action="store_true",
                   help="block mode: learn one dictionary from the first block and code every block with it")
    pipeline_options(p)
    p.set_defaults(mode=default)


@attrs.frozen(kw_only=True)
class Common:
    """What every command takes."""

    quiet: bool = False
    verbose: bool = False
    debug: bool = False

    @classmethod
    def of(cls, args: argparse.Namespace) -> Common:
        return cls(**{key: getattr(args, key, False) for key in ("quiet", "verbose", "debug")})


def overrides(args: argparse.Namespace, reserved: int = 0) -> dict:
    """The pipeline's overrides given as options, as a Compressor's and Pipeline's keywords."""
    return pipeline_overrides(**{key: getattr(args, key, None) for key in OVERRIDES}, reserved=reserved)


@attrs.frozen(kw_only=True)
class Files:
    """compress, decompress, -t and -l, in either form."""

    common: Common
    mode: str
    inputs: tuple[str, ...]
    output: str | None
    force: bool
    remove: bool
    recursive: bool
    settings: dict  # the Compressor's keywords
    rules: str | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> Files:
        settings = {"level": args.level, "config": args.config, "block_size": args.block_size,
                    "workers": args.workers if args.workers and args.workers > 1 else None,
                    "scheduler": args.scheduler, "rules_ref": args.rules_ref,
                    "shared_dictionary": args.shared_dictionary, **overrides(args)}
        return cls(common=Common.of(args), mode=args.mode, inputs=tuple(args.inputs), output=args.output,
                   force=args.force, remove=args.rm, recursive=args.recursive, settings=settings, rules=args.rules)


def zstd_parser() -> Parser:
    """``chunkpress [OPTIONS] [FILE...]``, the options zstd and xz users type."""
    p = Parser(prog="chunkpress", parents=[common()],
               description="Compress FILEs (or stdin to stdout) as zstd does; 'chunkpress --help' lists the commands.")
    p.add_argument("--version", action="version", version=f"chunkpress {__version__}")
    file_options(p, None)
    return p


def is_zstd_form(argv: list[str]) -> bool:
    """True unless the first word after the value-less options is a command, help or version:
    ``chunkpress -9 f``, ``chunkpress -d f.cpz`` and a bare ``chunkpress`` (``tar -I``) are
    zstd-style."""
    for token in argv:
        if token in LEADING_FLAGS:
            continue
        return token not in COMMANDS and token not in ("-h", "--help", "--version")
    return True
