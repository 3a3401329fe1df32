"""Comparative studies: a grid of pipelines over datasets, run, verified and tabulated.

A study is data (TOML)::

    [study]
    name = "scorers"
    repeats = 1                        # rows per dataset x variant

    [datasets]                         # name = path (relative to the study file)
    alice = "../../tests/data/alice29.txt"

    [base]                             # a pipeline config, as in `chunkpress compress -c`
    limits = { max_rules = 500 }

    [grid]                             # cartesian product over dotted config keys
    "scorer.name" = ["mdl", "repair"]
    "coder.name" = ["combinatorial", "varint-zstd"]

    [[variants]]                       # hand-picked extra variants (dotted keys)
    name = "zstd-19 alone"
    "coder.name" = "raw-zstd"
    "limits.max_rules" = 0

    [[variants]]                       # reuse a learned dictionary (a rules file from train)
    name = "wiki dictionary"
    rules = "wiki.rules"

Every archive is decoded and compared with the input before its row counts. A failed variant
is reported in its row (``error``) and the study goes on. Results are tidy long rows (one per
dataset x variant x repeat), written as CSV and JSON lines; the Markdown table and the PNG plot
are generated from those rows.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
import sys
import time
import tomllib
import tracemalloc
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Iterator

import attrs

from .. import __version__
from ..config import config_from_dict
from ..errors import ConfigError, FormatError, InputError
from ..plugin.registry import ROLES, Registry, default_registry
from .display import display_name
from .plots import plot_factors

COLUMNS = (
    "study", "dataset", "variant", "repeat", "scorer", "rewriter", "coder", "pretokenizer",
    "original_bytes", "archive_bytes", "header_bytes", "payload_bytes", "dictionary_bytes",
    "string_bytes", "bits_per_byte", "factor", "rules", "dictionary_size", "symbols",
    "learn_seconds", "encode_seconds", "decode_seconds", "peak_memory_bytes", "verified",
    "config_hash", "input_blake2b", "config", "versions", "error",
)
_STUDY_KEYS = {"name", "repeats"}


@attrs.frozen(kw_only=True)
class Variant:
    name: str
    config: dict  # raw config dict (base + overrides)


@attrs.frozen(kw_only=True)
class Study:
    name: str
    datasets: dict  # name -> Path
    variants: tuple
    repeats: int = 1


def _set_dotted(raw: dict, key: str, value) -> None:
    parts = key.split(".")
    node = raw
    for p in parts[:-1]:
        if isinstance(node.get(p), str):  # shorthand `coder = "name"` becomes a table
            node[p] = {"name": node[p]}
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"study: {key!r} goes through {p!r}, which is not a table")
    node[parts[-1]] = value


def _merge(base: dict, overrides: dict) -> dict:
    raw = json.loads(json.dumps(base))
    for key, value in overrides.items():
        _set_dotted(raw, key, value)
    return raw


def _label(overrides: dict, base: dict) -> str:
    """A readable variant name: the scorer (from the overrides or the base) and the overrides."""
    scorer = overrides.get("scorer.name") or (base.get("scorer", {}).get("name") if isinstance(base.get("scorer"), dict) else base.get("scorer")) or "mdl"
    rest = [f"{k[:-5] if k.endswith('.name') else k}={v}" for k, v in overrides.items() if k != "scorer.name"]
    return ", ".join([scorer, *rest])


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table, not {type(value).__name__}")
    return value


def load_study(path: str | Path) -> Study:
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read study {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    unknown = sorted(set(raw) - {"study", "datasets", "base", "grid", "variants"})
    if unknown:
        raise ConfigError(f"{path}: unknown section {unknown[0]!r}; allowed: study, datasets, base, grid, variants")
    head = _table(raw.get("study", {}), f"{path}: [study]")
    bad = sorted(set(head) - _STUDY_KEYS)
    if bad:
        raise ConfigError(f"{path}: unknown key study.{bad[0]!r}; allowed: {', '.join(sorted(_STUDY_KEYS))}")
    if not isinstance(head.get("name", ""), str):
        raise ConfigError(f"{path}: study.name must be a string")
    datasets = _table(raw.get("datasets", {}), f"{path}: [datasets]")
    for name, p in datasets.items():
        if not isinstance(p, str):
            raise ConfigError(f"{path}: datasets.{name!r} must be a path (a string)")
    datasets = {name: (path.parent / p).resolve() for name, p in datasets.items()}
    if not datasets:
        raise ConfigError(f"{path}: a study needs at least one entry in [datasets]")
    base = _table(raw.get("base", {}), f"{path}: [base]")
    grid = _table(raw.get("grid", {}), f"{path}: [grid]")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{path}: grid.{key!r} must be a non-empty list")
    listed = raw.get("variants", [])
    if not isinstance(listed, list) or not all(isinstance(v, dict) for v in listed):
        raise ConfigError(f"{path}: variants must be an array of tables ([[variants]])")
    for extra in listed:
        for key in ("name", "rules"):
            if not isinstance(extra.get(key, ""), str):
                raise ConfigError(f"{path}: a variant's {key!r} must be a string")
    variants = []
    keys = list(grid)
    # without a grid, the base alone is a variant only when no variants are listed
    combos = itertools.product(*(grid[k] for k in keys)) if keys else ([()] if not listed else [])
    for combo in combos:
        overrides = dict(zip(keys, combo))
        variants.append(Variant(name=_label(overrides, base), config=_merge(base, overrides)))
    for extra in listed:
        extra = dict(extra)
        name = extra.pop("name", None) or _label(extra, base)
        rules = extra.pop("rules", None)
        config = _merge(base, extra)
        if rules is not None:
            config["rules"] = str((path.parent / rules).resolve())
        variants.append(Variant(name=name, config=config))
    repeats = head.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"{path}: study.repeats must be a positive integer")
    return Study(name=head.get("name", path.stem), datasets=datasets, variants=tuple(variants), repeats=repeats)


def _versions(registry: Registry, config) -> dict:
    out = {"chunkpress": __version__}
    for package in ("numpy", "numba", "zstandard"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "?"
    for role in ROLES:
        name = getattr(config, role).name
        out[f"{role}:{name}"] = registry.get(role, name).version
    return out


def _fit_key(config) -> str:
    """What determines the learned dictionary: everything but the coder."""
    d = config.to_dict()
    d.pop("coder")
    return json.dumps(d, sort_keys=True)


def run_variant(study: Study, dataset: str, data: bytes, variant: Variant, repeat: int, registry: Registry,
                fits: dict | None = None) -> dict:
    """One row: learn, encode, decode, verify, measure. Failures go into the row. ``fits``
    caches learned dictionaries per repeat: variants that differ only in their coder share one
    (their rows report the learning time it took)."""
    from ..pipeline import Pipeline, decode_archive

    row = {c: "" for c in COLUMNS}
    row.update(study=study.name, dataset=dataset, variant=variant.name, repeat=repeat, original_bytes=len(data),
               input_blake2b=hashlib.blake2b(data, digest_size=16).hexdigest())
    try:
        raw_config = dict(variant.config)
        rules_path = raw_config.pop("rules", None)
        config = config_from_dict(raw_config, registry, where=f"variant {variant.name!r}")
        canonical = json.dumps(config.to_dict(), sort_keys=True)
        row.update(scorer=config.scorer.name, rewriter=config.rewriter.name, coder=config.coder.name,
                   pretokenizer=config.pretokenizer, config=canonical,
                   config_hash=hashlib.sha256(canonical.encode()).hexdigest()[:16],
                   versions=json.dumps(_versions(registry, config), sort_keys=True))
        pipe = Pipeline(config, registry)
        tracemalloc.start()
        key = (_fit_key(config) + str(rules_path), repeat)
        if rules_path is not None:  # a reused dictionary: "learning" is encoding with it
            from ..engine.learner import FitResult
            from ..text.tokenizer import Tokenizer

            t = time.perf_counter()
            tokenizer = Tokenizer.from_rules_file(Path(rules_path).read_bytes())
            symbols = tokenizer.symbols(data)
            row["learn_seconds"] = time.perf_counter() - t
            result = FitResult(rules=tokenizer.rules, symbols=symbols, trace=None, stop_reason="rules file", seconds=0.0)
        elif fits is not None and key in fits:
            result, row["learn_seconds"] = fits[key]
        else:
            t = time.perf_counter()
            result = pipe.fit(data, trace=False)
            row["learn_seconds"] = time.perf_counter() - t
            if fits is not None:
                fits[key] = (result, row["learn_seconds"])
        t = time.perf_counter()
        archive = pipe.encode(result.rules, result.symbols, data)
        row["encode_seconds"] = time.perf_counter() - t
        t = time.perf_counter()
        decoded = decode_archive(archive, registry)
        restored = decoded.data()
        row["decode_seconds"] = time.perf_counter() - t
        row["peak_memory_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        row["verified"] = restored == data
        if not row["verified"]:
            raise FormatError("decoded archive differs from the input")
        info = decoded.describe()
        row.update(
            archive_bytes=len(archive), header_bytes=info["header_bytes"], payload_bytes=info["payload_bytes"],
            dictionary_bytes=round(float(info.get("dictionary_bytes", 0)), 1),
            string_bytes=round(info["payload_bytes"] - float(info.get("dictionary_bytes", 0)), 1),
            bits_per_byte=8 * len(archive) / len(data) if data else 0.0,
            factor=len(data) / len(archive), rules=len(result.rules),
            dictionary_size=256 + len(result.rules), symbols=len(result.symbols),
        )
    except Exception as exc:  # a failed variant is a row, not the end of the study
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def check_study(study: Study, registry: Registry) -> None:
    """Before any row runs: every dataset is a readable file and every variant a valid config
    (a typo in the last variant is found at once, not after hours)."""
    for name, path in study.datasets.items():
        if not Path(path).is_file():
            raise ConfigError(f"study {study.name}: dataset {name!r} not found: {path}")
    for variant in study.variants:
        raw = dict(variant.config)
        rules = raw.pop("rules", None)
        config_from_dict(raw, registry, where=f"study {study.name}, variant {variant.name!r}")
        if rules is not None and not Path(rules).is_file():
            raise ConfigError(f"study {study.name}, variant {variant.name!r}: rules file not found: {rules}")


def _row_key(row: dict) -> tuple:
    """What makes a row the same measurement: the cell, the config, the input and the code."""
    version = json.loads(row["versions"]).get("chunkpress", "") if row.get("versions") else ""
    return (row["dataset"], row["variant"], int(row["repeat"]), row["config_hash"], row.get("input_blake2b", ""), version)


def _read_rows(path: Path) -> Iterator[tuple[tuple, dict]]:
    """(key, row) for every readable row of a results.jsonl. A line that is not a row (cut short
    by an interrupted run, not UTF-8, not an object, nested past reason, missing a column) is
    skipped: a results file is data from elsewhere, never a reason for a traceback."""
    try:
        raw = path.read_bytes()
    except IsADirectoryError:
        raise InputError(f"cannot read {path}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    for line in raw.splitlines():
        try:
            row = json.loads(line.decode("utf-8"))
            if not isinstance(row, dict) or not all(isinstance(row.get(c), str) for c in ("dataset", "variant")):
                continue
            key = _row_key(row)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError, OverflowError):
            continue
        yield key, row


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
    """Rebuild results (CSV, JSON lines, Markdown, plot) in ``out_dir`` from the rows of one or
    many results.jsonl files (studies run on several machines, or resumed): each row once, by
    dataset, variant, repeat, config, input and version; a later file's row replaces an
    earlier one. A line that is not a row (one cut short by an interrupted run) is skipped."""
    rows: dict = {}
    for path in map(Path, jsonl_files):
        for key, row in _read_rows(path):
            rows[key] = {c: row.get(c) for c in COLUMNS}
    if not rows:
        raise InputError(f"no result rows in {', '.join(map(str, jsonl_files))}")
    write_results(list(rows.values()), _out_folder(out_dir))
    return list(rows.values())


def _done_rows(jsonl: Path) -> dict:
    """Rows already measured (without error) in a results.jsonl, by key; a line that is not a
    row is ignored."""
    if not jsonl.exists():
        return {}
    return {key: row for key, row in _read_rows(jsonl) if not row.get("error")}


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
    import fcntl

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
    total = len(study.datasets) * len(study.variants) * study.repeats
    with open(jsonl, "a") as log, _rows_progress(progress, total) as bar:
        for dataset, path in study.datasets.items():
            data = path.read_bytes()
            input_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
            fits: dict = {}
            for variant in study.variants:
                for repeat in range(study.repeats):
                    row = _reused(done, study, dataset, variant, repeat, input_hash, registry)
                    reused = row is not None
                    if reused:
                        skipped += 1
                    else:
                        row = run_variant(study, dataset, data, variant, repeat, registry, fits)
                        log.write(json.dumps(row, default=str) + "\n")
                        log.flush()
                    rows.append(row)
                    _row_done(bar, progress, row, len(rows), total, reused)
    write_results(rows, out_dir)
    if progress is not None and skipped:
        print(f"{skipped} of {total} rows were already in {jsonl} and were not run again (--rerun runs them)",
              file=progress, flush=True)
    return rows


def _row_task(study: Study, dataset: str, path: str, variant: Variant, repeat: int) -> dict:
    """One row, in a Dask worker: its kernels are loaded before the timing starts."""
    global _WARM
    registry = default_registry()
    if not _WARM:
        from ..pipeline import Pipeline

        Pipeline.from_config(None, registry, scorer="repair").compress(b"warm up the compiled kernels " * 20)
        _WARM = True
    return run_variant(study, dataset, Path(path).read_bytes(), variant, repeat, registry)


_WARM = False


def _run_study_on_dask(study, out_dir: Path, registry, progress, rerun, workers, scheduler) -> list[dict]:
    from ..parallel import dask_client

    jsonl = out_dir / "results.jsonl"
    done = {} if rerun else _done_rows(jsonl)
    cells = [(d, p, v, r) for d, p in study.datasets.items() for v in study.variants for r in range(study.repeats)]
    rows: dict = {}
    hashes = {d: hashlib.blake2b(Path(p).read_bytes(), digest_size=16).hexdigest() for d, p in study.datasets.items()}
    for i, (d, _, v, r) in enumerate(cells):
        row = _reused(done, study, d, v, r, hashes[d], registry)
        if row is not None:
            rows[i] = row
    skipped = len(rows)
    with dask_client(workers, scheduler) as client:
        from distributed import as_completed  # present: dask_client checked it

        futures = {client.submit(_row_task, study, d, str(p), v, r, pure=False): i
                   for i, (d, p, v, r) in enumerate(cells) if i not in rows}
        with open(jsonl, "a") as log, _rows_progress(progress, len(cells)) as bar:
            bar.update(skipped)
            for future in as_completed(futures):
                i = futures[future]
                rows[i] = row = future.result()
                log.write(json.dumps(row, default=str) + "\n")
                log.flush()
                _row_done(bar, progress, row, len(rows), len(cells), False)
    ordered = [rows[i] for i in range(len(cells))]
    write_results(ordered, out_dir)
    if progress is not None and skipped:
        print(f"{skipped} of {len(cells)} rows were already in {jsonl} and were not run again (--rerun runs them)",
              file=progress, flush=True)
    return ordered


def _rows_progress(stream, total: int):
    """A bar over the study's rows (percentage and ETA) on ``stream``; None: silent."""
    from ..progress import Progress

    return Progress("study", total, unit="rows", quiet=stream is None, stream=stream)


