"""Pipeline configuration: TOML read with tomllib into frozen attrs classes.

A config names one component per role, each as ``{name = ..., params = {...}}`` (or just the
name), plus stop limits::

    [scorer]
    name = "mdl"

    [rewriter]
    name = "linked"

    [coder]
    name = "varint-zstd"
    params = { level = 19 }

    [limits]
    max_rules = 4096
    min_count = 2

    [pretokenizer]
    name = "gpt2"        # none (default) | gpt2 | whitespace: no merge crosses a word boundary

    [boundary]           # when pairs may cross pre-token boundaries: pretokens (never; default)
    name = "superbpe"    # or superbpe (SuperBPE): after params.after rules, between words
    params = { after = 12032 }

    [deletion]           # which symbols leave the vocabulary: none (default) or picky (Picky BPE)
    name = "picky"
    params = { tau = 0.9 }

    [segmenter]          # how the vocabulary cuts text: merges (default: the rules replayed),
    name = "fewest-tokens"   # longest-prefix, fewest-tokens or likelihood

    [learner]            # how the vocabulary is learned: merges (default: bottom-up, the scorer's
    name = "unigram"     # merges), or top-down from word counts: unigram, pathpiece

Two shortcuts, as the command line's options: ``superword_after = T`` (the vocabulary size,
bytes included, at SuperBPE's transition) for the [boundary] above with ``after = T - 256``,
and ``picky = 0.9`` for the [deletion] above.

Validation runs in two passes: the shape (known sections and keys), then each ``params`` table
against the params class of the plugin it names. Errors name the file, the key and what is
allowed.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

import attrs

from .contract import DELETES_NOTHING, LEARNS_BY_MERGES, NO_NORMALIZER, NO_PRETOKENIZER, OPENS_NOTHING, REPLAYS_MERGES
from .engine.stops import Limits
from .errors import ConfigError
from .levels import DEFAULT_LEVEL, level_of
from .plugin.registry import ROLES, Registry, build_params, default_registry
from .text.pretokenizers import check_name

#: The default pipeline is the paper's method end to end: the MDL scorer and the exact coder
#: of the same model, so every bit the scorer counts is a bit on disk.
DEFAULTS = {"scorer": "mdl", "rewriter": "linked", "coder": "combinatorial", "boundary": OPENS_NOTHING,
            "deletion": DELETES_NOTHING, "segmenter": REPLAYS_MERGES, "learner": LEARNS_BY_MERGES,
            "pretokenizer": NO_PRETOKENIZER, "normalizer": NO_NORMALIZER}
#: roles whose default a config (and a rules file) leaves out: what it records stays as before
_QUIET_DEFAULTS = ("boundary", "deletion", "segmenter", "learner")
#: the shortcuts: key -> (role, component, its param), see the module docstring
SHORTCUTS = {"superword_after": ("boundary", "superbpe", "after"), "picky": ("deletion", "picky", "tau")}
#: the roles a config names without params (a rules file records the name alone)
NAMED_ONLY = ("pretokenizer", "normalizer")
#: the roles a config holds as a component with its params
COMPONENT_ROLES = tuple(role for role in ROLES if role not in NAMED_ONLY)
#: a config's sections, and the overrides a Compressor or Pipeline takes as keywords
SECTIONS = (*ROLES, "limits", *SHORTCUTS)
#: a config file is a few lines; a larger one is refused before it is read whole
MAX_CONFIG_BYTES = 1 << 20



def params_dict(params) -> dict:
    """A component's params as configs and archive headers hold them: every field, but one that
    a later version added (``metadata={"added": True}``) only where it is not at its default,
    so an archive or config that does not use it is byte for byte what the earlier version wrote."""
    out = {}
    for field in attrs.fields(type(params)):
        value = getattr(params, field.name)
        if not (field.metadata.get("added") and value == field.default):
            out[field.name] = value
    return out

@attrs.frozen(kw_only=True)
class ComponentConfig:
    """One role's choice: a registered component name and an instance of its params class."""

    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    params: Any = None

    def to_dict(self) -> dict:
        return {"name": self.name, "params": params_dict(self.params) if self.params is not None else {}}


def _default_component(role: str):
    return attrs.Factory(lambda: ComponentConfig(name=DEFAULTS[role], params=None))


@attrs.frozen(kw_only=True)
class PipelineConfig:
    scorer: ComponentConfig
    rewriter: ComponentConfig
    coder: ComponentConfig
    limits: Limits = Limits()
    pretokenizer: str = attrs.field(default=NO_PRETOKENIZER, validator=lambda _i, _a, value: check_name(value))
    boundary: ComponentConfig = attrs.field(default=_default_component("boundary"))
    deletion: ComponentConfig = attrs.field(default=_default_component("deletion"))
    segmenter: ComponentConfig = attrs.field(default=_default_component("segmenter"))
    learner: ComponentConfig = attrs.field(default=_default_component("learner"))
    normalizer: str = attrs.field(default=NO_NORMALIZER, validator=lambda _i, _a, value: _named("normalizer", value))

    def to_dict(self) -> dict:
        out = {role: getattr(self, role).to_dict() for role in COMPONENT_ROLES
               if role not in _QUIET_DEFAULTS or getattr(self, role).name != DEFAULTS[role]}
        out["limits"] = {k: v for k, v in attrs.asdict(self.limits).items() if v is not None}
        out["pretokenizer"] = {"name": self.pretokenizer}
        if self.normalizer != NO_NORMALIZER:  # written only where set: other configs stay as before
            out["normalizer"] = {"name": self.normalizer}
        return out

    def name_of(self, role: str) -> str:
        """The name of the component this config chooses for ``role``."""
        chosen = getattr(self, role)
        return chosen if isinstance(chosen, str) else chosen.name


