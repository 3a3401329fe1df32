"""The compression levels, one record each, as zstd keeps its levels in one table
(``lib/compress/clevels.h``): what each level runs, what it falls back to, and what else it
tries, and the one decision that turns a level and an input into the ways it is coded.

A level names:

* ``pipeline``: its config (scorer, coder, pre-tokenizer, limits), as a config file would;
* ``plain``: its plain back end, the raw bytes through zstd or xz -9e (xz with its x86 filter
  for machine code; a bare LZMA2 stream, as the archive checks its own contents): what data its
  pipeline does not shrink gets;
* ``dictionary_level``: the level whose pipeline runs where settings shape a dictionary (a
  scorer, a rules file, ``max_rules``...) and this level learns none (-1, -5);
* ``trials``: other ways it also codes a text of at most so many bytes, the smallest kept:
  its plain back end, another level's pipeline, or its own with another pre-tokenizer.

:func:`plan` decides, from the data and the same way for every input (here, in a worker
process, on a Dask scheduler): data that would be stored is recognised from a sample and
stored; a text gets the level's pipeline and the trials its length allows; other data gets the
pipeline or the plain back end, whichever codes a sample smaller (both, where the sample is
all of it), and where that back end is xz and it is coded, also what ``xz -9`` runs, in full,
so that no such level is larger than ``xz -9`` there. Levels -4 and -7 up also try, on a text
of at most :data:`SMALL_TEXT` bytes, every way the level below tries there, so that it is never
larger than the level below. Each way is coded once, and the smallest archive kept (the first
on a tie); :mod:`.compressor` does that.
The figures behind each record are in ``examples/benchmarks/levels.md``.
"""

from __future__ import annotations

import attrs
import zstandard

from .contract import NO_PRETOKENIZER

#: what ``chunkpress compress`` and ``chunkpress.compress`` run without a level or a config
DEFAULT_LEVEL = 5
#: a text up to this long is also coded as the level below codes it (levels -4 and -7 to -9)
SMALL_TEXT = 16 << 10
#: the trials run in full up to these lengths: where coding a text twice costs little
SMALL_INPUT = 256 << 10
MEGABYTE = 1 << 20
#: the sample that tells text from other data, and the plain back end from the pipeline: this
#: many slices of this many bytes, from the start, the middle and the end (all of a shorter input)
SAMPLE_SLICE, SAMPLE_SLICES = 128 << 10, 3
#: a sample that zstd -1 shortens by less than this share is stored as it is, unread by any coder
STORED_SAVING = 0.01
#: the shortest sample that can tell stored data: on fewer bytes every coder's frame costs more
STORED_SAMPLE = 4 << 10


@attrs.frozen(kw_only=True)
class Trial:
    """One more way a level codes a text of at most ``up_to`` bytes: ``way`` is "plain" (the
    level's plain back end), "level" (the pipeline of level ``level``), "below" (every way
    level ``level`` codes such a text) or "pretokenizer" (this level's pipeline with the
    pre-tokenizer ``pretokenizer``)."""

    way: str = attrs.field(validator=attrs.validators.in_(("plain", "level", "below", "pretokenizer")))
    up_to: int = attrs.field(validator=attrs.validators.ge(0))
    level: int | None = None
    pretokenizer: str | None = None


@attrs.frozen(kw_only=True)
class Level:
    """One compression level: see the module docstring."""

    number: int = attrs.field(validator=[attrs.validators.ge(1), attrs.validators.le(9)])
    pipeline: dict
    plain: tuple[str, dict] | None  # None: the pipeline is plain already (-1)
    summary: str
    dictionary_level: int | None = None
    trials: tuple[Trial, ...] = ()


def _pipeline(scorer, coder, max_rules=None, pretokenizer=NO_PRETOKENIZER, min_count=None, **params) -> dict:
    raw = {"scorer": {"name": scorer}, "coder": {"name": coder, "params": params}, "pretokenizer": {"name": pretokenizer}}
    limits = {k: v for k, v in (("max_rules", max_rules), ("min_count", min_count)) if v is not None}
    if limits:
        raw["limits"] = limits
    return raw


_XZ = ("raw-lzma", {"preset": 9, "extreme": True, "stream": "lzma2"})
#: the plain back end's variants: the level's own, with xz's x86 filter (machine code), and
#: what ``xz -9`` runs (not extreme, no filter: on some files smaller than either)
OWN, X86, LIKE_XZ = "own", "x86", "xz -9"
_RUNS_OF_NON_SPACE = "whitespace"


