"""Encoding with real models read by ``import-spm`` and ``import-hf``, against their own
libraries.

sentencepiece trains a unigram and a BPE model of 8k pieces with its defaults (``nmt_nfkc``,
extra white space removed, no byte fallback), and HF's ``BertWordPieceTokenizer`` (lowercase)
an 8k WordPiece with [CLS]/[SEP] added, on the first 2 MB of en_mix_10MB. Both sides then
encode the whole of en_mix_10MB: line by line as their users feed it (sentencepiece's
``encode`` of a list on one thread; HF's ``encode_batch`` on both cores; our ``encode_batch``)
and as one text. Every line's ids are compared, and the whole text's. Wall seconds, warm
(kernels compiled before the clock starts), median of 3.

    python examples/benchmarks/imported_models.py --corpus ../shared/corpus
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from processes import median_of

HERE = Path(__file__).resolve().parent
SIZE = 8_000
TRAIN_BYTES = 2_000_000


def _bert_rows(tmp: Path, lines: list[str], text: str) -> list[tuple]:
    import chunkpress
    from tokenizers import BertWordPieceTokenizer, processors
    from tokenizers import Tokenizer as HFTokenizer

    bert = BertWordPieceTokenizer(lowercase=True)
    bert.train([str(tmp / "train.txt")], vocab_size=SIZE)
    cls, sep = bert.token_to_id("[CLS]"), bert.token_to_id("[SEP]")
    bert._tokenizer.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    bert.save(str(tmp / "bert.json"))
    hf = HFTokenizer.from_file(str(tmp / "bert.json"))
    tok = chunkpress.Tokenizer.from_hf_file(tmp / "bert.json")
    tok.encode_batch(lines[:2000])
    same = sum(a.ids == b.ids for a, b in zip(tok.encode_batch(lines), hf.encode_batch(lines), strict=True))
    whole = "equal" if tok.encode(text).ids == hf.encode(text).ids else "differ"
    return [("BERT WordPiece", "lines", median_of(lambda: hf.encode_batch(lines)),
             median_of(lambda: tok.encode_batch(lines)), f"{same:,} of {len(lines):,}"),
            ("BERT WordPiece", "whole", median_of(lambda: hf.encode(text)), median_of(lambda: tok.encode(text)), whole)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    import chunkpress
    import sentencepiece as spm

    data = (Path(a.corpus) / "en_mix_10MB.txt").read_bytes()
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    mb = len(data) / 1e6
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "train.txt").write_bytes(data[:TRAIN_BYTES])
        for kind in ("unigram", "bpe"):
            prefix = str(Path(tmp) / kind)
            spm.SentencePieceTrainer.train(input=str(Path(tmp) / "train.txt"), model_prefix=prefix, vocab_size=SIZE,
                                           model_type=kind, minloglevel=2)
            sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
            tok = chunkpress.Tokenizer.from_spm_file(prefix + ".model")
            tok.encode_batch(lines[:2000])  # compiled and cached before the clock starts
            theirs_lines = sp.encode(lines, num_threads=1)
            ours_lines = [e.ids for e in tok.encode_batch(lines)]
            same_lines = sum(a == b for a, b in zip(ours_lines, theirs_lines, strict=True))
            ours_whole, theirs_whole = tok.encode(text).ids, sp.encode(text)
            first = next((k for k, (x, y) in enumerate(zip(ours_whole, theirs_whole, strict=False)) if x != y),
                         None if len(ours_whole) == len(theirs_whole) else min(len(ours_whole), len(theirs_whole)))
            same_whole = "equal" if first is None else \
                f"from token {first:,} of {len(theirs_whole):,} ({len(ours_whole) - len(theirs_whole):+,} tokens)"
            rows.append((kind, "lines", median_of(lambda sp=sp: sp.encode(lines, num_threads=1)),
                         median_of(lambda tok=tok: tok.encode_batch(lines)), f"{same_lines:,} of {len(lines):,}"))
            rows.append((kind, "whole", median_of(lambda sp=sp: sp.encode(text)),
                         median_of(lambda tok=tok: tok.encode(text)), same_whole))
        rows += _bert_rows(Path(tmp), lines, text)
    out = ["# Imported models against their own libraries", "",
           f"{SIZE:,} pieces, sentencepiece's defaults and HF's BertWordPieceTokenizer, trained on the first "
           f"{TRAIN_BYTES / 1e6:.0f} MB of en_mix_10MB; encoding all of it ({mb:.1f} MB). Wall seconds, warm, median "
           "of 3; sentencepiece on one thread, HF on both cores, ours on one.", "",
           "| model | input | theirs s | chunkpress s | ours / theirs | same ids |", "|---|---|---|---|---|---|"]
    out += [f"| {kind} | {how} | {s:.2f} | {c:.2f} | {c / s:.2f} | {same} |" for kind, how, s, c, same in rows]
    notes = HERE / "imported_models_notes.md"
    out += ["", f"Notes: {notes.name}."]
    (HERE / "imported_models.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
