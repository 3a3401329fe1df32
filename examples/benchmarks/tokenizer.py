"""Tokenizer benchmark: encoding speed with a learned dictionary, against HF tokenizers.

    .venv/bin/python examples/benchmarks/tokenizer.py [--corpus DIR]

1. Learns mdl rules on en_mix_1MB and checks that encoding en_mix_1MB with them gives back the
   training's final string, and that encode -> decode is the identity.
2. Learns a word-level BPE (repair + gpt2 pre-tokens) of 32,768 symbols on en_mix_10MB, times
   `Tokenizer.encode` on en_mix_10MB (checked against the training string), and times HF
   tokenizers encoding the same text with the exported tokenizer.json (checked id for id).
3. Batches as HF users send them: `encode_batch` over alice29's lines with a BPE of 8,192 tokens
   learned on en_mix_10MB, ours and HF's (the same tokenizer, exported), median of 7 runs each,
   checked id for id and offset for offset.
Writes examples/benchmarks/tokenizer.md.
"""

from __future__ import annotations

import argparse
import statistics
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
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1] / "data"))
    args = parser.parse_args()
    corpus = Path(args.corpus)
    lines = []

    small = (corpus / "en_mix_1MB.txt").read_bytes()
    result = Pipeline.from_config(scorer="mdl").fit(small, trace=False)
    tok = Tokenizer(result.rules)
    t = time.perf_counter()
    ids = tok.encode(small).id_array
    seconds = time.perf_counter() - t
    lines.append(
        f"- mdl rules of en_mix_1MB ({len(result.rules):,} rules, no pre-tokens): encoding en_mix_1MB "
        f"{'reproduces' if np.array_equal(ids, result.symbols) else 'DOES NOT reproduce'} the training's final "
        f"string ({len(ids):,} symbols) in {seconds:.2f} s; encode -> decode identical: {tok.decode_bytes(ids) == small}"
    )

    big = (corpus / "en_mix_10MB.txt").read_bytes()
    t = time.perf_counter()
    bpe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 32768 - 256}).fit(big, trace=False)
    learn = time.perf_counter() - t
    tok = Tokenizer(bpe.rules, "gpt2")
    tok.encode(big[:10000])  # load compiled kernels
    t = time.perf_counter()
    ids = tok.encode(big).id_array
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
        lines.append(_batches(corpus, big))
    except ImportError:
        lines.append("- HF tokenizers not installed: no comparison")
    text = "\n".join(lines) + "\n"
    (HERE / "tokenizer.md").write_text(text)
    print(text)
    return 0


def _median_seconds(run, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _batches(corpus: Path, big: bytes) -> str:
    import tokenizers

    bpe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 8192 - 256}).fit(big, trace=False)
    ours = Tokenizer(bpe.rules, "gpt2")
    hf = tokenizers.Tokenizer.from_str(to_hf_json(bpe.rules, "gpt2"))
    lines = (corpus / "alice29.txt").read_text().splitlines()
    ours.encode_batch(lines[:50])  # load compiled kernels
    same = all(a.ids == b.ids and a.offsets == b.offsets
               for a, b in zip(ours.encode_batch(lines), hf.encode_batch(lines), strict=True))
    mine = _median_seconds(lambda: ours.encode_batch(lines))
    theirs = _median_seconds(lambda: hf.encode_batch(lines))
    return (f"- encode_batch over alice29's {len(lines):,} lines (BPE of 8,192 tokens): chunkpress "
            f"{mine * 1e3:.0f} ms, HF tokenizers {theirs * 1e3:.0f} ms ({mine / theirs:.2f}x HF's time, median of 7, "
            f"HF with its default threads); same ids and offsets: {same}")


if __name__ == "__main__":
    sys.exit(main())
