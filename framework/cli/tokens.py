"""train, encode, decode, export-hf and the imports: learned dictionaries as tokenizers."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ..errors import ChunkpressError, InputError, PluginError
from ..fileio import StreamingOutput, check_writable, opened, read_input, write_output
from ..format.idfile import FORMATS
from ..format.limits import READ_BYTES_PER_BYTE, memory_limit, work_limit
from ..process import naming, return_large_blocks_when_freed
from ..progress import Progress
from .options import Common, overrides, pipeline_options, sizes, workers


def _tokenizer(path: str, decoding: bool = False, segmenter: str | None = None):
    """The rules file at ``path`` (errors name it), to decode only, or cut by ``segmenter``."""
    from ..text.tokenizer import Tokenizer  # deferred: numba's modules load for the commands that use them

    try:
        return Tokenizer.from_file(path, decoding=decoding, segmenter=segmenter)
    except PluginError as exc:
        raise type(exc)(f"--segmenter: {exc}") from None


def sized_path(path: str, vocab_size: int) -> str:
    """Where a sweep writes the vocabulary of ``vocab_size``: vocab.rules -> vocab.8000.rules."""
    return "{0}.{2}{1}".format(*os.path.splitext(path), vocab_size)


def cmd_train(args: argparse.Namespace) -> int:
    # deferred: numba's modules load for the commands that use them
    from ..pipeline import Pipeline
    from ..study.traceio import trace_to_csv
    from ..text.training import train

    common = Common.of(args)
    return_large_blocks_when_freed()
    if args.learner is not None and args.trace:
        raise InputError("--trace records every merge: a top-down --learner has none")
    sweep = args.vocab_size if args.vocab_size is not None and len(args.vocab_size) > 1 else None
    args.vocab_size = max(args.vocab_size) if args.vocab_size is not None else None
    if args.vocab_size is not None and args.scorer is None and args.config is None:
        args.scorer = "repair"  # a vocabulary size is how HF users ask for BPE (most frequent pair first)
    pipe = Pipeline.from_config(args.config, level=args.level, **overrides(args, len(args.special_token or ())))
    if sweep and not pipe.learns_top_down:
        raise InputError(f"--vocab-size {','.join(map(str, sweep))}: several sizes are a top-down --learner's "
                         "sweep; a merge vocabulary's smaller sizes are its prefixes (train the largest; "
                         "evaluate --vocab-size V,V measures each)")
    rules_out = args.rules
    if rules_out is None and not args.trace:
        if len(args.inputs) > 1:
            raise InputError("several training inputs: name the rules file with --rules")
        rules_out = "-" if args.inputs[0] == "-" else args.inputs[0] + ".rules"
    if sweep and rules_out == "-":
        raise InputError("--vocab-size with several sizes writes a rules file each: name them with --rules, "
                         "not stdout")
    outputs = [(size, sized_path(rules_out, size)) for size in sweep] if sweep and rules_out else \
        [(None, rules_out)] if rules_out else []
    for path in [out for _, out in outputs] + [args.trace]:
        if path:
            check_writable(path, args.force)
    trained = train(pipe, args.inputs, special=args.special_token or (), held_out=args.eval, workers=args.workers,
                    scheduler=args.scheduler, vocab_sizes=sweep,
                    meter=lambda label, total=None, **kw: Progress(label, total, quiet=common.quiet, **kw))
    first = args.inputs[0] if len(args.inputs) == 1 else None
    for size, out in outputs:
        rules_file = trained.rules_file if size is None else trained.sweep[size]
        write_output(out, rules_file.to_bytes(), args.force, binary=True, like=first)
    if args.trace and trained.trace is not None:
        write_output(args.trace, trace_to_csv(trained.trace).encode(), args.force, like=first)
    if not common.quiet:
        print(trained.summary(), file=sys.stderr)
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    from ..format.idfile import write_id_pieces  # deferred: numba's modules load for the commands that use them

    tokenizer = _tokenizer(args.rules, segmenter=args.segmenter)
    out = args.output or ("-" if args.input == "-" else args.input + ".ids")
    check_writable(out, args.force)
    try:
        with opened(args.input) as stream, \
                StreamingOutput(out, args.force, binary=args.format != "text", like=args.input) as sink:
            sampling = {"dropout": args.dropout, "alpha": args.alpha, "nbest_size": args.nbest_size, "seed": args.seed}
            write_id_pieces(tokenizer.ids_of_stream(stream, **sampling), args.format, sink.write)
    except ChunkpressError as exc:
        raise naming(exc, args.input) from None
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    from ..format.idfile import read_ids  # deferred: numba's modules load for the commands that use them

    tokenizer = _tokenizer(args.rules, decoding=True)
    out = args.output or "-"
    check_writable(out, args.force)
    ids = read_ids(read_input(args.input, memory_limit()), args.format, args.input)  # read_ids checks the rest
    try:
        data = tokenizer.decode_bytes(ids)
    except ChunkpressError as exc:  # ids this dictionary does not have: a bad input
        raise InputError(f"{args.input}: {exc}") from None
    write_output(out, data, args.force, like=args.input)
    return 0


def cmd_export_hf(args: argparse.Namespace) -> int:
    tokenizer = _tokenizer(args.rules)
    out = args.output or args.rules + ".tokenizer.json"
    check_writable(out, args.force)
    try:
        text = tokenizer.to_hf_json(dropout=args.dropout)
    except ChunkpressError as exc:
        raise naming(exc, args.rules) from None
    write_output(out, text.encode(), args.force, like=args.rules)
    return 0


#: the import commands: (the source's file suffix, the Tokenizer's reader, what the input is)
_IMPORTS = {"import-hf": (".json", "from_hf_file", "an HF tokenizer.json (BPE, Unigram or WordPiece)"),
            "import-spm": (".model", "from_spm_file", "a sentencepiece .model (unigram or BPE)"),
            "import-tiktoken": (".tiktoken", "from_tiktoken_file",
                                "a tiktoken ranks file (a token in base64 and its rank a line)")}


def cmd_import(args: argparse.Namespace) -> int:
    from ..text.tokenizer import Tokenizer  # deferred: numba's modules load for the commands that use them

    suffix, reader, _ = _IMPORTS[args.importing]
    out = args.output or ("-" if args.input == "-" else args.input.removesuffix(suffix) + ".rules")  # as train's
    check_writable(out, args.force)
    extra = {"pretokenizer": args.pretokenizer} if args.importing == "import-tiktoken" else {}
    tokenizer = getattr(Tokenizer, reader)(args.input, **extra)
    write_output(out, tokenizer.to_rules_file().to_bytes(), args.force, binary=True, like=args.input)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ..text.metrics import check_alpha, evaluate, parity, table_with_parity  # deferred: numba's modules
    check_alpha(args.alpha)  # before any file is read: a bad option is the first thing said
    named = [t.split("=", 1) if "=" in t and not os.path.exists(t) else (t, t) for t in args.texts]  # LANG=PATH
    texts = {name: read_input(path, work_limit(READ_BYTES_PER_BYTE)) for name, path in named}
    rows = [row for segmenter in (args.segmenter.split(",") if args.segmenter else [None])
            for row in evaluate(_tokenizer(args.rules, segmenter=segmenter), texts, args.vocab_size or (), args.alpha)]
    across = parity(rows) if any(name != path for name, path in named) else []  # texts named by language
    print("\n".join(json.dumps(r) for r in [*rows, *({"parity": p} for p in across)]) if args.json
          else table_with_parity(rows, across))
    return 0


def add_commands(add) -> None:
    p = add("train", help="learn a dictionary; save the rules and/or the trace")
    p.add_argument("inputs", nargs="+", metavar="input", help="training texts ('-' for stdin); with a "
                   "--pretokenizer their words are counted line by line, as HF's trainer reads files")
    p.add_argument("--rules", help="rules file to write (default INPUT.rules for one input unless --trace is given)")
    p.add_argument("--special-token", action="append", metavar="TOKEN", help="an added token (repeatable): "
                   "kept whole, never learned from, given the ids after the merges (HF's added tokens)")
    p.add_argument("--trace", help="CSV of the per-step trace (reference program's columns first)")
    p.add_argument("--eval", help="held-out text: the trace gets its code length at every step")
    p.add_argument("--workers", type=workers, help="with a --pretokenizer: count pre-tokens in this many processes")
    p.add_argument("--scheduler", help="with a --pretokenizer: count pre-tokens on the Dask scheduler at this address")
    p.add_argument("-f", "--force", action="store_true", help="overwrite existing outputs")
    pipeline_options(p, sweep=True)
    p.set_defaults(func=cmd_train, level=None)
    for name, func, helptext in (("encode", cmd_encode, "text -> symbol ids with a learned dictionary"),
                                 ("decode", cmd_decode, "symbol ids -> text with a learned dictionary")):
        p = add(name, help=helptext)
        p.add_argument("input", help="input ('-' for stdin)")
        p.add_argument("--rules", required=True, help="rules file written by train")
        p.add_argument("--format", choices=FORMATS, default="u32",
                       help="ids as little-endian uint32 (default) or whitespace-separated text")
        if name == "encode":
            p.add_argument("--segmenter", help="cut the text another way than the rules file says")
            p.add_argument("--dropout", type=float, metavar="P", help="BPE-dropout: skip each merge with probability P")
            p.add_argument("--alpha", type=float, help="Unigram sampling's smoothing, as sentencepiece's alpha")
            p.add_argument("--nbest-size", type=int, help="Unigram sampling from the N best, or -1 (default): from all")
            p.add_argument("--seed", type=int, help="the seed of the samples (default: a new one each run)")
        p.add_argument("-o", "--output", help="output path ('-' for stdout; default: "
                       + ("INPUT.ids, or stdout for stdin)" if name == "encode" else "stdout)"))
        p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
        p.set_defaults(func=func)
    p = add("export-hf", help="write a rules file as an HF tokenizers tokenizer.json")
    p.add_argument("rules", help="rules file")
    p.add_argument("--dropout", type=float, metavar="P", help="the BPE model's dropout (HF's BPE(dropout=P))")
    p.add_argument("-o", "--output", help="the file to write (default RULES.tokenizer.json)")
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
    p.set_defaults(func=cmd_export_hf)
    for name, (suffix, _, what) in _IMPORTS.items():
        p = add(name, help=f"read {what} into a rules file whose encode gives its ids")
        p.add_argument("input", help=what)
        if name == "import-tiktoken":
            p.add_argument("--pretokenizer", help="its split pattern as a pre-tokenizer (default: cl100k or o200k, "
                           "by the number of ranks of tiktoken's published encodings)")
        p.add_argument("-o", "--output", help=f"the file to write (default INPUT without {suffix}, plus .rules)")
        p.add_argument("-f", "--force", action="store_true", help="overwrite an existing output")
        p.set_defaults(func=cmd_import, importing=name)
    p = add("evaluate", help="tokenizer metrics (tokens, bytes and words per token, Renyi efficiency) per text")
    p.add_argument("rules", help="rules file")
    p.add_argument("texts", nargs="+", metavar="TEXT", help="UTF-8 texts ('-' for stdin), or LANG=PATH (en=a.txt): "
                   "two or more so named, the parity across them (Gini, max/min of bytes per token)")
    p.add_argument("--vocab-size", type=sizes, metavar="V[,V...]", help="evaluate the prefixes of the dictionary "
                   "that hold these many tokens (as training to that size would have learned)")
    p.add_argument("--alpha", type=float, default=2.5, help="Renyi efficiency's order (default 2.5)")
    p.add_argument("--segmenter", metavar="S[,S...]", help="evaluate with these segmenters, a row each (default: the "
                   "rules file's)")
    p.add_argument("--json", action="store_true", help="one JSON object a line, keys as the table's columns")
    p.set_defaults(func=cmd_evaluate)
