"""Tokenizer benchmark: encoding speed with a learned dictionary, against HF tokenizers.

    .venv/bin/python examples/benchmarks/tokenizer.py [--corpus DIR]

1. Learns mdl rules on en_mix_1MB and checks that encoding en_mix_1MB with them gives back the
   training's final string, and that encode -> decode is the identity.
2. Learns a word-level BPE (repair + gpt2 pre-tokens) of 32,768 symbols on en_mix_10MB, times
   `Tokenizer.encode` on en_mix_10MB (checked against the training string), and times HF
   tokenizers encoding the same text with the exported tokenizer.json (checked id for id).
Writes examples/benchmarks/tokenizer.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from chunkpress.pipeline import Pipeline
from chunkpress.text.hf import to_hf_json
from chunkpress.text.tokenizer import Tokenizer

HERE = Path(__file__).parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[2].parent / "shared" / "corpus"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    lines = []

    small = (corpus / "en_mix_1MB.txt").read_bytes()
    result = Pipeline.from_config(scorer="mdl").fit(small, trace=False)
    tok = Tokenizer(result.rules)
    t = time.perf_counter()
    ids = tok.encode(small).ids
    seconds = time.perf_counter() - t
    lines.append(
        f"- mdl rules of en_mix_1MB ({len(result.rules):,} rules, no pre-tokens): encoding en_mix_1MB "
        f"{'reproduces' if np.array_equal(ids, result.symbols) else 'DOES NOT reproduce'} the training's final "
        f"string ({len(ids):,} symbols) in {seconds:.2f} s; encode -> decode identical: {tok.decode(ids) == small}"
    )

    big = (corpus / "en_mix_10MB.txt").read_bytes()
    t = time.perf_counter()
    bpe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 32768 - 256}).fit(big, trace=False)
    learn = time.perf_counter() - t
    tok = Tokenizer(bpe.rules, "gpt2")
    tok.encode(big[:10000])  # load compiled kernels
    t = time.perf_counter()
    ids = tok.encode(big).ids
    seconds = time.perf_counter() - t
    mb = len(big) / 1e6
    same = np.array_equal(ids, bpe.symbols)
    lines.append(
        f"- word-level BPE, 32,768 symbols, learned on en_mix_10MB in {learn:.1f} s: chunkpress encodes "
        f"en_mix_10MB in {seconds:.2f} s ({mb / seconds:.1f} MB/s); equals the training string: {same}"
    )
    try:
        import tokenizers

        hf = tokenizers.Tokenizer.from_str(to_hf_json(bpe.rules, "gpt2"))
        text = big.decode("utf-8")
        t = time.perf_counter()
        hf_ids = hf.encode(text).ids
        hf_seconds = time.perf_counter() - t
        lines.append(
            f"- HF tokenizers {tokenizers.__version__} encodes the same text with the exported tokenizer.json in "
            f"{hf_seconds:.2f} s ({mb / hf_seconds:.1f} MB/s); same ids: {hf_ids == ids.tolist()}"
        )
    except ImportError:
        lines.append("- HF tokenizers not installed: no comparison")
    text = "\n".join(lines) + "\n"
    (HERE / "tokenizer.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
