"""What tokenization papers report about a tokenizer on a text, and the ``evaluate`` table.

For the tokens of a text: how many, bytes and characters per token, tokens per white-space
word (fertility), and the efficiency of the unigram distribution of tokens, Rényi's at alpha
2.5 (Zouhar et al. 2023, "Tokenization and the Noiseless Channel") and Shannon's: the entropy
over log2 of the distinct tokens used, as the ``tokenization-scorer`` package computes them;
plus the code length of the token string under the MDL model (dictionary and string, bits).

A sweep over vocabulary sizes evaluates prefixes of one dictionary: greedy merging makes the
first k rules of a longer run the run to k (with its deletions and openings up to there).
"""

from __future__ import annotations

import math

import numpy as np

from ..contract import BYTE_SYMBOLS
from ..engine.codelength import code_length
from ..errors import ConfigError, InputError
from ..tables import columns
from .tokenizer import Tokenizer

#: the columns of a row, in order
COLUMNS = ("text", "vocab_size", "segmenter", "tokens", "bytes", "bytes_per_token", "chars_per_token", "tokens_per_word",
           "renyi_efficiency", "shannon_efficiency", "vocab_used", "code_length_bits")
#: Zouhar et al.'s alpha, which correlated best with downstream quality
DEFAULT_ALPHA = 2.5


