"""The rules file: a learned dictionary saved on its own, to inspect or reuse.

Layout: magic ``b"CPRL"``, version byte (2), varint length of a JSON metadata object (see
:class:`RulesFile`: the config that learned it, input length and checksum), varint R, then the 2R rule parts as
varints (rule r creates symbol 256 + r from two earlier symbols), then a BLAKE2b-32 of all the
bytes before it (as archives end), so a flipped byte is refused instead of decoding to other
text. Version 1 files (the same without the check) are still read.

Version 3 is version 2 for a dictionary that encodes with more than its rules: deletions
(``deletions`` in the metadata) or a boundary policy (``config.boundary``). Version 4 is
version 2 for a dictionary that segments text other than by replaying its merges: a segmenter
(``segmenter``) or a vocabulary narrower than its symbols (``vocabulary``: a top-down learner's
tokens, whose rules also spell the prefixes that build them). An older reader, which would
ignore those keys and encode otherwise, refuses it; every other file stays version 2.
"""

from __future__ import annotations

import json

import attrs
import numpy as np

from ..contract import NO_PRETOKENIZER
from ..errors import FormatError
from ..version import __version__
from .container import CHECK_BYTES, check_bytes
from .expand import symbol_lengths
from .leb128 import decode_varints, encode_varints

MAGIC = b"CPRL"
VERSION = 2
#: the version of a dictionary with deletions or a boundary policy (see the module docstring)
VERSION_EVENTS = 3
#: the version of a dictionary with a segmenter of its own or a narrower vocabulary
VERSION_SEGMENTED = 4
#: versions this reader understands; 1 has no trailing check
READABLE = (1, 2, 3, 4)


def dump_rules(rules: np.ndarray, meta: dict) -> bytes:
    rules = np.asarray(rules, dtype=np.int64).reshape(-1, 2)
    head = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    config = meta.get("config") or {}
    events = bool(meta.get("deletions")) or (isinstance(config, dict) and "boundary" in config)
    segmented = meta.get("segmenter") not in (None, "merges") or meta.get("vocabulary") is not None
    version = VERSION_SEGMENTED if segmented else VERSION_EVENTS if events else VERSION
    body = (MAGIC + bytes([version]) + encode_varints([len(head)]) + head
            + encode_varints([len(rules)]) + encode_varints(rules.ravel()))
    return body + check_bytes(body)


def load_rules(data: bytes) -> tuple[np.ndarray, dict]:
    if data[:4] != MAGIC or len(data) < 6:
        if data.lstrip()[:1] == b"{":
            raise FormatError("not a chunkpress rules file but JSON: for an HF tokenizer.json, make one with "
                              "'chunkpress import-hf'")
        raise FormatError("not a chunkpress rules file (bad magic bytes)")
    if data[4] not in READABLE:
        raise FormatError(f"unsupported rules file version {data[4]}")
    if data[4] >= 2:
        if len(data) < 6 + CHECK_BYTES or check_bytes(data[:-CHECK_BYTES]) != data[-CHECK_BYTES:]:
            raise FormatError("rules file is corrupt, truncated or extended (check bytes do not match)")
        data = data[:-CHECK_BYTES]
    (hlen,), pos = decode_varints(data, 1, 5)
    if pos + hlen > len(data):
        raise FormatError("rules file truncated")
    try:
        meta = json.loads(data[pos : pos + hlen])
    except ValueError as exc:
        raise FormatError(f"corrupt rules file metadata: {exc}") from None
    except RecursionError:
        raise FormatError("corrupt rules file metadata: nested too deeply") from None
    if not isinstance(meta, dict):
        raise FormatError(f"corrupt rules file metadata: a {type(meta).__name__}, not an object")
    (r,), pos = decode_varints(data, 1, pos + hlen)
    flat, end = decode_varints(data, 2 * int(r), pos)
    if end != len(data):
        raise FormatError("rules file has trailing bytes")
    rules = flat.reshape(-1, 2)
    symbol_lengths(rules)  # validates that every rule refers to earlier symbols
    return rules, meta


