"""How fast each segmenter cuts text, against the tokenizers that run the same inference.

A BPE vocabulary of 32k tokens (repair, GPT-2's pre-tokens) learned from en_mix_10MB cuts
the whole of en_mix_10MB with each of our segmenters; HF's WordPiece model (its trainer's 32k
vocabulary, ByteLevel) runs longest match, and sentencepiece's unigram model (32k, identity
normalisation, byte fallback) runs the likelihood search, and its BPE model (the same
settings) the best-pair search, on the same text, line by line as their users feed them
(``encode_batch``, ``encode`` of a list); the BPE model also through ``import-spm``, whose ids
are sentencepiece's. Ours: ``Tokenizer.symbols`` of the whole text, and ``encode_batch`` of its
lines. Wall seconds, warm, median of 3; both cores.

    python examples/benchmarks/segmenters.py --corpus ../shared/corpus
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import median_of

HERE = Path(__file__).resolve().parent
SIZE = 32_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    import chunkpress
    import sentencepiece as spm
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    path = Path(a.corpus) / "en_mix_10MB.txt"
    data = path.read_bytes()
    text = data.decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    mb = len(data) / 1e6
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "bpe.rules"
        subprocess.run([sys.executable, "-m", "chunkpress.cli", "train", str(path), "--pretokenizer", "gpt2",
                        "--vocab-size", str(SIZE), "--rules", str(rules), "-q"], check=True)
        for name in ("merges", "longest-prefix", "fewest-tokens", "likelihood"):
            tok = chunkpress.Tokenizer.from_file(rules, segmenter=name)
            tok.symbols(data[:100_000])  # compiled and cached before the clock starts
            whole = median_of(lambda tok=tok: tok.symbols(data))
            batch = median_of(lambda tok=tok: tok.encode_batch(lines))
            rows.append((f"chunkpress BPE 32k, {name}", mb / whole, mb / batch))
        wp = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=10**9))
        wp.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        wp.train([str(path)], trainers.WordPieceTrainer(vocab_size=SIZE, special_tokens=["[UNK]"],
                                                         initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                         show_progress=False))
        rows.append(("HF WordPiece 32k (longest match)", None, mb / median_of(lambda: wp.encode_batch(lines))))
        model = str(Path(tmp) / "sp")
        spm.SentencePieceTrainer.train(input=str(path), model_prefix=model, vocab_size=SIZE, model_type="unigram",
                                       normalization_rule_name="identity", byte_fallback=True,
                                       character_coverage=1.0, remove_extra_whitespaces=False, num_threads=2,
                                       max_sentence_length=1 << 20, minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=model + ".model")
        sp_lines = [line.rstrip("\n") for line in lines]
        rows.append(("sentencepiece unigram 32k (likelihood)", None,
                     mb / median_of(lambda: sp.encode(sp_lines, num_threads=2))))
        spm.SentencePieceTrainer.train(input=str(path), model_prefix=model + "-bpe", vocab_size=SIZE,
                                       model_type="bpe", normalization_rule_name="identity", byte_fallback=True,
                                       character_coverage=1.0, remove_extra_whitespaces=False, num_threads=2,
                                       max_sentence_length=1 << 20, minloglevel=2)
        sp_bpe = spm.SentencePieceProcessor(model_file=model + "-bpe.model")
        imported = Path(tmp) / "sp-bpe.rules"
        subprocess.run([sys.executable, "-m", "chunkpress.cli", "import-spm", model + "-bpe.model", "-o",
                        str(imported), "-q"], check=True)
        ours = chunkpress.Tokenizer.from_file(imported)
        ours.encode_batch(sp_lines[:100])  # compiled and cached before the clock starts
        assert [e.ids for e in ours.encode_batch(sp_lines[:2000])] == sp_bpe.encode(sp_lines[:2000])
        rows.append(("chunkpress, sentencepiece's BPE 32k imported (best-pair)", None,
                     mb / median_of(lambda: ours.encode_batch(sp_lines))))
        rows.append(("sentencepiece BPE 32k (best-pair)", None,
                     mb / median_of(lambda: sp_bpe.encode(sp_lines, num_threads=2))))
    out = ["# Segmenters' speed", "",
           f"Written by `examples/benchmarks/segmenters.py` on {time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores; "
           f"en_mix_10MB ({len(data):,} bytes, {len(lines):,} lines), warm, median of 3.", "",
           "| segmenter | whole text, MB/s | line by line, MB/s |", "|---|---:|---:|"]
    for name, whole_speed, batch_speed in rows:
        out.append(f"| {name} | {'' if whole_speed is None else f'{whole_speed:.1f}'} | {batch_speed:.1f} |")
    text_out = "\n".join(out) + "\n"
    (HERE / "segmenters.md").write_text(text_out)
    print(text_out)


if __name__ == "__main__":
    main()
