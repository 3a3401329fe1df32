"""A study as data: the TOML file, its datasets and its variants, checked before any row runs.

A study is a TOML file::

    [study]
    name = "scorers"
    repeats = 3                        # rows per dataset x variant (the default; tables show
                                       # the median and the spread)
    vocab_sizes = [4096, 8192]         # optional: a sweep, one learning run per dataset x
                                       # variant x repeat to the largest size, a row per size
                                       # (a top-down learner, "learner.name" = "unigram",
                                       # answers every size from its one pruning run)
    data_root = "../../../shared/corpus"   # where datasets live (relative to this file);
                                       # --data-root DIR or CHUNKPRESS_DATA_ROOT overrides it

    [datasets]                         # name = path (relative to data_root, or to this file
    alice = "alice29.txt"              # when no data root is set)

    [base]                             # a pipeline config, as in `chunkpress compress --config`
    limits = { max_rules = 500 }

    [grid]                             # cartesian product over dotted config keys
    "scorer.name" = ["mdl", "repair"]
    "coder.name" = ["combinatorial", "varint-zstd"]

    [[variants]]                       # a segmenter cuts the text (and the held-out texts)
    name = "BPE, fewest tokens"        # instead of the merges: a vocabulary's inference
    "segmenter.name" = "fewest-tokens"

    [[variants]]                       # hand-picked extra variants (dotted keys)
    name = "zstd-19 alone"
    "coder.name" = "raw-zstd"
    "limits.max_rules" = 0

    [[variants]]                       # reuse a learned dictionary (a rules file from train)
    name = "wiki dictionary"
    rules = "wiki.rules"

    [held_out]                         # optional: texts never learned from, whose tokenizer
    udhr_arb = "udhr_arb.txt"          # metrics each row reports too (its held_out column);
    rest = { path = "en_mix_100MB.txt", offset = 10_000_000, length = 10_000_000 }
                                       # a slice of a file, in whole lines
"""

from __future__ import annotations

import itertools
import json
import math
import os
import tomllib
from pathlib import Path

import attrs

from ..config import config_from_dict
from ..errors import ConfigError
from ..plugin.registry import Registry
from .display import readable_override

#: the environment variable that names the data folder when --data-root is not given
DATA_ROOT_ENV = "CHUNKPRESS_DATA_ROOT"
_STUDY_KEYS = {"name", "repeats", "data_root", "vocab_sizes"}
#: rows per dataset x variant unless the study says: enough for a median and a spread
DEFAULT_REPEATS = 3


@attrs.frozen(kw_only=True)
class Variant:
    name: str
    config: dict  # raw config dict (base + overrides)


@attrs.frozen(kw_only=True)
class Study:
    name: str
    datasets: dict  # name -> Path
    variants: tuple
    repeats: int = DEFAULT_REPEATS
    #: a sweep: the vocabulary sizes each learning run is measured at (ascending; empty: none)
    vocab_sizes: tuple = ()
    held_out: dict = attrs.field(factory=dict)  # name -> HeldOut: texts measured, never learned from
    #: the folder relative datasets were looked up in, and who chose it (for error messages)
    data_root: Path | None = None
    data_root_from: str = ""


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
    """A readable variant name: the scorer (from the overrides or the base) and the overrides,
    as words ("wordpiece, 1,000 rules, cm"), not config keys."""
    base_scorer = base.get("scorer")
    scorer = (overrides.get("scorer.name")
              or (base_scorer.get("name") if isinstance(base_scorer, dict) else base_scorer) or "mdl")
    rest = [readable_override(k, v) for k, v in overrides.items() if k != "scorer.name"]
    return ", ".join([scorer, *rest])


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be a table, not {type(value).__name__}")
    return value


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read study {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _data_root(path: Path, head: dict, data_root: str | Path | None) -> tuple[Path | None, str]:
    """Where relative dataset paths point: --data-root, then $CHUNKPRESS_DATA_ROOT (both
    relative to the working folder), then the study's own data_root (relative to the study
    file); None: relative to the study file."""
    if data_root:
        return Path(data_root).resolve(), "--data-root"
    if os.environ.get(DATA_ROOT_ENV):
        return Path(os.environ[DATA_ROOT_ENV]).resolve(), DATA_ROOT_ENV
    if "data_root" in head:
        if not isinstance(head["data_root"], str):
            raise ConfigError(f"{path}: study.data_root must be a path (a string)")
        return (path.parent / head["data_root"]).resolve(), f"study.data_root in {path.name}"
    return None, ""


#: a study has at most this many variants: each is a row per dataset and repeat, and a grid of a
#: few lists multiplies out fast (ten lists of ten values are 10^10 rows that no study can run)
MAX_VARIANTS = 100_000


def _variants(path: Path, base: dict, grid: dict, listed: list) -> list[Variant]:
    variants = []
    keys = list(grid)
    count = math.prod(len(grid[k]) for k in keys) + len(listed)
    if count > MAX_VARIANTS:
        raise ConfigError(f"{path}: the grid and variants make {count:,} variants, more than {MAX_VARIANTS:,}; "
                          "split the study")
    # without a grid, the base alone is a variant only when no variants are listed
    combos = itertools.product(*(grid[k] for k in keys)) if keys else ([()] if not listed else [])
    for combo in combos:
        overrides = dict(zip(keys, combo, strict=False))
        variants.append(Variant(name=_label(overrides, base), config=_merge(base, overrides)))
    for extra in listed:
        extra = dict(extra)
        name = extra.pop("name", None) or _label(extra, base)
        rules = extra.pop("rules", None)
        config = _merge(base, extra)
        if rules is not None:
            config["rules"] = str((path.parent / rules).resolve())
        variants.append(Variant(name=name, config=config))
    return variants


def load_study(path: str | Path, data_root: str | Path | None = None) -> Study:
    """Read and check a study file; ``data_root`` is --data-root (see ``_data_root``)."""
    path = Path(path)
    raw = _read_toml(path)
    unknown = sorted(set(raw) - {"study", "datasets", "held_out", "base", "grid", "variants"})
    if unknown:
        raise ConfigError(f"{path}: unknown section {unknown[0]!r}; allowed: study, datasets, held_out, base, grid, "
                          "variants")
    head = _table(raw.get("study", {}), f"{path}: [study]")
    bad = sorted(set(head) - _STUDY_KEYS)
    if bad:
        raise ConfigError(f"{path}: unknown key study.{bad[0]!r}; allowed: {', '.join(sorted(_STUDY_KEYS))}")
    if not isinstance(head.get("name", ""), str):
        raise ConfigError(f"{path}: study.name must be a string")
    root, root_from = _data_root(path, head, data_root)
    datasets = {name: ((root or path.parent) / p).resolve() for name, p in _paths(path, raw, "datasets").items()}
    held_out = {name: attrs.evolve(text, path=((root or path.parent) / text.path).resolve())
                for name, text in _held_out(path, raw).items()}
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
    repeats = head.get("repeats", DEFAULT_REPEATS)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"{path}: study.repeats must be a positive integer")
    return Study(name=head.get("name", path.stem), datasets=datasets, variants=tuple(_variants(path, base, grid, listed)),
                 repeats=repeats, vocab_sizes=_vocab_sizes(path, head.get("vocab_sizes", [])), held_out=held_out,
                 data_root=root, data_root_from=root_from)


