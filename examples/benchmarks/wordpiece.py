"""WordPiece as practised: HF's WordPieceTrainer and WordPiece model against a BPE vocabulary of
ours cut by longest prefix, and the course formula (``--scorer wordpiece``) beside them.

All learn from the first 9 MB of en_mix_10MB (whole lines) with the same pre-tokens (GPT-2's:
HF's ByteLevel with its regex, ours ``gpt2``) and are measured on held-out English: the last
1 MB of en_mix_10MB and 1 MB of en_mix_100MB from 60 MB. HF's WordPiece marks a token that
continues a word with ``##`` and keeps it apart from the same string at a word's start; ours
has one token for both.

    python examples/benchmarks/wordpiece.py --corpus ../shared/corpus [--sizes 8000,16000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from unigram import measured, texts  # noqa: E402  (the same text, the same timing)

HF_TRAIN = """
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=10**9))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
trainer = trainers.WordPieceTrainer(vocab_size=int(sys.argv[3]), special_tokens=["[UNK]"],
                                    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
tok.train([sys.argv[1]], trainer)
tok.save(sys.argv[2])
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    ap.add_argument("--sizes", default="8000,16000")
    a = ap.parse_args()
    import chunkpress
    from tokenizers import Tokenizer

    corpus = Path(a.corpus)
    train, helds = texts(corpus)
    out = ["# WordPiece as practised", "",
           f"Written by `examples/benchmarks/wordpiece.py` on {time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores. "
           f"Trained on the first {len(train):,} bytes of en_mix_10MB (whole lines), GPT-2's pre-tokens.", "",
           "| size | vocabulary, inference | CPU s | peak RSS MB | held-out text | tokens | vs HF WordPiece |",
           "|---|---|---:|---:|---|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "train.txt").write_bytes(train)
        for size in [int(s) for s in a.sizes.split(",")]:
            hf_file = str(tmp_path / f"wp{size}.json")
            hf_run = measured([sys.executable, "-c", HF_TRAIN, str(tmp_path / "train.txt"), hf_file, str(size)])
            ours = {}
            for name, extra in (("BPE (repair), longest-prefix", ["--segmenter", "longest-prefix"]),
                                ("the course formula (--scorer wordpiece), longest-prefix",
                                 ["--scorer", "wordpiece", "--segmenter", "longest-prefix"])):
                rules = str(tmp_path / f"{len(ours)}-{size}.rules")
                ours[name] = (rules, measured([sys.executable, "-m", "chunkpress.cli", "train",
                                               str(tmp_path / "train.txt"), "--pretokenizer", "gpt2", "--vocab-size",
                                               str(size), "--rules", rules, "-q", "-f", *extra]))
            hf = Tokenizer.from_file(hf_file)
            for held_name, held in helds.items():
                lines = held.decode("utf-8", "replace").splitlines(keepends=True)
                base = sum(len(e.ids) for e in hf.encode_batch(lines))
                out.append(f"| {size:,} | HF WordPieceTrainer, WordPiece model | {hf_run[0]:.1f} | {hf_run[1]:.0f} | "
                           f"{held_name} | {base:,} | 1.0000 |")
                print(out[-1], file=sys.stderr, flush=True)
                for name, (rules, run) in ours.items():
                    tok = chunkpress.Tokenizer.from_file(rules)
                    tokens = sum(len(e.ids) for e in tok.encode_batch(lines))
                    out.append(f"| {size:,} | {name} | {run[0]:.1f} | {run[1]:.0f} | {held_name} | {tokens:,} | "
                               f"{tokens / base:.4f} |")
                    print(out[-1], file=sys.stderr, flush=True)
    text = "\n".join(out) + "\n"
    (HERE / "wordpiece.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
