"""Tokenizer benchmark: encoding speed with a learned dictionary, against HF tokenizers.

    .venv/bin/python examples/benchmarks/tokenizer.py [--corpus DIR]

1. Learns mdl rules on en_mix_1MB and checks that encoding en_mix_1MB with them gives back the
   training's final string, and that encode -> decode is the identity.
2. Learns a word-level BPE (repair + gpt2 pre-tokens) of 32,768 symbols on en_mix_10MB, times
   `Tokenizer.encode` on en_mix_10MB (checked against the training string), and times HF
   tokenizers encoding the same text with the exported tokenizer.json (checked id for id).
3. Batches as HF users send them: `encode_batch` over alice29's lines and the Arabic UDHR's
   with a BPE and a SuperBPE (transition at 6,144 tokens) of 8,192 tokens learned on
   en_mix_10MB, ours and HF's (the same tokenizer, exported), median of 7 runs each, checked
   id for id and offset for offset.
4. SuperBPE's training cost against BPE's, as a user runs `chunkpress train` (whole processes,
   run in turn, medians of 5: wall seconds and peak RSS).
Writes examples/benchmarks/tokenizer.md.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from chunkpress.pipeline import Pipeline
from chunkpress.text.hf import to_hf_json
from chunkpress.text.tokenizer import Tokenizer
from processes import CHUNKPRESS, median_of, timed  # beside this script (its folder is on the path)

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
    lines.append(_training_cost(corpus))
    text = "\n".join(lines) + "\n"
    (HERE / "tokenizer.md").write_text(text)
    print(text)
    return 0


def _batches(corpus: Path, big: bytes) -> str:
    """encode_batch, ours against HF's on the exported tokenizer, for BPE and SuperBPE."""
    import tokenizers

    out = []
    for name, settings in (("BPE", {}), ("SuperBPE, t = 6,144", {"superword_after": 6144})):
        pipe = Pipeline.from_config(scorer="repair", pretokenizer="gpt2", limits={"max_rules": 8192 - 256}, **settings)
        fit = pipe.fit(big, trace=False)
        boundary = pipe.policies()[0]
        ours = Tokenizer(fit.rules, "gpt2", boundary=boundary)
        units = boundary.hf_units("gpt2") if boundary is not None else None
        hf = tokenizers.Tokenizer.from_str(to_hf_json(fit.rules, "gpt2", units=units))
        for text in ("alice29.txt", "udhr_arb.txt"):
            lines = (corpus / text).read_text(encoding="utf-8", errors="replace").splitlines()
            ours.encode_batch(lines[:50])  # load compiled kernels
            same = all(a.ids == b.ids and a.offsets == b.offsets
                       for a, b in zip(ours.encode_batch(lines), hf.encode_batch(lines), strict=True))
            mine = median_of(functools.partial(ours.encode_batch, lines), 7)
            theirs = median_of(functools.partial(hf.encode_batch, lines), 7)
            out.append(f"- encode_batch over {text}'s {len(lines):,} lines ({name}, 8,192 tokens): chunkpress "
                       f"{mine * 1e3:.0f} ms, HF tokenizers {theirs * 1e3:.0f} ms ({mine / theirs:.2f}x HF's time, "
                       f"median of 7, HF with its default threads); same ids and offsets: {same}")
    return "\n".join(out)


def _training_cost(corpus: Path, repeats: int = 5) -> str:
    """SuperBPE's `chunkpress train` against BPE's, whole processes run in turn."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        base = [*CHUNKPRESS, "train", "-q", "-f", "--pretokenizer", "gpt2", "--vocab-size", "8192",
                str(corpus / "en_mix_10MB.txt"), "--rules"]
        commands = {"BPE": [*base, f"{tmp}/bpe.rules"],
                    "SuperBPE": [*base, f"{tmp}/superbpe.rules", "--superword-after", "6144"]}
        runs: dict[str, list[tuple[float, int]]] = {k: [] for k in commands}
        for _ in range(repeats):
            for name, cmd in commands.items():
                seconds, peak_bytes, _ = timed(cmd)  # GNU time's peak: this big process is not the child's
                runs[name].append((seconds, peak_bytes >> 20))
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    peak = {k: statistics.median(m for _, m in v) for k, v in runs.items()}
    return (f"- `chunkpress train --pretokenizer gpt2 --vocab-size 8192` on en_mix_10MB, medians of {repeats} "
            f"whole processes run in turn: BPE {wall['BPE']:.2f} s, {peak['BPE']:,} MB; SuperBPE (`--superword-after "
            f"6144`) {wall['SuperBPE']:.2f} s, {peak['SuperBPE']:,} MB: {wall['SuperBPE'] / wall['BPE']:.2f}x BPE's "
            f"time, {peak['SuperBPE'] / peak['BPE']:.2f}x its memory")


if __name__ == "__main__":
    sys.exit(main())
