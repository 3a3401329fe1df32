"""Running a study: every dataset x variant x repeat measured, verified and tabulated.

Each row is measured honestly: the kernels its pipeline uses are compiled and loaded first, on a
sample of its own dataset, outside the timing (in the driver and in every Dask worker); then
the row runs in a forked child process of its own (``isolation``), whose peak RSS is the row's.
Every archive is decoded and compared with the input before its row counts. A failed variant is
reported in its row (``error``) and the study goes on. Rows (``rows``) are written as JSON lines
and CSV; the Markdown and LaTeX tables (``tables``) and the plots (``plots``) are generated from
them. The study file itself is read by ``studyfile``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path

import attrs
import numpy as np

from ..contract import BYTE_SYMBOLS, NO_PRETOKENIZER, REPLAYS_MERGES
from ..errors import ChunkpressWarning, FormatError, InputError
from ..format.container import checksum
from ..parallel import dask_client
from ..pipeline import Pipeline, decode_archive
from ..plugin.registry import Registry, default_registry
from ..progress import Progress
from ..text.metrics import measure as token_metrics
from ..text.metrics import prefix, tokens_of
from ..text.tokenizer import Tokenizer, estimated_scores
from ..version import __version__
from .isolation import run_isolated
from .machine import machine, versions
from .plots import plot_factors, plot_size_against_time, plot_vocab_sweep
from .rows import COLUMNS, TOKEN_COLUMNS, new_row, read_rows, row_key, to_csv, to_json_line, unreadable_lines
from .studyfile import Study, Variant, check_study, load_study, sweep_config, variant_config
from .tables import latex_table, markdown_table

__all__ = ["COLUMNS", "Study", "Variant", "load_study", "run_study", "run_variant", "report", "write_results"]

#: how much of a dataset the untimed warm-up run learns and codes: enough to reach every
#: kernel a row uses, small enough to cost little next to the row
WARM_UP_BYTES = 64 * 1024


def _fit_key(config, rules_path) -> str:
    """What determines the learned dictionary: everything but the coder."""
    d = config.to_dict()
    d.pop("coder")
    return json.dumps(d, sort_keys=True) + str(rules_path)


def _canonical(config) -> str:
    return json.dumps(config.to_dict(), sort_keys=True)


def config_hash(config) -> str:
    return hashlib.sha256(_canonical(config).encode()).hexdigest()[:16]


@attrs.frozen(kw_only=True)
class Learned:
    """What a learning run leaves for the rows that share it: variants that differ only in
    their coder, and every vocabulary size of a sweep."""

    rules: np.ndarray
    deletions: np.ndarray
    symbols: np.ndarray  # the dataset in the learned dictionary's ids
    seconds: float
    #: the tokenizer that cut the dataset where it is not the merges' replay (a segmenter, a
    #: top-down vocabulary, a rules file); None: the rules as learned, cut by their merges
    tokenizer: Tokenizer | None = None
    #: a top-down learner's sweep: its vocabulary at each size, from the one learning run
    by_size: dict = attrs.Factory(dict)


def _learn(pipe: Pipeline, rules_path, data: bytes, vocab_sizes: tuple = ()) -> Learned:
    """Learn (or load) the dictionary and cut ``data`` with it: by the config's segmenter
    where one is named, else by the learner's (or the rules file's) own. ``vocab_sizes``: a
    sweep, which a top-down learner learns in one call (the merges' are their prefixes)."""
    pipe.check_keeps_bytes()  # a row codes archives, which give back the text's bytes
    t = time.perf_counter()
    config = pipe.config
    named = None if pipe.replays_merges else config.segmenter.name
    by_size: dict = {}
    if rules_path is not None:  # a reused dictionary: "learning" is encoding with it
        tokenizer = Tokenizer.from_rules_file(Path(rules_path).read_bytes(), segmenter=named)
    elif pipe.learns_top_down:
        # numba (word counting, the learners' kernels): top-down rows only
        from ..text.training import learn_top_down_sizes, text_words

        words = text_words(pipe, data)
        made, _ = learn_top_down_sizes(pipe, words, [("dataset", len(data), checksum(data))],
                                       list(vocab_sizes) or None)
        tokenizers = [Tokenizer.from_rules_file(rules_file.to_bytes(), segmenter=named) for rules_file, _ in made]
        tokenizer = tokenizers[-1]  # the sizes ascend: the largest, which the config names
        by_size = dict(zip(vocab_sizes, tokenizers, strict=True)) if vocab_sizes else {}
    else:
        # numba (word counting, the engine): the rules as train learns them from this text
        from ..text.training import merges_of_text

        result = merges_of_text(pipe, data)
        learned = Tokenizer(result.rules, config.pretokenizer, deletions=result.deletions, boundary=pipe.policies()[0])
        if named is None:  # cut by the merges: the learner's own string, where it learned from the whole text
            return Learned(rules=result.rules, deletions=result.deletions, seconds=time.perf_counter() - t,
                           symbols=result.symbols if config.pretokenizer == NO_PRETOKENIZER else learned.symbols(data))
        tokenizer = _cut_by(learned, named, result.counts)
    symbols = tokenizer.symbols(data)
    return Learned(rules=tokenizer.rules, deletions=tokenizer.deletions, symbols=symbols,
                   seconds=time.perf_counter() - t, tokenizer=tokenizer, by_size=by_size)


def trained_on(rules_path, dataset: str) -> str:
    """What a row's dictionary was learned from: the row's dataset, or for a reused rules file
    the text(s) it records (its training files' names), else the rules file's own name."""
    if rules_path is None:
        return dataset
    from ..format.rulesfile import RulesFile  # numba (the rules' varints): reused dictionaries only

    meta = RulesFile.from_bytes(Path(rules_path).read_bytes())
    if meta.sources:
        return ", ".join(Path(str(s.get("name", "?"))).name if isinstance(s, dict) else "?" for s in meta.sources)
    return meta.learned_from or meta.imported_from or Path(rules_path).name


def _tokenizer(pipe: Pipeline, rules_path, learned: Learned) -> Tokenizer:
    if learned.tokenizer is not None:
        return learned.tokenizer
    return Tokenizer(learned.rules, pipe.config.pretokenizer, deletions=learned.deletions,
                     boundary=pipe.policies()[0])


def _cut_by(tokenizer: Tokenizer, segmenter: str, counts: np.ndarray) -> Tokenizer:
    """A merge vocabulary cut by ``segmenter``, its likelihoods from ``counts`` (each symbol's,
    in its training text as its merges cut it), as a rules file from ``train`` records them."""
    return Tokenizer(tokenizer.rules, tokenizer.pretokenizer, deletions=tokenizer.deletions,
                     boundary=tokenizer.boundary, segmenter=segmenter, scores=estimated_scores(counts))


def _prefix(tokenizer: Tokenizer, vocab_size: int, data: bytes) -> Tokenizer:
    """The sweep's tokenizer at ``vocab_size``; one whose segmenter reads scores gets the counts of
    the text as that prefix's merges cut it (the counts the prefix's own training records),
    not the largest run's, where a token's count is what later merges left of it."""
    smaller = prefix(tokenizer, vocab_size)
    if not smaller.cuts_by_scores:
        return smaller
    cut = smaller.with_segmenter(REPLAYS_MERGES).symbols(data, lines=True)  # as train counts the text's words
    counts = np.bincount(cut, minlength=BYTE_SYMBOLS + len(smaller.rules))
    return _cut_by(smaller, smaller.segmenter, counts)


def _token_metrics(symbols: np.ndarray, text: bytes, size: int) -> dict:
    found = token_metrics(np.asarray(symbols, dtype=np.int64), text, size)
    return {column: found[column] for column in TOKEN_COLUMNS}


def measure(config, rules_path, data: bytes, registry: Registry, fitted: Learned | None = None,
            vocab_size: int | None = None, held_out: dict | None = None,
            vocab_sizes: tuple = ()) -> tuple[dict, Learned | None]:
    """Learn (or reuse ``fitted``), encode, decode and verify ``data``: (the row's measured
    columns, what was learned, for rows to share). ``vocab_size``: the row of a sweep of
    ``vocab_sizes``, measured with the merges' prefix that holds that many tokens or the
    top-down learner's vocabulary of that size; ``held_out``: texts (name -> bytes) whose
    tokenizer metrics the row reports too."""
    pipe = Pipeline(config, registry)
    shared = None
    if fitted is None:
        fitted = shared = _learn(pipe, rules_path, data, vocab_sizes)
    rules, deletions, symbols = fitted.rules, fitted.deletions, fitted.symbols
    tokenizer = None
    if vocab_size is not None or held_out:
        tokenizer = _tokenizer(pipe, rules_path, fitted)
    if vocab_size is not None and vocab_size in fitted.by_size:
        sized: Tokenizer = fitted.by_size[vocab_size]
        if sized is not fitted.tokenizer:
            symbols = sized.symbols(data)
        tokenizer, rules, deletions = sized, sized.rules, sized.deletions
    elif vocab_size is not None and tokenizer is not None and tokenizer.vocabulary is None:
        tokenizer = _prefix(tokenizer, vocab_size, data)
        if len(tokenizer.rules) < len(rules):  # the whole dictionary's symbols are the learned ones
            symbols = tokenizer.symbols(data)
        rules, deletions = tokenizer.rules, tokenizer.deletions
    t = time.perf_counter()
    # the tokens: a top-down vocabulary's own (its rules also make the symbols that only spell
    # them); a merge vocabulary's metrics count every rule's id, as evaluate's do
    vocabulary = None if fitted.tokenizer is None else \
        (tokenizer if tokenizer is not None else fitted.tokenizer).vocabulary
    size = len(vocabulary) if vocabulary is not None else BYTE_SYMBOLS + len(rules) - len(deletions)
    ids = size if vocabulary is not None else BYTE_SYMBOLS + len(rules)
    archive = pipe.encode(rules, symbols, data)
    encode_seconds = time.perf_counter() - t
    t = time.perf_counter()
    decoded = decode_archive(archive, registry)
    restored = decoded.data()
    decode_seconds = time.perf_counter() - t
    if restored != data:
        raise FormatError("decoded archive differs from the input")
    info = decoded.describe()
    dictionary_bytes = float(info.get("dictionary_bytes", 0))
    row = {
        "learn_seconds": fitted.seconds, "encode_seconds": encode_seconds, "decode_seconds": decode_seconds,
        "verified": True, "archive_bytes": len(archive), "header_bytes": int(info["header_bytes"]),
        "payload_bytes": int(info["payload_bytes"]), "dictionary_bytes": round(dictionary_bytes, 1),
        "string_bytes": round(info["payload_bytes"] - dictionary_bytes, 1),
        "bits_per_byte": 8 * len(archive) / len(data) if data else 0.0,
        "factor": len(data) / len(archive), "rules": len(rules), "deleted": len(deletions),
        "dictionary_size": size, "symbols": len(symbols),
    }
    if data:
        row.update(_token_metrics(symbols, data, ids))
    if held_out and tokenizer is not None:
        row["held_out"] = {name: _token_metrics(tokens_of(tokenizer, text)[0], text, ids)
                           for name, text in held_out.items()}
    return row, shared


#: configs whose kernels this process has already compiled and loaded
_WARMED: set = set()


def warm_up(config, rules_path, data: bytes, registry: Registry) -> None:
    """Run the row's pipeline once, untimed, on the start of its dataset, so that every kernel
    it uses is compiled (or loaded from numba's cache) in this process before any timing."""
    key = _canonical(config) + str(rules_path)
    if key in _WARMED:
        return
    measure(config, rules_path, data[:WARM_UP_BYTES], registry)
    _WARMED.add(key)


def run_variant(study: Study, dataset: str, data: bytes, variant: Variant, repeat: int, registry: Registry,
                fits: dict | None = None, hashed: str | None = None, vocab_size: int | None = None,
                held_out: dict | None = None) -> dict:
    """One row: warm up, then learn, encode, decode, verify and measure in a child process.
    Failures go into the row. ``fits`` caches learned dictionaries per repeat: variants that
    differ only in their coder, and the vocabulary sizes of a sweep, share one (their rows
    report the learning time it took). ``hashed``: the data's checksum, when the caller has it
    (once per dataset, not per row). ``held_out``: name -> text, measured with the row's
    tokenizer."""
    row = new_row(study=study.name, dataset=dataset, variant=variant.name, vocab_size=vocab_size, repeat=repeat,
                  original_bytes=len(data), input_blake2b=hashed or checksum(data), machine=machine())
    try:
        config, rules_path = variant_config(sweep_config(variant, study.vocab_sizes), registry,
                                            where=f"variant {variant.name!r}")
        row.update(trained_on=trained_on(rules_path, dataset), scorer=config.scorer.name,
                   rewriter=config.rewriter.name, coder=config.coder.name,
                   pretokenizer=config.pretokenizer, config=config.to_dict(), config_hash=config_hash(config),
                   versions=versions(registry, config))
        warm_up(config, rules_path, data, registry)
        key = (_fit_key(config, rules_path), repeat)
        fitted = fits.get(key) if fits is not None else None
        (measured, shared), row["peak_rss_bytes"] = run_isolated(
            lambda: measure(config, rules_path, data, registry, fitted, vocab_size, held_out, study.vocab_sizes))
        row.update(measured)
        if fits is not None and shared is not None:
            fits[key] = shared
    except Exception as exc:  # a failed variant is a row, not the end of the study
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def _out_folder(out_dir: str | Path) -> Path:
    """The results folder, made if missing; an InputError if the name is taken by a file."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"cannot write results to {out}: it is a file, not a folder") from None
    except OSError as exc:
        raise InputError(f"cannot write results to {out}: {exc.strerror or exc}") from None
    return out


def report(jsonl_files: list[str | Path], out_dir: str | Path) -> list[dict]:
    """Rebuild results (CSV, JSON lines, tables, plots) in ``out_dir`` from the rows of one or
    many results.jsonl files (studies run on several machines, or resumed): each row once, by
    dataset, variant, repeat, config, input and version; a later file's row replaces an
    earlier one. A line that is not a row (one cut short by an interrupted run) is skipped.
    Rows of different configs under one variant name stay apart (see ``tables.cells``)."""
    rows: dict = {}
    for path in map(Path, jsonl_files):
        for key, row in read_rows(path):
            rows[key] = row
    if not rows:
        raise InputError(f"no result rows in {', '.join(map(str, jsonl_files))}")
    write_results(list(rows.values()), _out_folder(out_dir))
    return list(rows.values())


def _done_rows(jsonl: Path) -> dict:
    """Rows already measured (without error) in a results.jsonl, by key; a line that is not a
    row is ignored."""
    if not jsonl.exists():
        return {}
    return {key: row for key, row in read_rows(jsonl) if not row.get("error")}


def run_study(study: Study, out_dir: str | Path, registry: Registry | None = None, progress=sys.stderr,
              rerun: bool = False, workers: int | None = None, scheduler: str | None = None) -> list[dict]:
    """Run every (dataset, variant, repeat) row, appending each to ``results.jsonl`` as it
    finishes; rows already there for the same config, input and code version are reused unless
    ``rerun``, so an interrupted study resumes where it stopped. Writes CSV, Markdown and plot.

    ``workers`` (local processes) or ``scheduler`` (the address of a Dask distributed
    scheduler) run the rows as Dask tasks, one row per task; plugins must then be installed
    where the workers run (``registry`` is not sent)."""
    registry = registry or default_registry()
    check_study(study, registry)
    out_dir = _out_folder(out_dir)
    with _exclusive(out_dir):
        if workers or scheduler:
            return _run_study_on_dask(study, out_dir, registry, progress, rerun, workers, scheduler)
        return _run_study_here(study, out_dir, registry, progress, rerun)


@contextlib.contextmanager
def _exclusive(out_dir: Path):
    """Hold ``out_dir/.lock`` while a study writes there: a second run on the same folder is
    refused in one line (two would interleave and rewrite each other's results, losing rows).
    The lock goes with the process, so a killed run leaves none behind."""
    with open(out_dir / ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise InputError(f"{out_dir} is in use by another study run; wait for it or give another --out") from None
        yield


def _run_study_here(study: Study, out_dir: Path, registry: Registry, progress, rerun: bool) -> list[dict]:
    jsonl = out_dir / "results.jsonl"
    done = {} if rerun else _done_rows(jsonl)
    rows = []
    skipped = 0
    sizes = study.vocab_sizes or (None,)
    total = len(study.datasets) * len(study.variants) * study.repeats * len(sizes)
    held_out = {name: text.read() for name, text in study.held_out.items()}
    with _appending(jsonl) as log, _rows_progress(progress, total) as bar:
        for dataset, path in study.datasets.items():
            data = path.read_bytes()
            hashed = checksum(data)
            fits: dict = {}
            for variant in study.variants:
                for repeat in range(study.repeats):
                    for size in sizes:
                        row = _reused(done, dataset, variant, repeat, hashed, registry, study, size)
                        reused = row is not None
                        if reused:
                            skipped += 1
                        else:
                            row = run_variant(study, dataset, data, variant, repeat, registry, fits, hashed, size,
                                              held_out)
                            log.write(to_json_line(row))
                            log.flush()
                        rows.append(row)
                        _row_done(bar, progress, row, len(rows), total, reused)
    write_results(rows, out_dir)
    _say_reused(progress, skipped, total, jsonl)
    return rows


def _appending(jsonl: Path):
    """results.jsonl open for appending rows, each on a line of its own: a line cut short by an
    interrupted run is ended first, never joined to the next row."""
    log = open(jsonl, "a")
    if log.tell() and not jsonl.read_bytes().endswith(b"\n"):
        log.write("\n")
    return log


def _say_reused(progress, skipped: int, total: int, jsonl: Path) -> None:
    if progress is not None and skipped:
        print(f"{skipped} of {total} rows were already in {jsonl} and were not run again (--rerun runs them)",
              file=progress, flush=True)


def _row_task(study: Study, dataset: str, path: str, variant: Variant, repeat: int, hashed: str,
              size: int | None) -> dict:
    """One row, in a Dask worker: warmed up and measured there (``run_variant``); a sweep's
    rows learn each on their own there, as tasks share nothing."""
    held_out = {name: text.read() for name, text in study.held_out.items()}
    return run_variant(study, dataset, Path(path).read_bytes(), variant, repeat, default_registry(), hashed=hashed,
                       vocab_size=size, held_out=held_out)


def _run_study_on_dask(study, out_dir: Path, registry, progress, rerun, workers, scheduler) -> list[dict]:

    jsonl = out_dir / "results.jsonl"
    done = {} if rerun else _done_rows(jsonl)
    cells = [(d, p, v, r, size) for d, p in study.datasets.items() for v in study.variants
             for r in range(study.repeats) for size in study.vocab_sizes or (None,)]
    rows: dict = {}
    hashes = {d: checksum(Path(p).read_bytes()) for d, p in study.datasets.items()}
    for i, (d, _, v, r, size) in enumerate(cells):
        row = _reused(done, d, v, r, hashes[d], registry, study, size)
        if row is not None:
            rows[i] = row
    skipped = len(rows)
    with dask_client(workers, scheduler) as client:
        from distributed import as_completed  # present: dask_client checked it

        futures = {client.submit(_row_task, study, d, str(p), v, r, hashes[d], size, pure=False): i
                   for i, (d, p, v, r, size) in enumerate(cells) if i not in rows}
        with _appending(jsonl) as log, _rows_progress(progress, len(cells)) as bar:
            bar.update(skipped)
            for future in as_completed(futures):
                i = futures[future]
                rows[i] = row = future.result()
                log.write(to_json_line(row))
                log.flush()
                _row_done(bar, progress, row, len(rows), len(cells), False)
    ordered = [rows[i] for i in range(len(cells))]
    write_results(ordered, out_dir)
    _say_reused(progress, skipped, len(cells), jsonl)
    return ordered


def _rows_progress(stream, total: int):
    """A bar over the study's rows (percentage and ETA) on ``stream``; None: silent."""

    return Progress("study", total, unit="rows", quiet=stream is None, stream=stream)


def _row_done(bar, stream, row: dict, done: int, total: int, reused: bool) -> None:
    """One line per finished row, above the bar."""
    bar.update(done)
    if stream is None:
        return
    status = ("already in results.jsonl" if reused
              else f"ERROR {row['error']}" if row["error"]
              else f"factor {float(row['factor']):.3f}, {float(row['learn_seconds']):.1f}s")
    size = f", {row['vocab_size']:,} tokens" if row.get("vocab_size") else ""
    bar.write(f"[{done}/{total}] {row['dataset']} / {row['variant']}{size}: {status}")


def _reused(done: dict, dataset: str, variant: Variant, repeat: int, hashed: str, registry, study: Study,
            size: int | None):
    if not done:
        return None
    config, _ = variant_config(sweep_config(variant, study.vocab_sizes), registry,
                               where=f"variant {variant.name!r}")
    return done.get(row_key({"dataset": dataset, "variant": variant.name, "vocab_size": size, "repeat": repeat,
                             "config_hash": config_hash(config), "input_blake2b": hashed,
                             "versions": {"chunkpress": __version__}}))


def write_results(rows: list[dict], out_dir: Path, title: str = "") -> None:
    """results.jsonl, .csv, .md and .tex, and the plots (PNG, SVG, PDF) from ``rows``. Lines of
    an existing results.jsonl that are not rows (a user's notes, a line cut short) are kept in
    it, first, and set aside in results.unread.jsonl, each named in a warning."""
    jsonl = out_dir / "results.jsonl"
    kept = unreadable_lines(jsonl) if jsonl.exists() else []
    if kept:
        aside = out_dir / "results.unread.jsonl"
        aside.write_bytes(b"".join(line + b"\n" for _, line in kept))
        numbers = ", ".join(str(n) for n, _ in kept[:10]) + (", ..." if len(kept) > 10 else "")
        warnings.warn(ChunkpressWarning(f"{jsonl}: line{'s' if len(kept) > 1 else ''} {numbers} "
                                        f"{'are' if len(kept) > 1 else 'is'} not a result row: kept as "
                                        f"{'they are' if len(kept) > 1 else 'it is'}, and copied to {aside}"),
                      stacklevel=2)
    jsonl.write_bytes(b"".join(line + b"\n" for _, line in kept) + "".join(map(to_json_line, rows)).encode())
    (out_dir / "results.csv").write_text(to_csv(rows))
    (out_dir / "results.md").write_text(markdown_table(rows))
    (out_dir / "results.tex").write_text(latex_table(rows, caption=title or _title(rows)))
    try:
        plot_factors(rows, out_dir / "factor.png")
        plot_size_against_time(rows, out_dir / "size_time.png")
        plot_vocab_sweep(rows, out_dir / "sweep.png")
    except ImportError:
        print("chunkpress: matplotlib is not installed; no plots (pip install chunkpress[plots])", file=sys.stderr)


def _title(rows: list[dict]) -> str:
    names = sorted({str(r.get("study")) for r in rows if r.get("study")})
    return f"Study {', '.join(names)}." if names else ""
