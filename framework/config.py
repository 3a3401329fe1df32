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

from .engine.stops import Limits
from .errors import ConfigError, PluginError
from .plugin.registry import ROLES, Registry, default_registry
from .text.pretokenizers import check_name

#: The default pipeline is the paper's method end to end: the MDL scorer and the exact coder
#: of the same model, so every bit the scorer counts is a bit on disk.
DEFAULTS = {"scorer": "mdl", "rewriter": "linked", "coder": "combinatorial", "boundary": "pretokens",
            "deletion": "none"}
#: roles whose default a config (and a rules file) leaves out: what it records stays as before
_QUIET_DEFAULTS = ("boundary", "deletion")
#: the shortcuts: key -> (role, component, its param), see the module docstring
SHORTCUTS = {"superword_after": ("boundary", "superbpe", "after"), "picky": ("deletion", "picky", "tau")}
_SECTIONS = (*ROLES, "limits", "pretokenizer", *SHORTCUTS)
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
    pretokenizer: str = attrs.field(default="none", validator=lambda _i, _a, value: check_name(value))
    boundary: ComponentConfig = attrs.field(default=_default_component("boundary"))
    deletion: ComponentConfig = attrs.field(default=_default_component("deletion"))

    def to_dict(self) -> dict:
        out = {role: getattr(self, role).to_dict() for role in ROLES
               if role not in _QUIET_DEFAULTS or getattr(self, role).name != DEFAULTS[role]}
        out["limits"] = {k: v for k, v in attrs.asdict(self.limits).items() if v is not None}
        out["pretokenizer"] = {"name": self.pretokenizer}
        return out


def build_params(registry: Registry, role: str, name: str, params: dict | None, where: str = "config"):
    """An instance of the params class of ``role`` ``name``, or a ConfigError saying why not."""
    try:
        info = registry.get(role, name)
    except PluginError as exc:  # exit 3, naming where the name came from and what is installed
        raise PluginError(f"{where}: {exc}") from None
    params = dict(params or {})
    fields = {f.name for f in attrs.fields(info.params_class())}
    unknown = sorted(set(params) - fields)
    if unknown:
        allowed = ", ".join(sorted(fields)) or "none"
        raise ConfigError(f"{where}: unknown {role}.params key {unknown[0]!r} for {name!r}; allowed: {allowed}")
    try:
        return info.params_class()(**params)
    except (TypeError, ValueError) as exc:
        # attrs' type validators put (message, attribute, type, value) in args: keep the message
        reason = exc.args[0] if len(exc.args) > 1 and isinstance(exc.args[0], str) else exc
        raise ConfigError(f"{where}: bad {role}.params for {name!r}: {reason}") from None


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


def _pretokenizer(raw, where) -> str:
    if raw is None:
        return "none"
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - {"name"})
        if unknown:
            raise ConfigError(f"{where}: unknown key pretokenizer.{unknown[0]!r}; allowed: name")
        raw = raw.get("name", "none")
    return check_name(raw, where)


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
    unknown = sorted(set(raw) - set(_SECTIONS))
    if unknown:
        raise ConfigError(f"{where}: unknown section {unknown[0]!r}; allowed: {', '.join(_SECTIONS)}")
    raw = _shortcuts(raw, where)
    config = PipelineConfig(
        **{role: _component(registry, role, raw.get(role), where) for role in ROLES},
        limits=_limits(raw.get("limits"), where),
        pretokenizer=_pretokenizer(raw.get("pretokenizer"), where),
    )
    after = getattr(config.boundary.params, "after", None)
    if after is not None and config.limits.max_rules is not None and after >= config.limits.max_rules:
        raise ConfigError(f"{where}: the boundaries open after {after:,} rules (superword_after "
                          f"{after + 256:,}), at or beyond the vocabulary's {config.limits.max_rules:,} rules "
                          f"({config.limits.max_rules + 256:,} tokens): give a smaller transition point")
    if config.boundary.name != DEFAULTS["boundary"] and config.pretokenizer == "none":
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
        else:
            raw[key] = value
    if overrides:
        where = f"{where} with overrides ({', '.join(overrides)})"
    return config_from_dict(raw, registry, where)


def pipeline_overrides(scorer: str | None = None, rewriter: str | None = None, coder: str | None = None,
                       pretokenizer: str | None = None, max_rules: int | None = None, vocab_size: int | None = None,
                       min_count: int | None = None, superword_after: int | None = None, picky: float | None = None,
                       reserved: int = 0) -> dict:
    """Overrides of a config (for :func:`load_config`, a Pipeline or a Compressor) from the
    settings given; ``vocab_size`` counts tokens as HF does (the 256 bytes, the rules and the
    ``reserved`` added tokens), so it stands for ``max_rules = vocab_size - 256 - reserved``, and
    ``superword_after`` (SuperBPE's transition, a vocabulary size) likewise."""
    out: dict = {key: value for key, value in (("scorer", scorer), ("rewriter", rewriter), ("coder", coder),
                                               ("pretokenizer", pretokenizer)) if value}
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