def _chunk_cm_trials(below: int | None, pretokens_up_to: int) -> tuple[Trial, ...]:
    """A chunk-cm level's trials: its pipeline between runs of non-space (manuals, licences and
    source code want them, prose GPT-2's, and a sample cannot tell which), and the level below."""
    trials = (Trial(way="pretokenizer", pretokenizer=_RUNS_OF_NON_SPACE, up_to=pretokens_up_to),)
    return trials + ((Trial(way="below", level=below, up_to=SMALL_TEXT),) if below is not None else ())


#: ``-1`` (fastest) ... ``-9`` (smallest), each smaller than the one before on en_mix_10MB
LEVELS = {level.number: level for level in (
    Level(number=1, summary="zstd -3 on the bytes", pipeline=_pipeline("repair", "raw-zstd", 0, level=3), plain=None,
          dictionary_level=2),
    Level(number=2, summary="2,000 rules, zstd -9",
          pipeline=_pipeline("repair", "varint-zstd", 2000, "gpt2", min_count=8, level=9),
          plain=("raw-zstd", {"level": 9}), trials=(Trial(way="plain", up_to=SMALL_INPUT),)),
    Level(number=3, summary="2,000 rules, zstd -19",
          pipeline=_pipeline("repair", "varint-zstd", 2000, "gpt2", min_count=8, level=19),
          plain=("raw-zstd", {"level": 19}), trials=(Trial(way="plain", up_to=SMALL_INPUT),)),
    Level(number=4, summary="16,000 rules, xz",
          pipeline=_pipeline("repair", "varint-lzma", 16000, "gpt2", min_count=16),
          plain=_XZ, trials=(Trial(way="plain", up_to=SMALL_INPUT), Trial(way="below", level=3, up_to=SMALL_TEXT))),
    Level(number=5, summary="LZP, block sort, bwt-cm", pipeline=_pipeline("repair", "bwt-cm", 0), plain=_XZ,
          dictionary_level=4),
    # chunk-cm, trading contexts, runs, mixing and table size for time
    Level(number=6, summary="8,000 rules, chunk-cm light",
          pipeline=_pipeline("repair", "chunk-cm-v5", 8000, "gpt2", min_count=40, memory=22, contexts=2, runs=0,
                             light=True),
          plain=_XZ, trials=(Trial(way="level", level=5, up_to=MEGABYTE),
                             Trial(way="pretokenizer", pretokenizer=_RUNS_OF_NON_SPACE, up_to=SMALL_INPUT))),
    Level(number=7, summary="4,000 rules, chunk-cm, 8 contexts",
          pipeline=_pipeline("repair", "chunk-cm-v5", 4000, "gpt2", min_count=40, memory=24, contexts=8),
          plain=_XZ, trials=_chunk_cm_trials(6, MEGABYTE)),
    Level(number=8, summary="1,000 rules, chunk-cm, 18 contexts, 256 MB",
          pipeline=_pipeline("repair", "chunk-cm-v5", 1000, "gpt2", min_count=200, memory=28,
                             hash_per_byte=256),
          plain=_XZ, trials=_chunk_cm_trials(7, MEGABYTE)),
    Level(number=9, summary="1,000 rules, chunk-cm, 21 contexts, 512 MB",
          pipeline=_pipeline("repair", "chunk-cm", 1000, "gpt2", min_count=200, memory=29),
          plain=_XZ, trials=_chunk_cm_trials(8, MEGABYTE)),
)}


def level_of(number) -> Level:
    """Level ``number`` (1-9); ValueError naming the levels for anything else."""
    if isinstance(number, bool) or not isinstance(number, int) or number not in LEVELS:
        raise ValueError(f"compression levels are 1 to 9, not {number!r}")
    return LEVELS[number]


def plain_config(level: Level, variant: str = OWN) -> dict | None:
    """The raw config of ``level``'s plain back end (None where its pipeline is plain): no
    dictionary, the bytes through its coder; where that is xz, ``variant`` X86 adds its x86
    filter and LIKE_XZ runs what ``xz -9`` runs (a bare stream all the same)."""
    if level.plain is None:
        return None
    coder, params = level.plain
    if coder == "raw-lzma" and variant == X86:
        params = dict(params, x86=True)
    elif coder == "raw-lzma" and variant == LIKE_XZ:
        params = dict(params, preset=9, extreme=False)
    return {"scorer": {"name": "repair"}, "coder": {"name": coder, "params": params}, "limits": {"max_rules": 0}}