def check_alpha(alpha) -> float:
    """``alpha`` if it is an order Rényi efficiency has (a finite number above 0), else ConfigError."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (math.isfinite(alpha) and alpha > 0):
        raise ConfigError(f"alpha (--alpha) must be a finite number above 0, not {alpha!r}")
    return float(alpha)


def efficiency(counts: np.ndarray, alpha: float) -> float | None:
    """Rényi efficiency of order ``alpha`` (Shannon's at 1) of the token counts: the entropy of
    their distribution over log2 of the distinct tokens; None when fewer than two are used."""
    counts = counts[counts > 0].astype(np.float64)
    if counts.size < 2:
        return None
    p = counts / counts.sum()
    if alpha == 1.0:
        entropy = float(-np.sum(p * np.log2(p)))
    else:  # log2(sum p^a) / (1 - a), with the largest p factored out: no term under- or overflows to a warning
        logs = np.log2(p)
        top = float(logs.max())
        with np.errstate(over="ignore", under="ignore"):  # a term far below the largest is 0, as it should be
            scaled = float(np.log2(np.sum(np.exp2(alpha * (logs - top)))))
        entropy = alpha / (1.0 - alpha) * top + scaled / (1.0 - alpha)
    return entropy / math.log2(counts.size)


def measure(symbols: np.ndarray, text: bytes, dictionary_size: int, alpha: float = DEFAULT_ALPHA) -> dict:
    """The metrics of ``text`` encoded as ``symbols`` (our ids, of a dictionary with
    ``dictionary_size`` tokens, rules' ids included for the code length)."""
    n = int(symbols.size)
    arr = np.frombuffer(text, dtype=np.uint8)
    chars = int(np.count_nonzero((arr & 0xC0) != 0x80))
    words = len(text.decode("utf-8", errors="replace").split())
    counts = np.bincount(symbols, minlength=dictionary_size) if n else np.zeros(dictionary_size, dtype=np.int64)
    bits = code_length(max(dictionary_size, BYTE_SYMBOLS), n, counts).total_bits
    return {"tokens": n, "bytes": len(text), "bytes_per_token": len(text) / n if n else None,
            "chars_per_token": chars / n if n else None, "tokens_per_word": n / words if words else None,
            "renyi_efficiency": efficiency(counts, alpha), "shannon_efficiency": efficiency(counts, 1.0),
            "vocab_used": int(np.count_nonzero(counts)), "code_length_bits": int(bits)}


def prefix(tokenizer, size: int):
    """The tokenizer of the dictionary's first rules that hold ``size`` tokens (the 256 bytes
    and added tokens included, deleted ones not), as that training would have stopped."""
    if tokenizer.vocabulary is not None:
        raise ConfigError("vocab_size (--vocab-size): this vocabulary was learned top-down, so its smaller ones are "
                          "not its prefixes: train a sweep (train --vocab-size V,V,...)")
    added = len(tokenizer.hf.special) if tokenizer.hf is not None else 0
    live = BYTE_SYMBOLS + added + np.arange(len(tokenizer.rules) + 1)  # tokens after r rules, before deletions
    gone = np.searchsorted(tokenizer.deletions[:, 0], np.arange(len(tokenizer.rules) + 1), side="left")
    live = live - gone
    hit = np.flatnonzero(live == size)
    if hit.size == 0:
        raise ConfigError(f"vocab_size (--vocab-size) {size:,}: this dictionary's prefixes hold "
                          f"{int(live[0]):,} to {int(live[-1]):,} tokens")
    rules = int(hit[0])  # training stops where its vocabulary first holds that many
    keep = tokenizer.deletions[tokenizer.deletions[:, 0] < rules]
    scores = tokenizer.scores[: BYTE_SYMBOLS + rules] if tokenizer.scores is not None else None
    return Tokenizer(tokenizer.rules[:rules], tokenizer.pretokenizer, deletions=keep, boundary=tokenizer.boundary,
                     segmenter=tokenizer.segmenter, scores=scores, normalizer=tokenizer.normalizer,
                     normalizer_params=tokenizer.normalizer_params)


def tokens_of(tokenizer, text: bytes) -> tuple[np.ndarray, int]:
    """The tokens a held-out text is measured by, as ``encode`` gives them to a user (its ids,
    with what the tokenizer puts before a text), and how many ids there are."""
    if tokenizer.hf is None:
        return np.asarray(tokenizer.symbols(text), dtype=np.int64), BYTE_SYMBOLS + len(tokenizer.rules)
    return np.asarray(tokenizer.encode(text).id_array, dtype=np.int64), tokenizer.vocab_size


def evaluate(tokenizer, texts: dict[str, bytes], vocab_sizes=(), alpha: float = DEFAULT_ALPHA) -> list[dict]:
    """One row per (text, vocabulary size) with :data:`COLUMNS`: ``tokenizer`` a Tokenizer or
    a rules file's path, ``texts`` maps a name to UTF-8 text; no ``vocab_sizes``: the whole
    dictionary (its own ids, added tokens included)."""
    check_alpha(alpha)
    if not isinstance(tokenizer, Tokenizer):
        tokenizer = Tokenizer.from_file(tokenizer)
    for name, text in texts.items():
        if not text:
            raise InputError(f"{name}: empty: no tokens to measure")
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name}: not UTF-8 text (byte {exc.start:,}): evaluate measures text") from None
    tokenizers = [(None, tokenizer)] if not vocab_sizes else [(v, prefix(tokenizer, v)) for v in vocab_sizes]
    rows = []
    for name, text in texts.items():
        for size, tok in tokenizers:
            symbols, used = tokens_of(tok, text)
            row = {"text": name, "vocab_size": size or tok.get_vocab_size(), "segmenter": tok.segmenter}
            row.update(measure(symbols, text, used, alpha))
            rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    """The rows as an aligned text table."""
    return columns(rows, COLUMNS)


def gini(values) -> float:
    """The Gini coefficient of ``values`` (positive): half the mean absolute difference of all
    pairs over the mean; 0 when all are equal, towards 1 as one value takes all."""
    x = np.asarray(values, dtype=np.float64)
    return float(np.abs(x[:, None] - x[None, :]).sum() / (2.0 * x.size * x.sum())) if x.size else 0.0


#: the parity rows' columns: what each row measures across the texts of one tokenizer
PARITY_COLUMNS = ("vocab_size", "segmenter", "texts", "gini_bytes_per_token", "max_min_bytes_per_token",
                  "worst", "best")


def parity(rows: list[dict]) -> list[dict]:
    """Across the texts (one a language, each of the same content where they are parallel, as
    parity-aware BPE measures, Foroutan et al. 2025): for each vocabulary size and segmenter,
    the Gini coefficient of the texts' bytes per token and the ratio of the largest to the
    smallest, and which texts those are. No rows for fewer than two texts."""
    out = []
    groups: dict = {}
    for row in rows:
        groups.setdefault((row["vocab_size"], row["segmenter"]), []).append(row)
    for (size, segmenter), members in groups.items():
        if len(members) < 2:
            continue
        values = [m["bytes_per_token"] for m in members]
        worst, best = members[int(np.argmin(values))], members[int(np.argmax(values))]
        out.append({"vocab_size": size, "segmenter": segmenter, "texts": len(members),
                    "gini_bytes_per_token": gini(values), "max_min_bytes_per_token": max(values) / min(values),
                    "worst": worst["text"], "best": best["text"]})
    return out


def table_with_parity(rows: list[dict], across: list[dict]) -> str:
    """:func:`table`, and under it the :func:`parity` rows ``across`` (where there are any)."""
    return table(rows) + (f"\n\nparity across the texts:\n{columns(across, PARITY_COLUMNS)}" if across else "")
