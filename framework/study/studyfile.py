"""A study as data: the TOML file, its datasets and its variants, checked before any row runs.

A study is a TOML file::

    [study]
    name = "scorers"
    repeats = 3                        # rows per dataset x variant (tables show the median)
    data_root = "../../../shared/corpus"   # where datasets live (relative to this file);
                                       # --data-root DIR or CHUNKPRESS_DATA_ROOT overrides it

    [datasets]                         # name = path (relative to data_root, or to this file
    alice = "alice29.txt"              # when no data root is set)

    [base]                             # a pipeline config, as in `chunkpress compress --config`
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

#: the environment variable that names the data folder when --data-root is not given
DATA_ROOT_ENV = "CHUNKPRESS_DATA_ROOT"
_STUDY_KEYS = {"name", "repeats", "data_root"}


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
    """A readable variant name: the scorer (from the overrides or the base) and the overrides."""
    base_scorer = base.get("scorer")
    scorer = (overrides.get("scorer.name")
              or (base_scorer.get("name") if isinstance(base_scorer, dict) else base_scorer) or "mdl")
    rest = [f"{k[:-5] if k.endswith('.name') else k}={v}" for k, v in overrides.items() if k != "scorer.name"]
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
    unknown = sorted(set(raw) - {"study", "datasets", "base", "grid", "variants"})
    if unknown:
        raise ConfigError(f"{path}: unknown section {unknown[0]!r}; allowed: study, datasets, base, grid, variants")
    head = _table(raw.get("study", {}), f"{path}: [study]")
    bad = sorted(set(head) - _STUDY_KEYS)
    if bad:
        raise ConfigError(f"{path}: unknown key study.{bad[0]!r}; allowed: {', '.join(sorted(_STUDY_KEYS))}")
    if not isinstance(head.get("name", ""), str):
        raise ConfigError(f"{path}: study.name must be a string")
    root, root_from = _data_root(path, head, data_root)
    datasets = _table(raw.get("datasets", {}), f"{path}: [datasets]")
    for name, p in datasets.items():
        if not isinstance(p, str):
            raise ConfigError(f"{path}: datasets.{name!r} must be a path (a string)")
    datasets = {name: ((root or path.parent) / p).resolve() for name, p in datasets.items()}
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
    repeats = head.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ConfigError(f"{path}: study.repeats must be a positive integer")
    return Study(name=head.get("name", path.stem), datasets=datasets, variants=tuple(_variants(path, base, grid, listed)),
                 repeats=repeats, data_root=root, data_root_from=root_from)


def variant_config(variant: Variant, registry: Registry, where: str):
    """(the variant's checked config, its rules file path or None)."""
    raw = dict(variant.config)
    rules = raw.pop("rules", None)
    return config_from_dict(raw, registry, where=where), rules


def check_study(study: Study, registry: Registry) -> None:
    """Before any row runs: every dataset is a readable file and every variant a valid config
    (a typo in the last variant is found at once, not after hours)."""
    for name, path in study.datasets.items():
        if not Path(path).is_file():
            hint = (f" (looked up in {study.data_root}, from {study.data_root_from})" if study.data_root
                    else f"; name the data folder with --data-root DIR or {DATA_ROOT_ENV}")
            raise ConfigError(f"study {study.name}: dataset {name!r} not found: {path}{hint}")
    for variant in study.variants:
        where = f"study {study.name}, variant {variant.name!r}"
        _, rules = variant_config(variant, registry, where)
        if rules is not None and not Path(rules).is_file():
            raise ConfigError(f"{where}: rules file not found: {rules}")