# -- the decision ----------------------------------------------------------------------------------

#: a way to code an input: ("level", level, pre-tokenizer or None: the level's own), ("plain",
#: level, variant: OWN, X86 or LIKE_XZ), or STORED (the bytes as they are)
Way = tuple
STORED: Way = ("stored",)


def sample_of(data: bytes) -> bytes:
    """SAMPLE_SLICES slices of SAMPLE_SLICE bytes, from the start, the middle and the end, or
    all of an input no longer than that."""
    if len(data) <= SAMPLE_SLICE * SAMPLE_SLICES:
        return data
    step = (len(data) - SAMPLE_SLICE) // (SAMPLE_SLICES - 1)
    return b"".join(data[i * step:i * step + SAMPLE_SLICE] for i in range(SAMPLE_SLICES))


def looks_like_text(sample: bytes) -> bool:
    """Whether ``sample`` reads as text: UTF-8 (a character cut at a slice's edge aside) with
    under 1% control bytes other than tab, line feed, form feed and carriage return."""
    bad = sample.decode("utf-8", errors="replace").count("\ufffd")
    controls = sum(sample.count(c) for c in range(32) if c not in (9, 10, 12, 13)) + sample.count(127)
    return bad <= 2 * SAMPLE_SLICES and controls < len(sample) // 100


def looks_stored(sample: bytes) -> bool:
    """Whether ``sample`` is data no coder shortens (random, compressed, encrypted): zstd -1,
    a few milliseconds a megabyte, saves less than STORED_SAVING of it."""
    if len(sample) < STORED_SAMPLE:
        return False
    return len(zstandard.ZstdCompressor(level=1).compress(sample)) > (1 - STORED_SAVING) * len(sample)


def is_executable(data: bytes) -> bool:
    """Whether ``data`` starts as an x86 or x86-64 ELF file (a program, a shared library, a
    Python extension) or a Windows PE file does: machine code, which xz's x86 filter shrinks."""
    if data[:4] == b"\x7fELF" and len(data) >= 20:
        return int.from_bytes(data[18:20], "little" if data[5] == 1 else "big") in (3, 62)  # EM_386, EM_X86_64
    return data[:2] == b"MZ" and b"PE\0\0" in data[:4096]


def text_ways(level: Level, length: int) -> list[Way]:
    """The ways ``level`` codes a text of ``length`` bytes: its pipeline and the trials the
    length allows, each way once."""
    ways: list[Way] = [("level", level.number, None)]
    for trial in level.trials:
        if length > trial.up_to:
            continue
        if trial.way == "plain":
            ways.append(("plain", level.number, OWN))
        elif trial.way == "pretokenizer":
            ways.append(("level", level.number, trial.pretokenizer))
        elif trial.way == "level":
            ways.append(("level", trial.level, None))
        elif trial.level is not None:  # below: every way of the level below
            ways += text_ways(LEVELS[trial.level], length)
    return list(dict.fromkeys(ways))


@attrs.frozen(kw_only=True)
class Plan:
    """How an input is coded: every way in ``ways`` in full, the smallest kept; or, where
    ``sample`` is given, the way among them that codes the sample smallest, in full; and the
    ways in ``also`` (the plain back end's other settings) in full too, where every way is
    or the sample chose the plain back end."""

    ways: tuple
    sample: bytes | None = None
    also: tuple = ()


def plan(level: Level, data: bytes) -> Plan:
    """How ``level`` codes ``data``: stored data is stored; a text gets :func:`text_ways`;
    other data its pipeline or its plain back end (machine code: with and without xz's x86
    filter), whichever codes a sample smallest (where the sample is all of ``data``: each in
    full), and where that back end is xz and it is coded, what ``xz -9`` runs, in full."""
    sample = sample_of(data)
    if looks_stored(sample):
        return Plan(ways=(STORED,))
    if looks_like_text(sample):
        return Plan(ways=tuple(text_ways(level, len(data))))
    if level.plain is None:
        return Plan(ways=(("level", level.number, None),))
    ways: tuple = (("level", level.number, None), ("plain", level.number, OWN))
    if is_executable(data) and plain_config(level, X86) != plain_config(level, OWN):
        ways += (("plain", level.number, X86),)  # the x86 filter shrinks most machine code, not all
    like_xz = ("plain", level.number, LIKE_XZ)
    also = (like_xz,) if plain_config(level, LIKE_XZ) != plain_config(level, OWN) else ()
    return Plan(ways=ways, sample=None if sample is data else sample, also=also)
