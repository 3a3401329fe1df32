"""WordPiece and Length-MAX against their definitions: at every step the engine merges a pair
whose score, recounted here in plain Python from the words of the text (exact fractions), is
the largest; and both learn other merges than Re-Pair and round-trip through a Tokenizer."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from pathlib import Path

import chunkpress
import pytest
from chunkpress.pipeline import Pipeline
from chunkpress.text.pretokenize import split
from support import merge_pair

DATA = Path(__file__).parent / "data"


def pair_counts(words: Counter) -> tuple[Counter, Counter]:
    """(pair counts, symbol counts) of words given as tuples of symbols, each word weighted by
    its count; a run of one symbol pairs up left to right (in x x x the pair (x, x) counts once)."""
    pairs, symbols = Counter(), Counter()
    for word, count in words.items():
        for s in word:
            symbols[s] += count
        offset = 0  # of word[i] in its run of equal symbols
        for i in range(len(word) - 1):
            if word[i] != word[i + 1] or offset % 2 == 0:
                pairs[(word[i], word[i + 1])] += count
            offset = offset + 1 if word[i] == word[i + 1] else 0
    return pairs, symbols


def merged(words: Counter, a: int, b: int, z: int) -> Counter:
    out: Counter = Counter()
    for word, count in words.items():
        out[tuple(merge_pair(word, a, b, z))] += count
    return out


def spelled(rules, s: int) -> bytes:
    return bytes([s]) if s < 256 else spelled(rules, rules[s - 256][0]) + spelled(rules, rules[s - 256][1])


SCORES = {
    "wordpiece": lambda k, k0, k1, n: Fraction(k, k0 * k1),
    "length-max": lambda k, k0, k1, n: k * n,
}


@pytest.mark.parametrize("name", sorted(SCORES))
def test_every_merge_has_the_best_score_by_the_definition(name):
    text = (DATA / "alice29.txt").read_bytes()[:12_000]
    rules = Pipeline.from_config(scorer=name, pretokenizer="gpt2", limits={"max_rules": 60}).fit(text).rules.tolist()
    words = Counter(tuple(w) for w in split(text, "gpt2"))
    for step, (a, b) in enumerate(rules):
        pairs, symbols = pair_counts(words)
        scores = {p: SCORES[name](k, symbols[p[0]], symbols[p[1]], len(spelled(rules, p[0]) + spelled(rules, p[1])))
                  for p, k in pairs.items() if k >= 2}
        assert scores[(a, b)] == max(scores.values()), f"{name}, step {step}: merged {(a, b)}"
        words = merged(words, a, b, 256 + step)


def test_they_learn_other_merges_than_repair_and_round_trip_held_out_text():
    text = (DATA / "alice29.txt").read_bytes()
    train, held = text[:100_000], text[100_000:].decode()
    learned = {}
    for name in ("repair", "wordpiece", "length-max"):
        rules = Pipeline.from_config(scorer=name, pretokenizer="gpt2", limits={"max_rules": 744}).fit(train).rules
        learned[name] = rules.tolist()
        tokenizer = chunkpress.Tokenizer(rules, "gpt2")
        assert tokenizer.decode(tokenizer.encode(held).ids) == held
    assert learned["wordpiece"][:50] != learned["repair"][:50]
    assert learned["length-max"][:50] != learned["repair"][:50]
