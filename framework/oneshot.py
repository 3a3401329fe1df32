"""``chunkpress.compress`` and ``chunkpress.decompress``: the command line's compress and
decompress for bytes in memory, taking its options as keywords and its decisions from the same
places (levels from ``config``, block mode from ``blockmode.wants_blocks``)."""

from __future__ import annotations

import functools
import io
from pathlib import Path

from .errors import ConfigError


def _rules_file(rules, decoding: bool = False):
    """(Tokenizer, the rules file's bytes) from a rules file's path, its bytes, or a Tokenizer;
    (None, None) for None. The bytes are the file's own, as the command line stores them in a
    block archive (a Tokenizer's are written afresh)."""
    from .text.tokenizer import Tokenizer

    if rules is None:
        return None, None
    if isinstance(rules, Tokenizer):
        return rules, rules.to_rules_file().to_bytes()
    if isinstance(rules, (bytes, bytearray, memoryview)):
        return Tokenizer.from_rules_file(bytes(rules), decoding=decoding), bytes(rules)
    if isinstance(rules, (str, Path)):
        tokenizer = Tokenizer.from_file(rules, decoding=decoding)  # errors name the file
        return tokenizer, Path(rules).read_bytes()
    raise ConfigError(f"rules must be a rules file's path or bytes, or a Tokenizer, not {type(rules).__name__}")


def compress(data: bytes, config=None, level: int | None = None, *, rules=None, rules_ref: bool = False,
             block_size: int | None = None, workers: int | None = None, scheduler: str | None = None,
             shared_dictionary: bool = False, max_rules: int | None = None, min_count: int | None = None,
             **overrides) -> bytes:
    from .blockmode import check_dictionary_options, compress_stream, default_block_size, wants_blocks
    from .config import compress_level
    from .pipeline import Pipeline

    limits = dict(overrides.pop("limits", None) or {})
    for key, value in (("max_rules", max_rules), ("min_count", min_count)):
        if value is not None:
            limits[key] = value
    if limits:
        overrides["limits"] = limits
    check_options = functools.partial(check_dictionary_options, rules=rules is not None, rules_ref=rules_ref,
                                      shared_dictionary=shared_dictionary)
    check_options(blocks=None)
    pipe = Pipeline.from_config(config, level=compress_level(config, level), **overrides)
    tokenizer, dictionary = _rules_file(rules)
    data = bytes(data)
    blocks = wants_blocks(len(data), block_size=block_size, workers=workers, scheduler=scheduler, rules_ref=rules_ref)
    check_options(blocks=blocks)
    if blocks:
        out = io.BytesIO()
        compress_stream(pipe, io.BytesIO(data), out, block_size or default_block_size(len(data)), workers,
                        scheduler, dictionary=dictionary, learn_dictionary=shared_dictionary)
        return out.getvalue()
    if tokenizer is not None:
        return pipe.encode(tokenizer.rules, tokenizer.symbols(data), data, reference=rules_ref)
    return pipe.compress(data)


def decompress(archive: bytes, *, rules=None, max_memory: int | None = None) -> bytes:
    from .pipeline import decompress as _decompress

    tokenizer, _ = _rules_file(rules, decoding=True)
    return _decompress(bytes(archive), rules=None if tokenizer is None else tokenizer.rules, max_memory=max_memory)
