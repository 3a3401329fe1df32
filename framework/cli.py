"""The ``chunkpress`` command line: zstd-style (``chunkpress [-d] FILE...``) and the subcommands
in ``SUBCOMMANDS`` (compress, decompress, train, encode, decode, export-hf, import-hf, study,
inspect, plugins), each a thin layer over the library."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import signal
import sys
import time
import warnings

from . import __version__, __doc__ as PACKAGE_DOC
from .errors import ChunkpressError, ConfigError, FormatError, InputError, UnverifiedWarning
from .fileio import check_writable, read_input, read_rest, write_output
from .format.idfile import FORMATS
from .format.limits import memory_limit
from .plugin.registry import ROLES

SUFFIX = ".cpz"


def _progress(args, label: str, total: int | None = None, **kw):
    from .progress import Progress

    return Progress(label, total, quiet=getattr(args, "quiet", False), **kw)


def _overrides(args, reserved: int = 0) -> dict:
    out: dict = {}
    for role in ROLES:
        if getattr(args, role, None):
            out[role] = getattr(args, role)
    limits = {}
    if getattr(args, "vocab_size", None) is not None:
        if args.max_rules is not None:
            raise ConfigError("--vocab-size and --max-rules say the same thing; give one")
        if args.vocab_size <= 256 + reserved:
            raise ConfigError(f"--vocab-size {args.vocab_size}: the 256 byte tokens"
                              f"{f' and {reserved} added tokens' if reserved else ''} come first, so it must exceed "
                              f"{256 + reserved}")
        limits["max_rules"] = args.vocab_size - 256 - reserved
    if getattr(args, "max_rules", None) is not None:
        limits["max_rules"] = args.max_rules
    if getattr(args, "min_count", None) is not None:
        limits["min_count"] = args.min_count
    if limits:
        out["limits"] = limits
    if getattr(args, "pretokenizer", None):
        out["pretokenizer"] = args.pretokenizer
    return out


def _pipeline(args, level: int | None = None, reserved: int = 0):
    """The pipeline the options ask for; ``reserved``: ids --vocab-size keeps for added tokens."""
    from .pipeline import Pipeline

    return Pipeline.from_config(args.config, level=level, **_overrides(args, reserved))


def _default_output(path: str, compressing: bool, force: bool = False) -> str:
    """Where an input's output goes without -o: ``INPUT.cpz``, or the archive's name without
    ``.cpz``. As zstd does, an input that already ends in .cpz is not compressed again (unless
    -f) and an archive without the suffix is not decompressed to a made-up name."""
    if path == "-":
        return "-"
    if compressing:
        if path.endswith(SUFFIX) and not force:
            raise InputError(f"{path}: already ends in {SUFFIX}, not compressed again (-f to insist)")
        return path + SUFFIX
    if path.endswith(SUFFIX) and len(path) > len(SUFFIX):
        return path[: -len(SUFFIX)]
    raise InputError(f"{path}: does not end in {SUFFIX}: give -o OUT or -c for stdout")


def _same_file(a: str, b: str) -> bool:
    """True when writing ``b`` would replace the input ``a`` (a device such as /dev/null is
    written through, so it replaces nothing)."""
    if a == "-" or b == "-" or not (os.path.exists(a) and os.path.exists(b)):
        return False
    return os.path.samefile(a, b) and os.path.isfile(b)


def _tokenizer(path: str, decoding: bool = False, data: bytes | None = None):
    """The rules file at ``path`` (its bytes ``data`` when already read), errors naming it;
    ``decoding``: only to turn ids back into bytes, which needs no pre-tokenizer (so no check
    of the Unicode tables it was trained with)."""
    from .text.tokenizer import Tokenizer

    try:
        return Tokenizer.from_rules_file(read_input(path, memory_limit()) if data is None else data,
                                         decoding=decoding)
    except ChunkpressError as exc:
        if str(exc).startswith(path):
            raise
        raise type(exc)(f"{path}: {exc}") from None


def _announce_first_compile(args) -> None:
    """One line before numba compiles the kernels for the first time (about 15 s once after
    install; later runs load them from the cache), so a first run does not look hung."""
    if getattr(args, "quiet", False):
        return
    from pathlib import Path

    engine = Path(__file__).parent / "engine"
    cache = engine / "__pycache__"
    if os.access(engine, os.W_OK) and not any(cache.glob("fused.run_fused-*.nbi")):
        print("chunkpress: compiling the kernels for first use (about 15 s, once; later runs load them)",
              file=sys.stderr)


def _each_input(args, one) -> int:
    """Run ``one(input)`` for every input, as zstd does: an error is reported for its file and
    the others still run; the exit status is the first error's. No input: stdin, when it is
    not a terminal (``cat f | chunkpress compress > f.cpz``)."""
    if not args.inputs:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no input: give files, or pipe data in ('-' reads stdin)")
        args.inputs = ["-"]
    if args.output is not None and len(args.inputs) > 1 and args.output != "-":
        raise InputError("-o names one output; with several inputs leave it out (each gets its own)")
    if args.inputs.count("-") > 1:
        raise InputError("'-' (stdin) can be given once")
    status = 0
    for path in args.inputs:
        try:
            with _warnings_about(path):
                one(path)
        except ChunkpressError as exc:
            if getattr(args, "debug", False):
                raise
            named = _naming(exc, path)
            if len(args.inputs) == 1:
                raise named from None
            print(f"chunkpress: error: {named}", file=sys.stderr)
            status = status or exc.exit_code
    return status


@contextlib.contextmanager
def _warnings_about(path: str):
    """What a file's decoding could not verify (``UnverifiedWarning``), printed once as a line
    naming the file, even when the file then fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnverifiedWarning)
        try:
            yield
        finally:
            for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UnverifiedWarning)):
                print(f"chunkpress: warning: {_shown(path)}: {message}", file=sys.stderr)


