"""The tokenizer methods' checks, run as a user runs them (`chunkpress train` and `evaluate`):

    .venv/bin/python examples/tokenizers/acceptance.py [--corpus DIR]

- SuperBPE (--superword-after 12288, 16,384 tokens) and Picky BPE (--picky 0.9, 8,192 tokens),
  trained on en_mix_10MB, against BPE (repair) of the same size: tokens on text none of them was
  trained on (the whole lines of en_mix_100MB's bytes 10-20 MB, and alice29), tokens that span
  a space inside them, and how many merges differ;
- WordPiece and Length-MAX (4,000 tokens, en_mix_1MB): a round trip of held-out text through
  chunkpress.Tokenizer, and how many of their merges BPE does not learn.
Writes acceptance.md beside this file.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import chunkpress

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-m", "chunkpress.cli"]


def _train(text: Path, rules: Path, *options: str) -> None:
    subprocess.run([*CLI, "train", str(text), "--pretokenizer", "gpt2", "--rules", str(rules), "-q", "-f", *options],
                   check=True)


def _tokens(rules: Path, text: Path) -> int:
    out = subprocess.run([*CLI, "evaluate", str(rules), str(text), "--json"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["tokens"]


def _merges(rules: Path) -> set:
    return {tuple(r) for r in chunkpress.Tokenizer.from_file(rules).rules.tolist()}


def _spans_a_space(rules: Path) -> int:
    """Tokens that hold a space after some other byte ("of the", "s of"): they cross a word
    boundary (runs of spaces alone, which GPT-2's pre-tokens keep together, do not count)."""
    tok = chunkpress.Tokenizer.from_file(rules)
    return sum(re.search(rb"[^ ] ", tok.decode_bytes([i])) is not None for i in range(256, tok.get_vocab_size()))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(HERE.parent / "data"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with open(corpus / "en_mix_100MB.txt", "rb") as fh:
            fh.seek(10_000_000)
            held = fh.read(10_000_000)
        held = held[held.index(b"\n") + 1:held.rindex(b"\n") + 1]  # whole lines, after en_mix_10MB
        (work / "held.txt").write_bytes(held)
        texts = {"en_mix_100MB 10-20 MB": work / "held.txt", "alice29": corpus / "alice29.txt"}
        train = corpus / "en_mix_10MB.txt"
        runs = {"bpe-16k": ("--vocab-size", "16384"), "superbpe-16k": ("--vocab-size", "16384", "--superword-after",
                                                                       "12288"),
                "bpe-8k": ("--vocab-size", "8192"), "picky-8k": ("--vocab-size", "8192", "--picky", "0.9")}
        for name, options in runs.items():
            _train(train, work / f"{name}.rules", *options)
        counts = {(n, t): _tokens(work / f"{n}.rules", p) for n in runs for t, p in texts.items()}
        lines.append("| method | vocabulary | text | tokens | BPE's tokens | ratio |")
        lines.append("|---|---|---|---|---|---|")
        for method, base, size in (("SuperBPE t = 12,288", "superbpe-16k", "bpe-16k"),
                                   ("Picky BPE τ = 0.9", "picky-8k", "bpe-8k")):
            for text in texts:
                ours, theirs = counts[(base, text)], counts[(size, text)]
                lines.append(f"| {method} | {size.split('-')[1]} | {text} | {ours:,} | {theirs:,} | {ours / theirs:.4f} |")
        spans = {n: _spans_a_space(work / f"{n}.rules") for n in ("bpe-16k", "superbpe-16k")}
        differ = len(_merges(work / "picky-8k.rules") - _merges(work / "bpe-8k.rules"))
        picky = chunkpress.Tokenizer.from_file(work / "picky-8k.rules")
        lines += ["", f"- tokens that span a space inside them: SuperBPE {spans['superbpe-16k']:,}, "
                      f"BPE {spans['bpe-16k']:,}",
                  f"- Picky BPE: {len(picky.deletions):,} tokens deleted; {differ:,} of its "
                  f"{len(picky.rules):,} merges are not among BPE's"]
        small = corpus / "en_mix_1MB.txt"
        _train(small, work / "repair.rules", "--vocab-size", "4000")
        alice = (corpus / "alice29.txt").read_text()
        for scorer in ("wordpiece", "length-max"):
            _train(small, work / f"{scorer}.rules", "--vocab-size", "4000", "--scorer", scorer)
            tok = chunkpress.Tokenizer.from_file(work / f"{scorer}.rules")
            same = tok.decode(tok.encode(alice).ids) == alice
            other = len(_merges(work / f"{scorer}.rules") - _merges(work / "repair.rules"))
            mine, bpe = (_tokens(work / f"{name}.rules", corpus / "alice29.txt") for name in (scorer, "repair"))
            lines.append(f"- {scorer} (4,000 tokens, en_mix_1MB): alice29 round-trips: {same}; {other:,} of its "
                         f"{len(tok.rules):,} merges are not among BPE's; alice29 in {mine:,} tokens (BPE {bpe:,})")
    text = "\n".join(lines) + "\n"
    (HERE / "acceptance.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