def _component(registry, role, raw, where) -> ComponentConfig:
    if raw is None:
        raw = {"name": DEFAULTS[role]}
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [{role}] must be a table or a name")
    unknown = sorted(set(raw) - {"name", "params"})
    if unknown:
        raise ConfigError(f"{where}: unknown key {role}.{unknown[0]!r}; allowed: name, params")
    name = raw.get("name", DEFAULTS[role])
    if not isinstance(name, str):
        raise ConfigError(f"{where}: {role}.name must be a string")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise ConfigError(f"{where}: {role}.params must be a table")
    return ComponentConfig(name=name, params=build_params(registry, role, name, params, where))


def _limits(raw, where) -> Limits:
    raw = raw or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [limits] must be a table")
    allowed = [f.name for f in attrs.fields(Limits)]
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise ConfigError(f"{where}: unknown key limits.{unknown[0]!r}; allowed: {', '.join(allowed)}")
    try:
        return Limits(**raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: bad [limits]: {exc}") from None


def _named(role: str, raw, where: str = "config") -> str:
    """The name a named-only role's section or string gives, checked against the registry."""
    if raw is None:
        return DEFAULTS[role]
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - {"name"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {role}.{unknown[0]!r}; allowed: name")
        raw = raw.get("name", DEFAULTS[role])
    if role == "pretokenizer":
        return check_name(raw, where)
    known = default_registry().names(role)
    if not isinstance(raw, str) or raw not in known:
        raise ConfigError(f"{where}: unknown {role} {str(raw)[:60]!r}; available: {', '.join(known)}")
    return raw


def _shortcuts(raw: dict, where: str) -> dict:
    """``raw`` with its shortcut keys written out as the sections they stand for."""
    raw = dict(raw)
    for key, (role, name, param) in SHORTCUTS.items():
        if key not in raw:
            continue
        value = raw.pop(key)
        if role in raw:
            raise ConfigError(f"{where}: {key} and [{role}] say the same thing; give one")
        if key == "superword_after":
            if isinstance(value, bool) or not isinstance(value, int) or value <= 256:
                raise ConfigError(f"{where}: superword_after (--superword-after) {value!r}: a vocabulary size, "
                                  "the 256 byte tokens included, so a whole number above 256")
            value -= 256
        raw[role] = {"name": name, "params": {param: value}}
    return raw


def config_from_dict(raw: dict, registry: Registry | None = None, where: str = "config") -> PipelineConfig:
    registry = registry or default_registry()
    unknown = sorted(set(raw) - set(SECTIONS))
    if unknown:
        raise ConfigError(f"{where}: unknown section {unknown[0]!r}; allowed: {', '.join(SECTIONS)}")
    raw = _shortcuts(raw, where)
    config = PipelineConfig(
        **{role: _component(registry, role, raw.get(role), where) for role in COMPONENT_ROLES},
        limits=_limits(raw.get("limits"), where),
        pretokenizer=_named("pretokenizer", raw.get("pretokenizer"), where),
        normalizer=_named("normalizer", raw.get("normalizer"), where),
    )
    after = getattr(config.boundary.params, "after", None)
    if after is not None and config.limits.max_rules is not None and after >= config.limits.max_rules:
        raise ConfigError(f"{where}: the boundaries open after {after:,} rules (superword_after "
                          f"{after + 256:,}), at or beyond the vocabulary's {config.limits.max_rules:,} rules "
                          f"({config.limits.max_rules + 256:,} tokens): give a smaller transition point")
    if config.boundary.name != DEFAULTS["boundary"] and config.pretokenizer == NO_PRETOKENIZER:
        raise ConfigError(f"{where}: boundary {config.boundary.name!r} opens pre-token boundaries: give a "
                          "pre-tokenizer (--pretokenizer gpt2)")
    return config


def load_config(path: str | Path | None = None, registry: Registry | None = None, overrides: dict | None = None,
                level: int | None = None) -> PipelineConfig:
    """Read a TOML config (None: the built-in defaults, or compression ``level`` 1-9) and apply
    ``overrides`` (``{"scorer": "repair", "limits": {"max_rules": 100}}`` style)."""
    raw: dict = {}
    where = "defaults"
    if level is not None:
        if path is not None:
            raise ConfigError("give a config file or a compression level, not both")
        raw = preset(level)
        where = f"level {level}"
    if path is not None:
        where = str(path)
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_CONFIG_BYTES + 1)  # /dev/zero named as a config is refused, not read
            if len(text) > MAX_CONFIG_BYTES:
                raise ConfigError(f"{path}: more than {MAX_CONFIG_BYTES:,} bytes: not a config file")
            raw = tomllib.loads(text.decode("utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: invalid TOML: {exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: invalid TOML: the file is not UTF-8") from None
    for key, value in (overrides or {}).items():
        if key == "limits":
            if not isinstance(raw.get("limits") or {}, dict):
                raise ConfigError(f"{where}: [limits] must be a table, got {raw['limits']!r}")
            raw["limits"] = {**(raw.get("limits") or {}), **value}
        elif key in ROLES and isinstance(value, str):
            current = raw.get(key)
            # a new name resets params meant for the old component
            if not (isinstance(current, dict) and current.get("name", DEFAULTS[key]) == value):
                raw[key] = {"name": value}
        elif key in COMPONENT_ROLES and isinstance(value, dict) and "name" not in value:
            # params alone: for the component the config (or the level) already names
            found = raw.get(key)
            chosen: dict = found if isinstance(found, dict) else {"name": DEFAULTS[key]}
            raw[key] = {**chosen, "params": {**(chosen.get("params") or {}), **(value.get("params") or {})}}
        else:
            raw[key] = value
    if overrides:
        where = f"{where} with overrides ({', '.join(overrides)})"
    return config_from_dict(raw, registry, where)


def _param(text: str) -> tuple[str, str, object]:
    """(role, key, value) of a ``ROLE.KEY=VALUE`` setting; the value read as a TOML value (a
    number, true/false, a quoted string, an array), else as the string it is."""
    target, equals, value = text.partition("=")
    role, dot, key = target.strip().partition(".")
    if not equals or not dot or role not in COMPONENT_ROLES or not key.strip().isidentifier():
        raise ConfigError(f"param (--param) {text[:60]!r}: write ROLE.KEY=VALUE, ROLE one of "
                          f"{', '.join(COMPONENT_ROLES)}")
    try:
        parsed: object = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return role, key.strip(), parsed


def pipeline_overrides(scorer: str | None = None, rewriter: str | None = None, coder: str | None = None,
                       pretokenizer: str | None = None, segmenter: str | None = None, learner: str | None = None,
                       boundary: str | None = None, deletion: str | None = None, normalizer: str | None = None,
                       param=(),
                       max_rules: int | None = None,
                       vocab_size: int | None = None, min_count: int | None = None,
                       superword_after: int | None = None, picky: float | None = None, reserved: int = 0) -> dict:
    """Overrides of a config (for :func:`load_config`, a Pipeline or a Compressor) from the
    settings given; ``vocab_size`` counts tokens as HF does (the 256 bytes, the rules and the
    ``reserved`` added tokens), so it stands for ``max_rules = vocab_size - 256 - reserved``, and
    ``superword_after`` (SuperBPE's transition, a vocabulary size) likewise. ``param``: any
    component's params as ``ROLE.KEY=VALUE`` strings, for the component named beside them or
    the config's own."""
    out: dict = {key: value for key, value in (("scorer", scorer), ("rewriter", rewriter), ("coder", coder),
                                               ("pretokenizer", pretokenizer), ("segmenter", segmenter),
                                               ("learner", learner), ("boundary", boundary),
                                               ("deletion", deletion), ("normalizer", normalizer)) if value}
    for role, key, value in map(_param, param or ()):
        chosen = out.get(role)
        out[role] = {**({"name": chosen} if isinstance(chosen, str) else chosen or {}),
                     "params": {**((chosen or {}).get("params", {}) if isinstance(chosen, dict) else {}), key: value}}
    if superword_after is not None:
        out["superword_after"] = superword_after - reserved
    if picky is not None:
        out["picky"] = picky
    limits = {}
    if vocab_size is not None:
        if max_rules is not None:
            raise ConfigError("vocab_size (--vocab-size) and max_rules (--max-rules) say the same thing; give one")
        if vocab_size <= 256 + reserved:
            raise ConfigError(f"vocab_size (--vocab-size) {vocab_size}: the 256 byte tokens"
                              f"{f' and {reserved} added tokens' if reserved else ''} come first, so it must exceed "
                              f"{256 + reserved}")
        limits["max_rules"] = vocab_size - 256 - reserved
    limits.update({key: value for key, value in (("max_rules", max_rules), ("min_count", min_count))
                   if value is not None})
    if limits:
        out["limits"] = limits
    return out


def compress_level(config, level: int | None) -> int | None:
    """The level a compression runs at: the one given, else :data:`~chunkpress.levels.DEFAULT_LEVEL`
    unless a config file says otherwise."""
    return level if level is not None or config is not None else DEFAULT_LEVEL


def preset(level: int) -> dict:
    """The raw config of compression level ``level`` (1-9): its pipeline in the level table."""
    try:
        return copy.deepcopy(level_of(level).pipeline)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def default_config(registry: Registry | None = None) -> PipelineConfig:
    return load_config(None, registry)