def _shown(path: str) -> str:
    """How messages name an input: its path, or ``<stdin>``."""
    return "<stdin>" if path == "-" else path


def _naming(exc: ChunkpressError, path: str) -> ChunkpressError:
    """The same error, its message starting with the file it is about (unless it names it)."""
    name = _shown(path)
    if name in str(exc):
        return exc
    try:
        return type(exc)(f"{name}: {exc}")
    except TypeError:  # an error class that takes other arguments: leave it as it is
        return exc


def _say(args, text: str) -> None:
    if getattr(args, "verbose", False) and not getattr(args, "quiet", False):
        print(text, file=sys.stderr)


def _summary(args, path: str, size_in: int, size_out: int, started: float, out: str | None) -> None:
    """The line zstd prints when a file is done: sizes, ratio, time and where it went. On a
    terminal, with -v, or after a job long enough to have shown progress in a log (a short job
    in a log stays silent); never with -q."""
    from .progress import LOG_SECONDS

    seconds = time.monotonic() - started
    if getattr(args, "quiet", False):
        return
    if not (getattr(args, "verbose", False) or sys.stderr.isatty() or seconds >= LOG_SECONDS):
        return
    name = _shown(path)
    where = "" if out is None else f" -> {'<stdout>' if out == '-' else out}"
    small, large = min(size_in, size_out), max(size_in, size_out)
    ratio = f" ({100 * small / large:.2f}%, {8 * small / large:.3f} bits/byte)" if small else ""
    print(f"{name}: {size_in:,} -> {size_out:,} bytes{ratio} in {seconds:.1f} s{where}", file=sys.stderr)


def _coding(args):
    """Progress of the compiled coders (chunk-cm meters its loop) for this command."""
    from .progress import coding_progress

    return coding_progress(quiet=getattr(args, "quiet", False))


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def cmd_compress(args) -> int:
    from .blockmode import check_dictionary_options
    from .config import compress_level

    check_options = functools.partial(check_dictionary_options, rules=bool(args.rules), rules_ref=args.rules_ref,
                                      shared_dictionary=args.shared_dictionary, spell=_option)
    check_options(blocks=None)

    pipe = _pipeline(args, compress_level(args.config, args.level))
    _announce_first_compile(args)
    dictionary = read_input(args.rules) if args.rules else None
    tokenizer = _tokenizer(args.rules, data=dictionary) if dictionary is not None else None

    def one(path: str) -> None:
        out = args.output or _default_output(path, True, args.force)
        if out == "-" and sys.stdout.isatty() and not args.force:  # as zstd: a terminal cannot show an archive
            raise InputError("not writing an archive to a terminal: redirect stdout, give -o, or -f to insist")
        if path != "-" and _same_file(path, out):
            raise InputError(f"{path}: the output would overwrite the input")
        check_writable(out, args.force)
        blocks = _block_mode(args, path)
        check_options(blocks=blocks)
        if blocks:
            _compress_blocks(args, pipe, path, out, dictionary)
            return
        started = time.monotonic()
        data = read_input(path, memory_limit())
        if tokenizer is not None:  # reuse a learned dictionary: no learning
            with _coding(args):
                archive = pipe.encode(tokenizer.rules, tokenizer.symbols(data), data, reference=args.rules_ref)
        else:
            with _progress(args, "compress", pipe.config.limits.max_rules, unit="rules") as progress, _coding(args):
                archive = pipe.compress(data, progress=progress.rules)
        write_output(out, archive, args.force, binary=True, like=path, times=True)
        _summary(args, path, len(data), len(archive), started, out)

    return _each_input(args, one)


#: the largest block: one block's work holds about 100 bytes per input byte
MAX_BLOCK_SIZE = 16 << 30


def _parse_size(text: str) -> int:
    """A block size: digits with an optional fraction and K, M or G (32M, 1.5G, 500000)."""
    import re

    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    match = re.fullmatch(r"(\d{1,12}(?:\.\d{1,6})?)([KMGkmg]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 32M, 1G, 500000)")
    value = int(float(match.group(1)) * units[match.group(2).upper()])
    if value < 1 << 10 or value > MAX_BLOCK_SIZE:
        raise argparse.ArgumentTypeError(f"a block size must lie between 1K and 16G, not {text}")
    return value