#: the largest magnitude of an integer in a rules file's metadata: JSON's exact integers, far
#: past any count, id or length a dictionary holds, and safe in every int64 sum made of them
MAX_META_INT = (1 << 53) - 1


def _check_integers(meta: dict) -> None:
    """FormatError for an integer beyond :data:`MAX_META_INT` anywhere in ``meta`` (JSON as
    read), before any of it is turned into an array or used in a sum."""
    pending: list = [meta]
    while pending:  # iterative: JSON nested as deep as the parser allows is walked too
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_META_INT:
            raise FormatError(f"rules file: corrupt metadata (an integer of {len(str(abs(value)))} digits, "
                              f"beyond {MAX_META_INT:,})")


def _optional(kind):
    return attrs.validators.optional(attrs.validators.instance_of(kind))


#: the largest magnitude a token's score may have: a path's sum of scores then stays finite
#: and ordered over any text (a billion tokens of the least score sum to 1e39, far from
#: float64's 1.8e308); scores near -1e300 would sum to -inf or lose every smaller term
MAX_SCORE = 1e30


def check_scores(scores, where: str) -> None:
    """FormatError naming ``where`` unless every score is finite and within :data:`MAX_SCORE`
    (numbers, as the caller has checked: NaN compares false, and an integer of any size
    compares without conversion)."""
    for i, value in enumerate(scores):
        if not abs(value) <= MAX_SCORE:
            shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:40]}..."
            raise FormatError(f"{where}: token #{i}'s score {shown} is not a finite number within "
                              f"±{MAX_SCORE:g} (a search could not rank paths by such scores)")