def _row_done(bar, stream, row: dict, done: int, total: int, reused: bool) -> None:
    """One line per finished row, above the bar."""
    bar.update(done)
    if stream is None:
        return
    status = ("already in results.jsonl" if reused
              else f"ERROR {row['error']}" if row["error"]
              else f"factor {float(row['factor']):.3f}, {float(row['learn_seconds']):.1f}s")
    bar.write(f"[{done}/{total}] {row['dataset']} / {row['variant']}: {status}")


def _reused(done: dict, study: Study, dataset: str, variant: Variant, repeat: int, input_hash: str, registry):
    if not done:
        return None
    raw = dict(variant.config)
    raw.pop("rules", None)
    config = config_from_dict(raw, registry, where=f"variant {variant.name!r}")
    config_hash = hashlib.sha256(json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
    key = (dataset, variant.name, repeat, config_hash, input_hash, __version__)
    return done.get(key)


def write_results(rows: list[dict], out_dir: Path) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    (out_dir / "results.csv").write_text(buf.getvalue())
    (out_dir / "results.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    (out_dir / "results.md").write_text(markdown_table(rows))
    try:
        plot_factors(rows, out_dir / "factor.png")
    except ImportError:
        print("chunkpress: matplotlib is not installed; no plots (pip install chunkpress[plots])", file=sys.stderr)


def _mean(values: list) -> float:
    """The mean of the values that are numbers (a merged file may hold rows from elsewhere);
    NaN when none is."""
    numbers = []
    for v in values:
        try:
            numbers.append(float(v))
        except (TypeError, ValueError, OverflowError):
            continue
    return sum(numbers) / len(numbers) if numbers else float("nan")


def markdown_table(rows: list[dict]) -> str:
    """One line per dataset x variant (means over repeats), generated from the rows."""
    head = "| dataset | variant | archive bytes | dictionary bytes | bits/byte | factor | rules | learn s | encode s | decode s | verified |\n"
    head += "|---|---|---|---|---|---|---|---|---|---|---|\n"
    lines = []
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["variant"]), []).append(r)
    for (dataset, variant), rs in groups.items():
        ok = [r for r in rs if not r["error"]]
        if not ok:
            lines.append(f"| {display_name(dataset)} | {display_name(variant)} | failed: "
                         f"{display_name(rs[0]['error'], 200)} |||||||||")
            continue
        mean = lambda key: _mean([r.get(key) for r in ok])  # noqa: E731
        lines.append(
            f"| {display_name(dataset)} | {display_name(variant)} | {mean('archive_bytes'):,.0f} "
            f"| {mean('dictionary_bytes'):,.0f} "
            f"| {mean('bits_per_byte'):.4f} | {mean('factor'):.4f} | {mean('rules'):,.0f} | {mean('learn_seconds'):.2f} "
            f"| {mean('encode_seconds'):.3f} | {mean('decode_seconds'):.3f} | {all(r.get('verified') is True for r in ok)} |"
        )
    return head + "\n".join(lines) + "\n"