def _paths(path: Path, raw: dict, section: str) -> dict:
    """The ``[section]`` table of name = path strings."""
    table = _table(raw.get(section, {}), f"{path}: [{section}]")
    for name, p in table.items():
        if not isinstance(p, str):
            raise ConfigError(f"{path}: {section}.{name!r} must be a path (a string)")
    return table


@attrs.frozen(kw_only=True)
class HeldOut:
    """A held-out text: a file, or the whole lines of a slice of one (``offset``, ``length``
    bytes; a slice starts after the line the offset cuts and ends at the last line end)."""

    path: Path
    offset: int = 0
    length: int | None = None

    def read(self) -> bytes:
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(-1 if self.length is None else self.length)
        if self.offset:
            data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
        if self.length is not None and b"\n" in data:
            data = data[:data.rfind(b"\n") + 1]
        return data


def _held_out(path: Path, raw: dict) -> dict:
    """[held_out]: name = path, or name = { path, offset, length }."""
    table = _table(raw.get("held_out", {}), f"{path}: [held_out]")
    out = {}
    for name, spec in table.items():
        if isinstance(spec, str):
            spec = {"path": spec}
        where = f"{path}: held_out.{name!r}"
        if not isinstance(spec, dict) or not isinstance(spec.get("path"), str) or set(spec) - {"path", "offset",
                                                                                             "length"}:
            raise ConfigError(f"{where} must be a path, or a table of path, offset and length")
        for key in ("offset", "length"):
            value = spec.get(key, 0 if key == "offset" else 1)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if key == "offset" else 1):
                raise ConfigError(f"{where}: {key} must be a{' non-negative' if key == 'offset' else ' positive'} "
                                  "number of bytes")
        out[name] = HeldOut(path=Path(spec["path"]), offset=spec.get("offset", 0), length=spec.get("length"))
    return out


def _vocab_sizes(path: Path, sizes) -> tuple:
    """study.vocab_sizes: distinct integers above the 256 byte tokens, in ascending order."""
    if not isinstance(sizes, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 256
                                              for v in sizes):
        raise ConfigError(f"{path}: study.vocab_sizes must be a list of vocabulary sizes above 256 "
                          "(the byte tokens come first)")
    return tuple(sorted(set(sizes)))


def sweep_config(variant: Variant, sizes: tuple) -> Variant:
    """The variant a sweep learns once: its dictionary grown to the largest of ``sizes``
    (max_rules counts the rules alive, so the vocabulary reaches it with deletions too); a
    top-down learner learns every size in the one call (its ``learn_sizes``)."""
    if not sizes:
        return variant
    limits = variant.config.get("limits") or {}
    if "max_rules" in limits:
        raise ConfigError(f"variant {variant.name!r} sets limits.max_rules, which study.vocab_sizes sets; "
                          "drop one")
    return Variant(name=variant.name, config=_merge(variant.config, {"limits.max_rules": sizes[-1] - 256}))


def variant_config(variant: Variant, registry: Registry, where: str):
    """(the variant's checked config, its rules file path or None)."""
    raw = dict(variant.config)
    rules = raw.pop("rules", None)
    return config_from_dict(raw, registry, where=where), rules


def check_study(study: Study, registry: Registry) -> None:
    """Before any row runs: every dataset is a readable file and every variant a valid config
    (a typo in the last variant is found at once, not after hours)."""
    for name, path in {**study.datasets, **{n: h.path for n, h in study.held_out.items()}}.items():
        if not Path(path).is_file():
            hint = (f" (looked up in {study.data_root}, from {study.data_root_from})" if study.data_root
                    else f"; name the data folder with --data-root DIR or {DATA_ROOT_ENV}")
            raise ConfigError(f"study {study.name}: dataset {name!r} not found: {path}{hint}")
    for variant in study.variants:
        where = f"study {study.name}, variant {variant.name!r}"
        _, rules = variant_config(sweep_config(variant, study.vocab_sizes), registry, where)
        if rules is not None and not Path(rules).is_file():
            raise ConfigError(f"{where}: rules file not found: {rules}")