def _preset(scorer, coder, max_rules=None, pretokenizer="none", min_count=None, **params):
    raw = {"scorer": {"name": scorer}, "coder": {"name": coder, "params": params}, "pretokenizer": {"name": pretokenizer}}
    limits = {k: v for k, v in (("max_rules", max_rules), ("min_count", min_count)) if v is not None}
    if limits:
        raw["limits"] = limits
    return raw


#: ``-1`` (fastest) ... ``-9`` (smallest), as zstd's levels: each smaller than the one before on
#: en_mix_10MB, and none larger than the one before on en_mix_1MB and alice29 (on udhr_cmn_hans,
#: 8 KB, -7 is smaller than -8 and -9; on both UDHR files, 8-14 KB, -9 is 84-92 bytes larger
#: than -8: its header names the direct probabilities, the indirect contexts, the expected
#: chunk's, the opener's, the structure's sets, the scoped contexts and the hash table's bytes
#: a byte, and two more contexts have little text to learn from: README table,
#: examples/benchmarks/levels.py).
#: -1 is zstd -3 on the bytes (a word dictionary in front of it was 0.8% smaller at 20 times
#: the time); -2 ... -4 word-level BPE (repair over GPT-2 pre-tokens) in front of zstd or xz;
#: -5 block sorting with a context-mixing back end (bwt-cm: smaller and faster than -2 ... -4
#: on text; a word dictionary in front of a block sort made it 9-13% larger); -6 ... -9 context
#: mixing over the chunk ids (chunk-cm: one event per chunk; trading contexts and table size for
#: time). ``min_count`` keeps small inputs from paying for rare chunks. (PPMd would sit near -5,
#: but pyppmd fails to decode some of its own streams: order 2, or a model that runs out of
#: memory, in 1.3.1; no level depends on it.)
PRESETS = {
    1: _preset("repair", "raw-zstd", 0, level=3),
    2: _preset("repair", "varint-zstd", 2000, "gpt2", min_count=8, level=9),
    3: _preset("repair", "varint-zstd", 2000, "gpt2", min_count=8, level=19),
    4: _preset("repair", "varint-lzma", 16000, "gpt2", min_count=16),
    5: _preset("repair", "bwt-cm", 0),
    # chunk-cm, the faster levels trading contexts, runs, mixing and table size for time: -6
    # the light model (one mixer, one APM) with two contexts (order 0, the previous chunk) and
    # no runs in 4 MB of tables, the level as small as PPMd order 8 at under three times its time
    # (model 4 with three contexts, order 2 the third: 0.9% smaller, but 3.1x PPMd's time in the
    # levels run; the full mixing: 1.0% smaller, 1.35x the coder's time; the four runs, as
    # runs = 4: 1.3% smaller, 5.9% on a held-out 2 MB of en_mix_100MB, but 2.9x PPMd's time in a
    # run on a slow machine, too close to the 3x); -7 eight contexts and the four runs in 16 MB;
    # -8 and -9 all eighteen in 256 and 512 MB, with 256 bytes a byte of text on smaller inputs,
    # up to half of that (under 4 and 8 MB: alice29 0.4-0.5% smaller, en_mix_1MB 0.4%, a held-out
    # 4 MB 0.27% at -9, man pages 0.1-0.5%, for about 5% more time there; en_mix_10MB the same);
    # fewer contexts were smaller on alice29, so a level in between would grow there; -9 also
    # has direct probabilities in the third APM's place (en_mix_10MB 0.26% smaller, held-out
    # text 0.4-0.6%, 12-15% more time) and three text-indirect contexts (en_mix_10MB 0.39%
    # smaller again, held-out text 0.7%, about 10%
    # more time, paid for by a faster coder), the match model's expected chunk as a context
    # in order 2's place (held-out text 0.1-1.1% smaller, en_mix_10MB 0.08%, the same time),
    # the first word inside the innermost open bracket (a tag's, template's or link's name) in
    # order 3's (en_mix_10MB 0.46% smaller, held-out text 0.1-0.9%, the same time), and mixer 1's
    # weight sets also by that bracket's kind and the line's markup (en_mix_10MB 0.09% smaller,
    # held-out text 0.26-0.35%, the same time), and the previous id and the previous word, each
    # with what opened the bracket and the line, in the places of orders 1 and 6 (en_mix_10MB
    # 0.17% smaller, held-out text 0.14-0.33%, the same time), and the first indirect context
    # naming the last three chunks that followed the last 5 bytes, not the last one alone
    # (held-out text 0.01-1.5% smaller, en_mix_10MB 0.02%, the same time:
    # examples/chunk-cm/NOTES.md). The model gains more from its contexts than from long
    # chunks: -8 and -9 keep 1,000 rules seen 200 times or more
    6: _preset("repair", "chunk-cm", 8000, "gpt2", min_count=40, memory=22, contexts=2, runs=0, light=True),
    7: _preset("repair", "chunk-cm", 4000, "gpt2", min_count=40, memory=24, contexts=8),
    8: _preset("repair", "chunk-cm", 1000, "gpt2", min_count=200, memory=28, hash_per_byte=256),
    9: _preset("repair", "chunk-cm", 1000, "gpt2", min_count=200, memory=29, direct=True, indirect=True,
               expect=True, opener=True, structure=True, scoped=True, hash_per_byte=256, indirect_history=3),
}
#: what ``chunkpress compress`` and ``chunkpress.compress`` run without a level or a config:
#: smaller than xz -9 and bzip3, and faster than xz -9, on en_mix_10MB. The paper's method (mdl + combinatorial) is
#: ``examples/paper/mdl.toml``; ``Pipeline.from_config()`` without arguments still builds it.
DEFAULT_LEVEL = 5


