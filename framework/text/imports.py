"""Other libraries' models read as rules files of ours (HF tokenizers' ``tokenizer.json``,
sentencepiece's ``.model``, tiktoken's ranks), each keeping its source's ids: a
:class:`~chunkpress.text.tokenizer.Tokenizer` loads the bytes these give, so what a later use
of the file would refuse is refused at the import."""

from __future__ import annotations

import numpy as np

from ..contract import BYTE_SYMBOLS, NO_NORMALIZER
from ..errors import ChunkpressError, ConfigError, FormatError
from ..fileio import read_input
from ..format.limits import READ_BYTES_PER_BYTE, check_allocation, work_limit
from ..format.rulesfile import RulesFile
from .hf import HFVocab, from_hf_bpe, normalizer_name, parse_tokenizer_json
from .hfbert import bert_from_hf, is_bert
from .hfsearched import searched_from_hf
from .pretokenize import check_name
from .unicodeclasses import unicode_version


def rules_of_hf_json(text: str) -> bytes:
    """An HF ``tokenizer.json``'s model (see :mod:`chunkpress.text.hf`)."""
    doc, model = parse_tokenizer_json(text)
    if is_bert(doc, model):
        return rules_of_searched(bert_from_hf(doc, model), "hf-tokenizers")
    if model["type"] != "BPE":
        return rules_of_searched(searched_from_hf(doc, model), "hf-tokenizers")
    rules, pre, vocab = from_hf_bpe(doc, model)
    rewrite = normalizer_name(doc.get("normalizer"))
    config = {"pretokenizer": {"name": pre}, **({"normalizer": {"name": rewrite}} if rewrite != NO_NORMALIZER else {})}
    return RulesFile.learned(rules, config, unicode_version(), imported_from="hf-tokenizers", hf=vocab.to_meta()).to_bytes()


def rules_of_tiktoken_file(path, pretokenizer: str | None) -> bytes:
    """A tiktoken ranks file (see :mod:`chunkpress.text.tiktokenfile`); errors name the file."""
    from .tiktokenfile import PATTERN_BY_SIZE, merges_of_ranks, read_ranks  # read only by this command

    data = read_input(str(path), work_limit(READ_BYTES_PER_BYTE))
    try:
        ranks = read_ranks(data)
        if pretokenizer is None and len(ranks) not in PATTERN_BY_SIZE:
            raise ConfigError(f"{len(ranks):,} ranks are none of tiktoken's published encodings: give the "
                              "pre-tokenizer its split pattern is (--pretokenizer cl100k, o200k, ...)")
        pre = check_name(pretokenizer or PATTERN_BY_SIZE[len(ranks)], "pretokenizer")
        rules, vocab = merges_of_ranks(ranks)
    except ChunkpressError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    return RulesFile.learned(rules, {"pretokenizer": {"name": pre}}, unicode_version(), imported_from="tiktoken",
                             hf=vocab.to_meta()).to_bytes()


def rules_of_spm_file(path) -> bytes:
    """A sentencepiece model (see :mod:`chunkpress.text.spm`); errors name the file."""
    from .spm import vocabulary_of_model  # read only by this command

    data = read_input(str(path), work_limit(READ_BYTES_PER_BYTE))
    try:
        found = vocabulary_of_model(data)
        return rules_of_searched({**found, "pretokenizer": "metaspace", "space_mark": True, "spelled_as": "metaspace"},
                                 "sentencepiece")
    except ChunkpressError as exc:
        raise FormatError(f"{path}: {exc}") from None


def rules_of_searched(found: dict, source: str) -> bytes:
    """A vocabulary read from elsewhere (its tokens, their ids and scores, its segmenter,
    pre-tokenizer, prefix and normalizer) as a rules file whose tokenizer keeps the ids, so
    ``encode`` gives the source's."""
    from .vocabulary import rules_for_pieces  # numba: the vocabulary's kernels

    rules, symbols = rules_for_pieces(found["tokens"])
    ids = np.full(BYTE_SYMBOLS + len(rules), -1, dtype=np.int64)
    ids[symbols] = found["ids"]
    order = np.argsort(symbols, kind="stable")
    prefix = found.get("prefix", "never")
    if prefix == "first":
        raise FormatError("prepend_scheme 'first' puts the prefix before the first text segment alone: not read")
    vocab = HFVocab(ids=ids, special=found.get("special", ()), add_prefix_space=prefix in ("always", "unless-space"),
                    prefix_always=prefix in ("always", "normalizer"),
                    longest_word=found.get("longest_word"), longest_in_bytes=found.get("longest_in_bytes", False),
                    space_mark=found.get("space_mark", False), fused_id=found.get("fused_id"),
                    unknown=found.get("unknown"), leading_spaces_dropped=found.get("leading_spaces_dropped", False),
                    unknown_words=found.get("unknown_words", False), cleanup=found.get("cleanup", False),
                    template=found.get("template", ((), ())), spelled_as=found.get("spelled_as", "bytes"),
                    pair_template=found.get("pair_template", ()))
    scores = found.get("scores")
    config = {"pretokenizer": {"name": found["pretokenizer"]}, **({"normalizer": found["normalizer"]}
                                                                    if "normalizer" in found else {})}
    meta = RulesFile.learned(rules, config, unicode_version(), imported_from=source, hf=vocab.to_meta(),
                             segmenter=found["segmenter"], vocabulary=symbols[order].tolist(),
                             scores=None if scores is None else np.asarray(scores)[order].tolist())
    data = meta.to_bytes()  # a file that no later use could read back is refused now
    check_allocation(f"reading back its rules file of {len(data):,} bytes", len(data) * READ_BYTES_PER_BYTE)
    return data