def _workers(text: str) -> int:
    """A number of worker processes: 0 (serial) to 1024."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"--workers takes 0 (serial) to 1024 processes, not {text!r}")
    return value


def _open_input(path: str):
    """The binary stream of ``path`` ('-': stdin), for reading block by block."""
    try:
        return sys.stdin.buffer if path == "-" else open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _file_size(path: str) -> int | None:
    """Size of a regular file; None for stdin, a pipe or a device (their size is not known)."""
    return os.path.getsize(path) if path != "-" and os.path.isfile(path) else None


def _block_mode(args, path: str) -> bool:
    """Block mode when asked for (a block size, workers, a scheduler), and by default for inputs
    above the threshold and for streams (stdin, a FIFO, a device), whose length is not known,
    so that no input can exhaust memory (``blockmode.wants_blocks``)."""
    from .blockmode import wants_blocks

    return wants_blocks(None if _is_stream(path) else (_file_size(path) or 0), block_size=args.block_size,
                        workers=args.workers, scheduler=args.scheduler, rules_ref=args.rules_ref)


def _is_stream(path: str) -> bool:
    """stdin, a FIFO, a device or a socket: an input whose length is not known beforehand."""
    import stat

    if path == "-":
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # reported by the read
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode)


def _compress_blocks(args, pipe, path: str, out: str, dictionary: bytes | None) -> None:
    from .blockmode import compress_stream, default_block_size
    from .fileio import StreamingOutput

    started = time.monotonic()
    stream = _open_input(path)
    size = _file_size(path)
    with stream, StreamingOutput(out, args.force, binary=True, like=path, times=True) as sink, \
            _progress(args, "compress", size, unit="B", unit_scale=True) as progress:
        block_size = args.block_size or default_block_size(size)
        counted = _Counting(sink)
        total = compress_stream(pipe, stream, counted, block_size, args.workers,
                                args.scheduler, progress=lambda count, done: progress.update(done, blocks=count),
                                dictionary=dictionary, learn_dictionary=args.shared_dictionary)
    _summary(args, path, total, counted.written, started, out)


def cmd_decompress(args) -> int:
    rules = _tokenizer(args.rules, decoding=True).rules if args.rules else None

    def one(path: str) -> None:
        out = None
        if not args.test:
            out = args.output or _default_output(path, False)
            if path != "-" and _same_file(path, out):
                raise InputError(f"{path}: the output would overwrite the input")
            check_writable(out, args.force)
        _decompress_members(args, path, out, rules)

    return _each_input(args, one)


class _Discard:
    def write(self, data: bytes) -> None:
        pass


class _Counting:
    """A sink that counts what passes through it to ``sink``."""

    def __init__(self, sink):
        self.sink, self.written = sink, 0

    def write(self, data: bytes) -> None:
        self.sink.write(data)
        self.written += len(data)


def _decompress_members(args, path: str, out: str | None, rules) -> None:
    """Every archive in the input (one, or several one after another), streamed to ``out``
    (None: -t, checked and discarded); a block archive block by block."""
    from .blockmode import decompress_members
    from .fileio import StreamingOutput

    size = _file_size(path)
    started = time.monotonic()
    stream = _open_input(path)
    with stream, _coding(args):
        if out is None:  # -t
            total = decompress_members(stream, _Discard(), rules=rules, limit=memory_limit())
            _say(args, f"{path}: OK ({total:,} bytes)")
            return
        with StreamingOutput(out, args.force, like=path, times=True) as sink, \
                _progress(args, "decompress", size, unit="B", unit_scale=True) as progress:
            total = decompress_members(stream, sink, rules=rules, limit=memory_limit(),
                                       progress=lambda count: progress.update(stream.tell() if size else 0, blocks=count))
    _summary(args, path, size or 0, total, started, out)


def cmd_train(args) -> int:
    from .format.rulesfile import RulesFile
    from .study.traceio import trace_to_csv

    special = _special_tokens(args.special_token)
    if args.vocab_size is not None and args.scorer is None and args.config is None:
        args.scorer = "repair"  # a vocabulary size is how HF users ask for BPE (most frequent pair first)
    _announce_first_compile(args)
    pipe = _pipeline(args, reserved=len(special))
    rules_out = args.rules
    if rules_out is None and not args.trace:
        if len(args.inputs) > 1:
            raise InputError("several training inputs: name the rules file with --rules")
        rules_out = "-" if args.inputs[0] == "-" else args.inputs[0] + ".rules"
    for path in (rules_out, args.trace):
        if path:
            check_writable(path, args.force)
    if args.inputs.count("-") > 1:
        raise InputError("stdin ('-') can be read once")
    held_out = read_input(args.eval) if args.eval else None
    sources, result = _learn(args, pipe, special)
    first = args.inputs[0] if len(args.inputs) == 1 else None
    if rules_out:
        learned = RulesFile.learned(
            result.rules, pipe.config.to_dict(), length=sum(n for _, n, _ in sources), blake2b=_combined(sources),
            sources=[{"name": name, "length": n, "blake2b": d} for name, n, d in sources] if len(sources) > 1 else None,
            hf=_special_vocab(result.rules, special))
        write_output(rules_out, learned.to_bytes(), args.force, binary=True, like=first)
    if args.trace:
        trace = result.trace
        if held_out is not None:
            from numpy.lib import recfunctions

            from .text.tokenizer import Tokenizer

            curve = Tokenizer(result.rules, pipe.config.pretokenizer).code_length_curve(held_out)
            trace = recfunctions.append_fields(
                trace, ["eval_total_bits", "eval_N"], [curve["total_bits"], curve["N"]], usemask=False
            )
        write_output(args.trace, trace_to_csv(trace).encode(), args.force, like=first)
    last = result.trace[-1]
    if not getattr(args, "quiet", False):
        print(
            f"{pipe.config.scorer.name}: {len(result.rules):,} rules (m = {256 + len(result.rules):,}"
            f"{f' + {len(special)} added tokens' if special else ''}), "
            f"N = {int(last['N']):,}, total {int(last['total_bits']):,} bits, stopped by {result.stop_reason}, "
            f"{result.seconds:.2f}s",
            file=sys.stderr,
        )
    return 0


def _special_tokens(given) -> tuple[bytes, ...]:
    """--special-token values as UTF-8, checked: non-empty and each once."""
    tokens = tuple(t.encode("utf-8", "surrogateescape") for t in given or ())
    if any(not t for t in tokens):
        raise ConfigError("--special-token: an added token cannot be empty")
    if len(set(tokens)) != len(tokens):
        raise ConfigError("--special-token: each added token once")
    return tokens


def _special_vocab(rules, special: tuple[bytes, ...]):
    """The rules file's ``hf`` entry for added tokens: our ids for the symbols, the added tokens
    after them (as HF's trainer numbers them after the alphabet and merges)."""
    if not special:
        return None
    import numpy as np

    from .text.hf import HFVocab

    size = 256 + len(rules)
    ids = np.arange(size, dtype=np.int64)
    return HFVocab(ids=ids, special=tuple((t.decode("utf-8", "surrogateescape"), size + k)
                                          for k, t in enumerate(special))).to_meta()


def _combined(sources) -> str:
    """The one input's checksum, or the checksum of the several inputs' checksums in order."""
    from .format.container import checksum

    if len(sources) == 1:
        return sources[0][2]
    return checksum("".join(d for _, _, d in sources).encode())


def _learn(args, pipe, special):
    """([(input, length, BLAKE2b-128)], the fit). With a pre-tokenizer the words of every input
    are counted line by line and summed, as HF's trainer reads its files (streamed shard by
    shard, on Dask workers when asked); without, the inputs are learned as one text with no
    pair across two of them or across an added token."""
    import numpy as np

    from .format.container import checksum
    from .text.pretokenize import pretoken_breaks
    from .text.wordcounts import WordCounts, cut_special

    if pipe.config.pretokenizer != "none":
        counted = [_count_words(args, pipe, path, special) for path in args.inputs]
        words = WordCounts.merge([w for _, _, _, w in counted])
        with _progress(args, "train", pipe.config.limits.max_rules, unit="rules") as progress:
            return [c[:3] for c in counted], pipe.fit_words(words, trace=True, progress=progress.rules)
    if args.workers or args.scheduler:
        raise InputError("--workers/--scheduler for train count pre-tokens in parallel: give a --pretokenizer")
    sources, texts, cuts, at = [], [], [], 0
    for path in args.inputs:
        data = read_input(path)
        sources.append((path, len(data), checksum(data)))
        kept, inner = cut_special(data, special)
        texts.append(kept)
        cuts += [*(inner + at).tolist(), at + len(kept)]
        at += len(kept)
    text = b"".join(texts)
    breaks = pretoken_breaks(np.frombuffer(text, dtype=np.uint8), "none", pieces=cuts)
    with _progress(args, "train", pipe.config.limits.max_rules, unit="rules") as progress:
        return sources, pipe.fit(text, trace=True, progress=progress.rules, breaks=breaks)


def _count_words(args, pipe, path: str, special=()):
    """(path, length, checksum, word counts) of one training input, read shard by shard."""
    from .format.container import running_checksum
    from .text.wordcounts import count_stream

    digest = running_checksum()
    length = 0

    class Hashed:
        def __init__(self, stream):
            self.stream = stream

        def read(self, n: int) -> bytes:
            nonlocal length
            data = self.stream.read(n)
            digest.update(data)
            length += len(data)
            return data

    stream = _open_input(path)
    with stream, _progress(args, "count words", _file_size(path), unit="B", unit_scale=True) as progress:
        words = count_stream(Hashed(stream), pipe.config.pretokenizer, workers=args.workers,
                             scheduler=args.scheduler, progress=progress.update, lines=True, special=special)
    return path, length, digest.hexdigest(), words


def cmd_encode(args) -> int:
    from .format.idfile import write_ids

    tokenizer = _tokenizer(args.rules)
    out = args.output or ("-" if args.input == "-" else args.input + ".ids")
    check_writable(out, args.force)
    payload = write_ids(tokenizer.encode(read_input(args.input)).ids, args.format)
    write_output(out, payload, args.force, binary=args.format != "text", like=args.input)
    return 0


def cmd_decode(args) -> int:
    from .format.idfile import read_ids

    tokenizer = _tokenizer(args.rules, decoding=True)
    out = args.output or "-"
    check_writable(out, args.force)
    ids = read_ids(read_input(args.input, memory_limit()), args.format, args.input)
    try:
        data = tokenizer.decode(ids)
    except ChunkpressError as exc:
        raise InputError(f"{args.input}: {exc}") from None
    write_output(out, data, args.force, like=args.input)
    return 0


def cmd_export_hf(args) -> int:
    from .text.hf import to_hf_json

    tokenizer = _tokenizer(args.rules)
    out = args.output or args.rules + ".tokenizer.json"
    check_writable(out, args.force)
    write_output(out, to_hf_json(tokenizer.rules, tokenizer.pretokenizer, tokenizer.hf).encode(), args.force,
                 like=args.rules)
    return 0


def cmd_import_hf(args) -> int:
    from .text.hf import from_hf_json
    from .text.tokenizer import Tokenizer
    from .format.rulesfile import RulesFile

    if args.output is None:  # tokenizer.json -> tokenizer.rules, as train writes INPUT.rules
        base = args.input[: -len(".json")] if args.input.endswith(".json") else args.input
        args.output = "-" if args.input == "-" else base + ".rules"
    check_writable(args.output, args.force)
    try:
        text = read_input(args.input).decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise InputError(f"{args.input}: not UTF-8 text (byte {exc.start}), so not a tokenizer.json") from None
    rules, pre, vocab = from_hf_json(text)
    payload = RulesFile.learned(rules, {"pretokenizer": {"name": pre}}, imported_from="hf-tokenizers",
                                hf=vocab.to_meta()).to_bytes()
    try:  # what a later use would refuse is refused now, before anything is written
        Tokenizer.from_rules_file(payload)
    except ChunkpressError as exc:
        raise FormatError(f"{args.input}: {exc}") from None
    write_output(args.output, payload, args.force, binary=True, like=args.input)
    return 0


def cmd_study_run(args) -> int:
    from pathlib import Path

    from .study.runner import load_study, run_study

    study = load_study(args.study, data_root=args.data_root)
    out = args.out or str(Path(args.study).parent / "results")
    quiet = getattr(args, "quiet", False)
    rows = run_study(study, out, rerun=args.rerun, workers=args.workers, scheduler=args.scheduler,
                     progress=None if quiet else sys.stderr)
    failed = sum(1 for r in rows if r["error"])
    if failed or not quiet:
        print(f"{len(rows)} rows, {failed} failed; results in {out}", file=sys.stderr)
    return 1 if failed else 0


def cmd_study_report(args) -> int:
    from .study.runner import report

    rows = report(args.results, args.out)
    if not getattr(args, "quiet", False):
        print(f"{len(rows)} rows from {len(args.results)} files; results in {args.out}", file=sys.stderr)
    return 0


def cmd_inspect(args) -> int:
    """Each archive's header and parts; a block archive's totals (each block's in --json).
    Several archives: a titled section each, or a JSON list."""
    inputs = args.input if isinstance(args.input, list) else [args.input]
    infos = []
    for path in inputs:
        try:
            with _warnings_about(path):
                infos.append(_describe(path, args.json))
        except ChunkpressError as exc:
            raise _naming(exc, path) from None
    if args.json:
        print(json.dumps(infos[0] if len(infos) == 1 else infos, indent=2, default=int))
        return 0
    for path, info in zip(inputs, infos):
        if len(inputs) > 1:
            print(f"{path}:")
        width = max(len(k) for k in info)
        for key, value in info.items():
            if isinstance(value, float):
                value = f"{value:.4f}"
            elif isinstance(value, int) and not isinstance(value, bool):
                value = f"{value:,}"
            print(f"{key:<{width}}  {value}")
    return 0


def _describe(path: str, per_block: bool) -> dict:
    from .blockmode import describe_stream
    from .format import blocks
    from .pipeline import inspect

    stream = _open_input(path)
    with stream:
        head = stream.read(len(blocks.MAGIC) + 1)
        if head[: len(blocks.MAGIC)] == blocks.MAGIC:
            info, each = describe_stream(stream, head)
            if per_block:
                info["per_block"] = each
            return info
        return inspect(read_rest(stream, path, head, memory_limit()))


def cmd_plugins(args) -> int:
    from .plugin.registry import default_registry

    reg = default_registry()
    rows = list(reg.rows())
    if args.json:
        print(json.dumps([{**dict(zip(("role", "name", "summary", "version", "provider"), r)),
                           "installed": reg.distribution(r[0], r[1])} for r in rows]
                         + [{"failed": f.plugin, "error": f.error} for f in reg.failures], indent=2))
        return 0
    for role, name, summary, version, provider in rows:
        extra = ""
        if role == "coder":
            extra = f" [{reg.components[role][name].codec_id}]"
        dist = reg.distribution(role, name)
        installed = f"{dist['distribution']} {dist['version']}" if dist["distribution"] else "not installed"
        print(f"{role:<9} {name:<14} v{version:<5} {summary}{extra}  ({provider}; {installed})")
    for f in reg.failures:
        print(f"FAILED    {f.plugin}: {f.error}")
    return 0


def _add_pipeline_options(p) -> None:
    p.add_argument("--config", help="TOML config (compress default: level 5; train: mdl + linked + combinatorial)")
    p.add_argument("--scorer", help="scorer name (overrides the config)")
    p.add_argument("--rewriter", help="rewriter name (overrides the config)")
    p.add_argument("--coder", help="coder name (overrides the config)")
    p.add_argument("--max-rules", type=int, help="stop after this many rules")
    p.add_argument("--vocab-size", type=int,
                   help="stop at this many tokens, the 256 bytes included, as HF tokenizers counts them (--max-rules N-256); "
                        "train: BPE (--scorer repair) unless a scorer or config is given")
    p.add_argument("--min-count", type=int, help="only merge pairs seen at least this often")
    p.add_argument("--pretokenizer", help="none | gpt2 | whitespace: keep merges inside words")


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line like every other error (exit 2)."""

    def error(self, message: str):
        import re

        beyond = re.fullmatch(r"argument -(\d): ignored explicit argument '(\d+)'", message)
        if beyond:  # -10, -19: argparse reads -1 with a stuck-on value
            message = f"compression levels are -1 to -9, not -{beyond.group(1)}{beyond.group(2)}"
        self.exit(2, f"chunkpress: error: {message} (see '{self.prog} --help')\n")


def _common() -> argparse.ArgumentParser:
    """Options every command takes, before or after its name (as zstd and xz users expect)."""
    common = _Parser(add_help=False)
    # SUPPRESS: a subcommand's default must not undo the option given before the subcommand
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress or summary lines (errors still go to stderr)")
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="a summary line per file")
    common.add_argument("-k", "--keep", action="store_true", default=argparse.SUPPRESS,
                        help="keep the input (always the case; accepted for zstd/xz habits)")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    parser = _Parser(prog="chunkpress", description=PACKAGE_DOC, parents=[common])
    parser.add_argument("--version", action="version", version=f"chunkpress {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def add(name, **kw):  # every command takes the common options, before or after its name
        return sub.add_parser(name, parents=[common], **kw)

    _compress_options(add("compress", help="compress files into .cpz archives"))
    _decompress_options(add("decompress", help="restore the original files from archives"))
    _train_options(add("train", help="learn a dictionary; save the rules and/or the trace"))
    _ids_options(add)
    _export_hf_options(add("export-hf", help="write a rules file as an HF tokenizers tokenizer.json"))
    _import_hf_options(add("import-hf", help="read a byte-level BPE tokenizer.json into a rules file"))
    _study_options(add("study", help="run a study (a grid of pipelines over datasets) or rebuild its results",
                       description="'study run STUDY.toml' (or just 'study STUDY.toml') runs a study; "
                                   "'study report RESULTS.jsonl... --out DIR' rebuilds tables and plots from rows."), common)
    _inspect_options(add("inspect", help="show archives' headers and sizes by part"))
    _plugins_options(add("plugins", help="list scorers, rewriters and coders"))
    return parser


def _compress_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="*", metavar="input",
                   help="files to compress ('-' or none with piped stdin: stdin to stdout)")
    p.add_argument("-o", "--output", help="archive path (one input; default INPUT.cpz; '-' for stdout)")
    p.add_argument("-c", "--stdout", action="store_const", const="-", dest="output",
                   help="write to stdout (several inputs: archives one after another, which decompress as one)")
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
    for n in range(1, 10):  # as in zstd and xz, the last level given wins
        p.add_argument(f"-{n}", dest="level", action="store_const", const=n,
                       help="compression level: 1 fastest ... 9 smallest (default 5; the paper's mdl + combinatorial: "
                            "--config examples/paper/mdl.toml); see README" if n == 1 else argparse.SUPPRESS)
    p.add_argument("--fast", dest="level", action="store_const", const=1, help="same as -1")
    p.add_argument("--best", dest="level", action="store_const", const=9, help="same as -9")
    p.add_argument("--block-size", type=_parse_size,
                   help="compress in blocks of at most SIZE (e.g. 32M), in bounded memory; inputs over 256M use "
                        "32M blocks by default")
    p.add_argument("--workers", type=_workers, help="compress blocks in this many local worker processes (Dask distributed)")
    p.add_argument("--scheduler", help="compress blocks on the Dask distributed scheduler at this address")
    p.add_argument("--rules", help="reuse this learned dictionary (a rules file) instead of learning one; "
                                   "in block mode every block shares it, stored once")
    p.add_argument("--shared-dictionary", action="store_true",
                   help="block mode: learn one dictionary from the first block and code every block with it")
    p.add_argument("--rules-ref", action="store_true",
                   help="with --rules: store a reference (hash and size) instead of the rules; "
                        "decompress then needs --rules")
    _add_pipeline_options(p)
    p.set_defaults(func=cmd_compress)


def _decompress_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="*", metavar="input",
                   help="archives ('-' or none with piped stdin: stdin to stdout); archives one after another "
                        "decompress to their concatenation")
    p.add_argument("-o", "--output", help="output path (one input; default: INPUT without .cpz; '-' for stdout)")
    p.add_argument("-c", "--stdout", action="store_const", const="-", dest="output", help="write to stdout")
    p.add_argument("-t", "--test", action="store_true",
                   help="verify the archives (decode and check) without writing anything")
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
    p.add_argument("--rules", help="the rules file an archive made with --rules-ref references")
    p.set_defaults(func=cmd_decompress)


def _train_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="input",
                   help="training texts ('-' for stdin); with a --pretokenizer their words are counted line by "
                        "line, as HF's trainer reads files")
    p.add_argument("--rules", help="rules file to write (default INPUT.rules for one input unless --trace is given)")
    p.add_argument("--special-token", action="append", metavar="TOKEN",
                   help="an added token (repeatable): kept whole, never learned from, given the ids after the "
                        "merges; exported to HF as an added token")
    p.add_argument("--trace", help="CSV of the per-step trace (reference program's columns first)")
    p.add_argument("--eval", help="held-out text: the trace gets its code length at every step")
    p.add_argument("--workers", type=_workers,
                   help="with a --pretokenizer: count pre-tokens over shards in this many local worker processes (Dask)")
    p.add_argument("--scheduler", help="with a --pretokenizer: count pre-tokens on the Dask scheduler at this address")
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")
    _add_pipeline_options(p)
    p.set_defaults(func=cmd_train)


def _export_hf_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("rules", help="rules file")
    p.add_argument("-o", "--output", help="tokenizer.json path (default RULES.tokenizer.json)")
    p.add_argument("-f", "--force", action="store_true")
    p.set_defaults(func=cmd_export_hf)


def _import_hf_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="tokenizer.json")
    p.add_argument("-o", "--output", help="rules file to write (default: INPUT without .json, plus .rules)")
    p.add_argument("-f", "--force", action="store_true")
    p.set_defaults(func=cmd_import_hf)


def _inspect_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", nargs="+", help="archives ('-' for stdin)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_inspect)


def _plugins_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plugins)


def _ids_options(add) -> None:
    """encode and decode: the same options, one way and back."""
    for name, func, helptext in (("encode", cmd_encode, "text -> symbol ids with a learned dictionary"),
                                 ("decode", cmd_decode, "symbol ids -> text with a learned dictionary")):
        p = add(name, help=helptext)
        p.add_argument("input", help="input ('-' for stdin)")
        p.add_argument("--rules", required=True, help="rules file written by train")
        p.add_argument("--format", choices=FORMATS, default="u32",
                       help="ids as little-endian uint32 (default) or whitespace-separated text")
        p.add_argument("-o", "--output", help="output path ('-' for stdout; default: "
                       + ("INPUT.ids, or stdout for stdin)" if name == "encode" else "stdout)"))
        p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
        p.set_defaults(func=func)


def _study_options(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """study run and study report, subcommands of study."""
    study = p.add_subparsers(dest="study_command", required=True)
    p = study.add_parser("run", parents=[common], help="run a study file")
    p.add_argument("study", metavar="STUDY.toml", help="the study file")
    p.add_argument("--out", help="results folder (default: results/ beside the study file)")
    p.add_argument("--data-root", metavar="DIR",
                   help="look datasets up in DIR (default: $CHUNKPRESS_DATA_ROOT, else the study's data_root)")
    p.add_argument("--workers", type=_workers, help="run rows in this many local worker processes (Dask distributed)")
    p.add_argument("--scheduler", help="run rows on the Dask distributed scheduler at this address")
    p.add_argument("--rerun", action="store_true",
                   help="run every row again, even those already in results.jsonl for the same config, input and version")
    p.set_defaults(func=cmd_study_run)
    p = study.add_parser("report", parents=[common], help="rebuild tables and plots from results.jsonl files")
    p.add_argument("results", nargs="+", metavar="RESULTS.jsonl",
                   help="rows of one or more runs; each row once (a later file's replaces an earlier one's)")
    p.add_argument("--out", required=True, help="folder for the CSV, JSON lines, Markdown, LaTeX and plots")
    p.set_defaults(func=cmd_study_report)


#: the subcommands; any other first word makes the command line zstd-style
SUBCOMMANDS = ("compress", "decompress", "train", "encode", "decode", "export-hf", "import-hf", "study", "inspect",
               "plugins")
#: options that take no value and may come before a subcommand
_LEADING_FLAGS = {"-q", "--quiet", "-v", "--verbose", "--debug", "-k", "--keep"}


def _study_run_implied(argv: list[str]) -> list[str]:
    """``chunkpress study STUDY.toml`` is ``chunkpress study run STUDY.toml``."""
    for i, token in enumerate(argv):
        if token in _LEADING_FLAGS:
            continue
        if token == "study" and i + 1 < len(argv) and argv[i + 1] not in ("run", "report", "-h", "--help"):
            return [*argv[: i + 1], "run", *argv[i + 1:]]
        break
    return argv


def _zstd_style(argv: list[str]) -> bool:
    """True unless the first word after the value-less options is a subcommand, help or version:
    ``chunkpress -9 f``, ``chunkpress -d f.cpz`` and a bare ``chunkpress`` (``tar -I``) are
    zstd-style."""
    for token in argv:
        if token in _LEADING_FLAGS:
            continue
        return token not in SUBCOMMANDS and token not in ("-h", "--help", "--version")
    return True


def _threads(text: str) -> int:
    """-T N as zstd takes it: 0 = one worker per core, 1 = none (serial)."""
    value = _workers(text)
    return os.cpu_count() or 1 if value == 0 else value


def build_zstd_parser() -> argparse.ArgumentParser:
    """``chunkpress [OPTIONS] [FILE...]``, the options zstd and xz users type."""
    p = _Parser(prog="chunkpress", description="Compress FILEs (or stdin to stdout) as zstd does; "
                "'chunkpress COMMAND --help' for the commands: " + ", ".join(SUBCOMMANDS) + ".")
    p.add_argument("inputs", nargs="*", metavar="FILE", help="files ('-' or none with piped stdin: stdin to stdout)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("-z", "--compress", dest="mode", action="store_const", const="compress",
                      help="compress (the default)")
    mode.add_argument("-d", "--decompress", "--uncompress", dest="mode", action="store_const", const="decompress",
                      help="decompress")
    mode.add_argument("-t", "--test", dest="mode", action="store_const", const="test",
                      help="check archives without writing anything")
    mode.add_argument("-l", "--list", dest="mode", action="store_const", const="list", help="describe archives")
    p.add_argument("-c", "--stdout", action="store_const", const="-", dest="output", help="write to stdout")
    p.add_argument("-o", dest="output", help="output file (one input)")
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")
    p.add_argument("-k", "--keep", action="store_true", help="keep the inputs (always the case)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or summary lines")
    p.add_argument("-v", "--verbose", action="store_true", help="a summary line per file")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("-T", "--threads", type=_threads, default=None,
                   help="compress in blocks on N worker processes (0: one per core)")
    for n in range(1, 10):
        p.add_argument(f"-{n}", dest="level", action="store_const", const=n,
                       help="level: 1 fastest ... 9 smallest (default 5)" if n == 1 else argparse.SUPPRESS)
    p.add_argument("--fast", dest="level", action="store_const", const=1, help="same as -1")
    p.add_argument("--best", dest="level", action="store_const", const=9, help="same as -9")
    p.add_argument("--config", help="TOML config instead of a level")
    p.add_argument("--version", action="version", version=f"chunkpress {__version__}")
    p.set_defaults(func=cmd_zstd_style, mode="compress")
    return p


def cmd_zstd_style(args) -> int:
    """Run the subcommand that a zstd-style command line means."""
    if args.mode == "list":
        if not args.inputs:
            raise InputError("-l needs archive files")
        return cmd_inspect(argparse.Namespace(input=args.inputs, json=False))
    if args.mode in ("decompress", "test"):
        args.test, args.rules = args.mode == "test", None
        return cmd_decompress(args)
    workers = args.threads if args.threads and args.threads > 1 else None
    for name in ("rules", "scheduler", "block_size", "scorer", "rewriter", "coder", "max_rules", "vocab_size",
                 "min_count", "pretokenizer"):
        setattr(args, name, None)
    args.workers, args.shared_dictionary, args.rules_ref = workers, False, False
    return cmd_compress(args)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``), raised where the program is, so that it cleans up as on
    Ctrl-C: staging files removed, workers stopped."""


def _on_sigterm(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM handled like SIGINT while a command runs (main thread only; restored after)."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals to the host
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv=None) -> int:
    from .format.limits import address_space_cap

    argv = _study_run_implied(sys.argv[1:] if argv is None else [str(a) for a in argv])
    args = (build_zstd_parser() if _zstd_style(argv) else build_parser()).parse_args(argv)
    try:
        with _sigterm_as_interrupt(), address_space_cap():
            return args.func(args)
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
    """The ``chunkpress`` program: :func:`main`, then exit with its status. After an interrupt
    a compiled kernel may still run on its helper thread (``call_interruptibly``); the
    interpreter's teardown would free the code under it (a SIGSEGV instead of 130 or 143), so
    such a process flushes its streams and ends at once."""
    from .engine.kernels import kernel_abandoned

    code = main()
    if kernel_abandoned():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a reader gone: nothing more to say to it
                pass
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    entry()