#: levels that learn no dictionary (-1: zstd on the bytes, -5: the block sort), and the level
#: whose dictionary pipeline runs instead where settings shape a dictionary (a scorer, a
#: pre-tokenizer, max_rules, min_count, a reused or shared dictionary): ``compress -5 --max-rules
#: 300`` learns 300 rules and codes them with -4's xz, as it did before -5 was a block sort
DICTIONARY_LEVEL = {1: 2, 5: 4}


#: what each level falls back to where its chunk pipeline does not pay (binaries, already
#: compressed data, small inputs): the raw bytes through the level's own kind of back end,
#: zstd at the same level for -1 ... -3, xz -9e for -4 ... -9 (the e covers the archive's
#: header, so a fallback is never larger than ``xz -9`` by more than a few bytes)
PLAIN = {1: ("raw-zstd", {"level": 3}), 2: ("raw-zstd", {"level": 9}), 3: ("raw-zstd", {"level": 19}),
         **{level: ("raw-lzma", {"preset": 9, "extreme": True}) for level in range(4, 10)}}


#: levels whose inputs up to a megabyte are also tried with this level's pipeline: -4 codes
#: small text and JSON no smaller than ``xz -9`` (its dictionary does not pay yet, and a raw xz
#: frame pays the archive's header on top), where -6's light context mixing is 12-30% smaller
#: at half a second a megabyte; -5's block sort and -6 each win on some small texts (alice29:
#: 40,464 against 41,237 bytes; en_mix_1MB: 247,542 against 242,122), so each tries the other
#: and -6 is never larger than -5
SMALL_INPUT_LEVEL = {4: 6, 5: 6, 6: 5}

#: levels whose inputs up to SMALL_TEXT bytes are also compressed as the level below compresses
#: them (with that level's own trials), the smaller archive kept: on a text of a few kilobytes a
#: higher level's extra contexts have too little to learn from (udhr_arb: -9 3,004 bytes, -8
#: 2,989), so -6 ... -9 are never larger than the level below there, for a few tenths of a
#: second (what it cost, and why it stops at 16 KB: examples/chunk-cm/NOTES.md)
BELOW_TRIED = {7: 6, 8: 7, 9: 8}
SMALL_TEXT = 16 << 10

#: levels whose inputs up to a megabyte are also compressed with their dictionary learned
#: between the pre-tokens of this other splitter, the smaller archive kept. GPT-2's pre-tokens
#: (a word with the space before it) suit prose; runs of non-space (``--option``, ``word,``, a
#: line's whole indent) suit manuals, licences and source code, where -6 ... -9 come out 0.3-2%
#: smaller, while prose and Wikipedia's XML come out 0.2-1.6% larger. Which one wins does not
#: show on a sample (its dictionary is too small), so the whole input is coded twice: 1.1-1.7x
#: a whole process's time at -9 on such an input, 1.0-1.3x at -6 (what each corpus gains and
#: what it costs: examples/benchmarks/pretokens.py). The archive does not say which was used: the decoder needs
#: only the rules
PRETOKENIZER_TRIED = {level: "whitespace" for level in (6, 7, 8, 9)}


def plain_preset(level: int, executable: bool = False) -> dict:
    """The raw config of level ``level``'s fallback: no dictionary, the bytes through :data:`PLAIN`'s
    coder; for an ``executable`` (x86 machine code), xz with its x86 branch filter first."""
    coder, params = PLAIN[level]
    params = dict(params, **({"x86": True} if executable and coder == "raw-lzma" else {}))
    return {"scorer": {"name": "repair"}, "coder": {"name": coder, "params": params}, "limits": {"max_rules": 0}}


def compress_level(config, level: int | None) -> int | None:
    """The level a compression runs at: the one given, else :data:`DEFAULT_LEVEL` unless a
    config file says otherwise."""
    return level if level is not None or config is not None else DEFAULT_LEVEL


def preset(level: int) -> dict:
    """The raw config of compression level ``level`` (1-9)."""
    if isinstance(level, bool) or not isinstance(level, int) or level not in PRESETS:
        raise ConfigError(f"compression level must be 1 to 9, got {level!r}")
    return copy.deepcopy(PRESETS[level])


def default_config(registry: Registry | None = None) -> PipelineConfig:
    return load_config(None, registry)