@attrs.frozen(kw_only=True, eq=False)
class RulesFile:
    """A rules file's content: the rules and what they came from, in named fields. Its metadata
    keys, all optional when read (older files lack some):

    - ``config``: the pipeline config that learned the rules (``pretokenizer.name`` is what a
      tokenizer needs),
    - ``length``, ``blake2b``: the training input's size and BLAKE2b-128 (hex),
    - ``sources``: the training files, when several,
    - ``unicode``: the Unicode version the pre-tokenizer classified characters by,
    - ``hf``: HF's ids and added tokens (:class:`chunkpress.text.hf.HFVocab`'s ``to_meta``),
    - ``chunkpress``: the version that wrote it, and ``learned_from`` / ``imported_from``,
    - ``deletions``: the symbols deleted while learning, as [rule after which, symbol] pairs,
    - ``segmenter``: how the vocabulary cuts text (absent: ``merges``, the rules replayed),
    - ``vocabulary``: the symbols that are tokens, ascending (absent: every symbol not deleted),
    - ``scores``: each token's log-probability, aligned with ``vocabulary`` (or every symbol),
    - ``counts``: each symbol's count in the training text, from which a merge-learned
      vocabulary's log-probabilities are estimated for the ``likelihood`` segmenter.
    """

    rules: np.ndarray = attrs.field(converter=lambda r: np.ascontiguousarray(r, dtype=np.int64).reshape(-1, 2))
    config: dict = attrs.field(factory=dict, validator=attrs.validators.instance_of(dict))
    length: int | None = attrs.field(default=None, validator=_optional(int))
    blake2b: str | None = attrs.field(default=None, validator=_optional(str))
    sources: list | None = attrs.field(default=None, validator=_optional(list))
    unicode: str | None = attrs.field(default=None, validator=_optional(str))
    hf: dict | None = attrs.field(default=None, validator=_optional(dict))
    chunkpress: str | None = attrs.field(default=None, validator=_optional(str))
    learned_from: str | None = attrs.field(default=None, validator=_optional(str))
    imported_from: str | None = attrs.field(default=None, validator=_optional(str))
    deletions: list | None = attrs.field(default=None, validator=_optional(list))
    segmenter: str | None = attrs.field(default=None, validator=_optional(str))
    vocabulary: list | None = attrs.field(default=None, validator=_optional(list))
    scores: list | None = attrs.field(default=None, validator=_optional(list))
    counts: list | None = attrs.field(default=None, validator=_optional(list))

    @property
    def pretokenizer(self) -> str:
        """The pre-tokenizer's name (``none`` when the config names none); FormatError when the
        metadata is not of the right shape."""
        return self._named("pretokenizer")

    @property
    def normalizer(self) -> str:
        """The normalizer's name (``none`` when the config names none, as every file before
        normalizers did)."""
        return self._named("normalizer")

    @property
    def normalizer_params(self) -> dict | None:
        """The normalizer's params (None where the config gives none: its defaults)."""
        section = self.config.get("normalizer", {})
        params = section.get("params") if isinstance(section, dict) else None
        if params is not None and not isinstance(params, dict):
            raise FormatError("rules file: corrupt metadata (config.normalizer.params must be a table)")
        return params

    def _named(self, role: str) -> str:
        section = self.config.get(role, {})
        name = section.get("name", "none") if isinstance(section, dict) else None  # either role's default
        if not isinstance(name, str):
            raise FormatError(f"rules file: corrupt metadata ('config' must name a {role} as config.{role}.name)")
        return name

    @classmethod
    def learned(cls, rules, config: dict, unicode: str | None = None, **fields) -> RulesFile:
        """A dictionary just learned with ``config``: records this version of chunkpress and,
        with a pre-tokenizer, the Unicode version its words were split by (``unicode``: the
        pre-tokenizer's, ``text.unicodeclasses.unicode_version()``)."""
        pre = config.get("pretokenizer", {})
        split = isinstance(pre, dict) and pre.get("name", NO_PRETOKENIZER) != NO_PRETOKENIZER
        return cls(rules=rules, config=config, chunkpress=__version__, unicode=unicode if split else None, **fields)

    def meta(self) -> dict:
        fields = attrs.asdict(self, recurse=False, filter=lambda a, v: a.name != "rules" and v is not None)
        return fields

    def to_bytes(self) -> bytes:
        return dump_rules(self.rules, self.meta())

    @classmethod
    def from_bytes(cls, data: bytes) -> RulesFile:
        """Read and check a rules file (untrusted: every field's type is checked); keys this
        version does not know are ignored, as a newer writer may add some."""
        rules, meta = load_rules(data)
        _check_integers(meta)
        known = {a.name for a in attrs.fields(cls)} - {"rules"}
        try:
            read = cls(rules=rules, **{k: v for k, v in meta.items() if k in known})
        except TypeError as exc:
            raise FormatError(f"rules file: corrupt metadata ({exc.args[0] if exc.args else exc})") from None
        if read.deletions is not None and not all(
                isinstance(d, list) and len(d) == 2 and all(type(v) is int for v in d) for d in read.deletions):
            raise FormatError("rules file: corrupt metadata ('deletions' must be [rule, symbol] pairs)")
        symbols = 256 + len(rules)
        for key, kind in (("vocabulary", int), ("counts", int)):
            found = getattr(read, key)
            if found is not None and not all(type(v) is kind and 0 <= v < (symbols if key == "vocabulary" else 1 << 53)
                                             for v in found):
                raise FormatError(f"rules file: corrupt metadata ('{key}' must be whole numbers"
                                  f"{' naming symbols' if key == 'vocabulary' else ''})")
        if read.vocabulary is not None and read.vocabulary != sorted(set(read.vocabulary)):
            raise FormatError("rules file: corrupt metadata ('vocabulary' must name each symbol once, ascending)")
        if read.counts is not None and len(read.counts) != symbols:
            raise FormatError(f"rules file: corrupt metadata ('counts' must hold one count a symbol, {symbols:,})")
        if read.scores is not None:
            tokens = len(read.vocabulary) if read.vocabulary is not None else symbols
            if len(read.scores) != tokens or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                     for v in read.scores):
                raise FormatError(f"rules file: corrupt metadata ('scores' must hold {tokens:,} numbers)")
            check_scores(read.scores, "rules file")
        return read

    @property
    def deletion_table(self) -> np.ndarray:
        """The deletions as a (D, 2) int64 array (none: empty)."""
        return np.array(self.deletions or [], dtype=np.int64).reshape(-1, 2)
