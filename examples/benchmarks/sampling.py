"""Subword regularisation against the libraries it follows: BPE-dropout against HF tokenizers'
BPE(dropout=0.1), Unigram sampling against sentencepiece's enable_sampling.

A BPE of 8,000 tokens (repair, GPT-2's pre-tokens) is learned from en_mix_10MB's first 9 MB and
exported with --dropout 0.1; a sentencepiece unigram model of 8,000 pieces (identity
normalisation, byte fallback, white space kept) is trained on the same text and read by
import-spm. Each samples the held-out lines (the last MB, 2,000 lines) 20 times, in process,
warm (the first call compiles and is not timed): seconds are medians of 3, and the mean tokens
per sample are compared.

    .venv/bin/python examples/benchmarks/sampling.py [--corpus DIR]

Writes examples/benchmarks/sampling.md and prints it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from processes import median_of

HERE = Path(__file__).parent
SAMPLES = 20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    import chunkpress
    import sentencepiece as spm
    import tokenizers

    data = (Path(a.corpus) / "en_mix_10MB.txt").read_bytes()
    cut = data.index(b"\n", 9_000_000) + 1
    lines = data[cut:].decode("utf-8", "replace").splitlines(keepends=True)[:2000]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "train.txt").write_bytes(data[:cut])
        subprocess.run([sys.executable, "-m", "chunkpress.cli", "train", str(t / "train.txt"), "--pretokenizer", "gpt2",
                        "--vocab-size", "8000", "--rules", str(t / "bpe.rules"), "-q"], check=True)
        subprocess.run([sys.executable, "-m", "chunkpress.cli", "export-hf", str(t / "bpe.rules"), "--dropout", "0.1",
                        "-o", str(t / "bpe.json"), "-q"], check=True)
        ours = chunkpress.Tokenizer.from_file(t / "bpe.rules")
        hf = tokenizers.Tokenizer.from_file(str(t / "bpe.json"))
        assert json.loads((t / "bpe.json").read_text())["model"]["dropout"] == 0.1
        ours.encode_batch(lines[:10], dropout=0.1, seed=0)  # compiled before the clock
        counts = {"ours": [], "hf": []}

        def sample_ours():
            counts["ours"] = [sum(len(e.ids) for e in ours.encode_batch(lines, dropout=0.1, seed=s)) for s in range(SAMPLES)]

        def sample_hf():
            counts["hf"] = [sum(len(e.ids) for e in hf.encode_batch(lines)) for _ in range(SAMPLES)]

        rows.append(("BPE-dropout 0.1, BPE 8k", median_of(sample_ours), median_of(sample_hf),
                     statistics.mean(counts["ours"]), statistics.mean(counts["hf"]), "HF tokenizers"))
        spm.SentencePieceTrainer.train(input=str(t / "train.txt"), model_prefix=str(t / "uni"), vocab_size=8000,
                                       model_type="unigram", byte_fallback=True, normalization_rule_name="identity",
                                       remove_extra_whitespaces=False, input_sentence_size=2_000_000,
                                       shuffle_input_sentence=True, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=str(t / "uni.model"))
        uni = chunkpress.Tokenizer.from_spm_file(t / "uni.model")
        uni.encode_batch(lines[:10], alpha=0.1, seed=0)

        def sample_uni():
            counts["ours"] = [sum(len(e.ids) for e in uni.encode_batch(lines, alpha=0.1, seed=s)) for s in range(SAMPLES)]

        def sample_sp():
            counts["hf"] = [sum(len(ids) for ids in sp.encode(lines, enable_sampling=True, alpha=0.1, nbest_size=-1))
                            for _ in range(SAMPLES)]

        rows.append(("Unigram sampling, alpha 0.1, nbest -1, unigram 8k", median_of(sample_uni),
                     median_of(sample_sp), statistics.mean(counts["ours"]), statistics.mean(counts["hf"]),
                     "sentencepiece"))
    out = ["# Subword regularisation against the libraries it follows", "",
           f"Written by `examples/benchmarks/sampling.py` on {datetime.date.today()}; {platform.machine()}, "
           f"Python {platform.python_version()}. In process, warm; {SAMPLES} samples of en_mix_10MB's last "
           f"{len(lines):,} lines, seconds the median of 3 runs.", "",
           "| sampling | chunkpress s | peer s | chunkpress mean tokens | peer mean tokens | difference | peer |",
           "|---|---:|---:|---:|---:|---:|---|"]
    for name, ours_s, peer_s, ours_t, peer_t, peer in rows:
        out.append(f"| {name} | {ours_s:.2f} | {peer_s:.2f} | {ours_t:,.0f} | {peer_t:,.0f} | "
                   f"{100 * (ours_t / peer_t - 1):+.2f}% | {peer} |")
    text = "\n".join(out) + "\n"
    (HERE / "sampling.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
