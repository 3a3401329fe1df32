"""Top-down learners: Unigram LM against sentencepiece's trainer, and PathPiece against BPE, in
the same run on the same text.

Both learn from the first 9 MB of en_mix_10MB, whole lines, and are measured on held-out
English they did not see (the last 1 MB of it, and 1 MB of en_mix_100MB from 60 MB on, whole
lines). sentencepiece runs with its settings for this comparison: unigram, identity
normalisation, byte fallback, character coverage 1.0, extra white space kept, 2 threads, each
line a sentence with its dummy prefix (``▁`` before the first word). chunkpress reads the same
file as it is: ``metaspace`` reads a file a sentence a line (a space before each line, its break
gone), so its words are sentencepiece's ``▁``-words, counted once each, and its tokenizer puts
the same space before each line it encodes.

Each trainer runs in a process of its own, timed by its CPU seconds (user + system) and peak
RSS (GNU time). Held out, both encode line by line: the tokens, and the log-likelihood per byte
of the most likely segmentation under each one's own piece scores.

PathPiece (from n-grams and from a BPE vocabulary) and BPE (repair's counts, cut by its merges
and by the fewest tokens) learn from the same 9 MB with GPT-2's pre-tokens; their rows give the
held-out tokens against BPE's merges.

    python examples/benchmarks/unigram.py --corpus ../shared/corpus [--sizes 8000,16000]
    python examples/benchmarks/unigram.py --corpus ../shared/corpus --hundred

With several sizes, Unigram also learns them all in one pruning run (``train --vocab-size
8000,16000``): its CPU time, and each size's held-out tokens against the lone run's.

``--hundred`` trains both at 8k on the whole of en_mix_100MB instead (CPU and peak RSS only),
and appends its rows to unigram.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TRAIN_BYTES = 9_000_000

SP_TRAIN = """
import sys, sentencepiece as spm
spm.SentencePieceTrainer.train(input=sys.argv[1], model_prefix=sys.argv[2], vocab_size=int(sys.argv[3]),
    model_type="unigram", normalization_rule_name="identity", byte_fallback=True, character_coverage=1.0,
    remove_extra_whitespaces=False, num_threads=2, max_sentence_length=1 << 20, minloglevel=2)
"""


def lines_of(data: bytes, start: int, length: int) -> bytes:
    """Whole lines of ``data`` from about ``start``, about ``length`` bytes."""
    begin = data.index(b"\n", start) + 1 if start else 0
    end = data.rindex(b"\n", 0, begin + length) + 1
    return data[begin:end]


def texts(corpus: Path) -> tuple[bytes, dict[str, bytes]]:
    """(the training text, the held-out texts by name): the first TRAIN_BYTES of en_mix_10MB and
    its rest, and 1 MB of en_mix_100MB from 60 MB where it is there, all whole lines."""
    ten = (corpus / "en_mix_10MB.txt").read_bytes()
    train = lines_of(ten, 0, TRAIN_BYTES)
    helds = {"en_mix_10MB, last 1 MB": ten[len(train):]}
    hundred = corpus / "en_mix_100MB.txt"
    if hundred.exists():
        with hundred.open("rb") as fh:
            fh.seek(60_000_000)
            helds["en_mix_100MB, 1 MB from 60 MB"] = lines_of(fh.read(1_200_000), 1, 1_000_000)
    return train, helds


def measured(cmd: list[str]) -> tuple[float, float, float]:
    """(CPU seconds, peak RSS in MB, wall seconds) of one process, measured by GNU time (a
    child forked from this process would report this process's peak as its own)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", report.name, *cmd],
                              stdout=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}")
        wall, user, system, peak_kb = report.read().split()[-4:]
    return float(user) + float(system), int(peak_kb) / 1024, float(wall)


def sp_held(model: str, lines: list[str]) -> tuple[int, float]:
    """(tokens, log-likelihood) of sentencepiece's encoding of every line."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=model)
    scores = np.array([sp.get_score(i) for i in range(sp.get_piece_size())])
    ids = sp.encode(lines)
    return sum(len(x) for x in ids), float(sum(scores[x].sum() for x in ids))


def ours_held(rules: str, lines: list[str]) -> tuple[int, float]:
    import chunkpress

    tok = chunkpress.Tokenizer.from_file(rules)
    found = tok.encode_batch(lines)  # its own dummy prefix before each line, as sentencepiece's
    ids = np.concatenate([np.asarray(e.ids, dtype=np.int64) for e in found])
    return int(ids.size), float(tok.scores[ids].sum())


def chunkpress_tokens(rules: str, segmenter: str, held: bytes) -> int:
    import chunkpress

    return int(chunkpress.Tokenizer.from_file(rules, segmenter=segmenter).symbols(held).size)


def whole_hundred(corpus: Path) -> None:
    """Both trainers at 8k on the whole of en_mix_100MB: CPU seconds and peak RSS."""
    source = corpus / "en_mix_100MB.txt"
    with tempfile.TemporaryDirectory() as tmp:
        sp_run = measured([sys.executable, "-c", SP_TRAIN, str(source), str(Path(tmp) / "sp"), "8000"])
        ours_run = measured([sys.executable, "-m", "chunkpress.cli", "train", str(source), "--learner", "unigram",
                             "--pretokenizer", "metaspace", "--vocab-size", "8000", "--rules",
                             str(Path(tmp) / "u.rules"), "-q", "-f"])
    rows = ["", f"The whole of en_mix_100MB at 8k ({time.strftime('%Y-%m-%d')}):", "",
            "| trainer | CPU s | peak RSS MB | wall s |", "|---|---:|---:|---:|"]
    rows += [f"| {name} | {run[0]:.0f} | {run[1]:,.0f} | {run[2]:.0f} |"
             for name, run in (("sentencepiece", sp_run), ("chunkpress", ours_run))]
    with (HERE / "unigram.md").open("a") as out:
        out.write("\n".join(rows) + "\n")
    print("\n".join(rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    ap.add_argument("--sizes", default="8000,16000")
    ap.add_argument("--hundred", action="store_true", help="en_mix_100MB whole, 8k: CPU and peak RSS")
    a = ap.parse_args()
    corpus = Path(a.corpus)
    if a.hundred:
        whole_hundred(corpus)
        return
    train, helds = texts(corpus)
    out = ["# Unigram LM: chunkpress against sentencepiece", "",
           f"Written by `examples/benchmarks/unigram.py` on {time.strftime('%Y-%m-%d')}; {os.cpu_count()} cores. "
           f"Trained on the first {len(train):,} bytes of en_mix_10MB (whole lines).", "",
           "| size | trainer | CPU s | peak RSS MB | wall s | held-out text | tokens | vs sentencepiece | "
           "log-likelihood / byte | vs sentencepiece |", "|---|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "train.txt").write_bytes(train)
        for size in [int(s) for s in a.sizes.split(",")]:
            model = str(tmp_path / f"sp{size}")
            sp_run = measured([sys.executable, "-c", SP_TRAIN, str(tmp_path / "train.txt"), model, str(size)])
            rules = str(tmp_path / f"ours{size}.rules")
            ours_run = measured([sys.executable, "-m", "chunkpress.cli", "train", str(tmp_path / "train.txt"),
                                 "--learner", "unigram", "--pretokenizer", "metaspace", "--vocab-size", str(size),
                                 "--rules", rules, "-q", "-f"])
            for name, held in helds.items():
                lines = held.decode("utf-8", "replace").split("\n")[:-1]
                n_bytes = sum(len(line.encode()) + 1 for line in lines)
                sp_tokens, sp_ll = sp_held(model + ".model", lines)
                our_tokens, our_ll = ours_held(rules, lines)
                for trainer, run, tokens, ll in (("sentencepiece", sp_run, sp_tokens, sp_ll),
                                                 ("chunkpress", ours_run, our_tokens, our_ll)):
                    out.append(f"| {size:,} | {trainer} | {run[0]:.1f} | {run[1]:.0f} | {run[2]:.1f} | {name} | "
                               f"{tokens:,} | {tokens / sp_tokens:.4f} | {ll / n_bytes:.4f} | "
                               f"{ll / sp_ll:.4f} |")
                    print(out[-1], file=sys.stderr, flush=True)
        sizes = sorted(int(s) for s in a.sizes.split(","))
        if len(sizes) > 1:
            out += ["", "One pruning run for every size (`train --vocab-size "
                    f"{','.join(map(str, sizes))}`) against a run for each size alone, held-out tokens:", "",
                    "| size | run | CPU s | peak RSS MB | held-out text | tokens | vs the lone run |",
                    "|---|---|---:|---:|---|---:|---:|"]
            sweep = str(tmp_path / "sweep.rules")
            sweep_run = measured([sys.executable, "-m", "chunkpress.cli", "train", str(tmp_path / "train.txt"),
                                  "--learner", "unigram", "--pretokenizer", "metaspace", "--vocab-size",
                                  ",".join(map(str, sizes)), "--rules", sweep, "-q", "-f"])
            for size in sizes:
                for name, held in helds.items():
                    lines = held.decode("utf-8", "replace").split("\n")[:-1]
                    alone, _ = ours_held(str(tmp_path / f"ours{size}.rules"), lines)
                    swept, _ = ours_held(str(tmp_path / f"sweep.{size}.rules"), lines)
                    out.append(f"| {size:,} | one run for {len(sizes)} sizes | {sweep_run[0]:.1f} | "
                               f"{sweep_run[1]:.0f} | {name} | {swept:,} | {swept / alone:.4f} |")
                    print(out[-1], file=sys.stderr, flush=True)
        out += ["", "PathPiece and BPE, GPT-2's pre-tokens, held-out tokens:", "",
                "| size | vocabulary | segmenter | CPU s | peak RSS MB | held-out text | tokens | vs BPE merges |",
                "|---|---|---|---:|---:|---|---:|---:|"]
        for size in [int(s) for s in a.sizes.split(",")]:
            runs = {}
            for name, config in (("BPE", None), ("PathPiece, n-grams", "ngrams"), ("PathPiece, BPE", "bpe")):
                rules = str(tmp_path / f"{name[:4]}{config}{size}.rules")
                cmd = [sys.executable, "-m", "chunkpress.cli", "train", str(tmp_path / "train.txt"), "--pretokenizer",
                       "gpt2", "--vocab-size", str(size), "--rules", rules, "-q", "-f"]
                if config:
                    toml = tmp_path / f"{config}.toml"
                    toml.write_text(f'[learner]\nname = "pathpiece"\nparams = {{ initial = "{config}" }}\n')
                    cmd += ["--config", str(toml)]
                runs[name] = (rules, measured(cmd))
            for held_name, held in helds.items():
                base = None
                for name, (rules, run) in runs.items():
                    for segmenter in ("merges", "fewest-tokens") if name == "BPE" else ("fewest-tokens",):
                        tokens = chunkpress_tokens(rules, segmenter, held)
                        base = base or tokens
                        out.append(f"| {size:,} | {name} | {segmenter} | {run[0]:.1f} | {run[1]:.0f} | {held_name} | "
                                   f"{tokens:,} | {tokens / base:.4f} |")
                        print(out[-1], file=sys.stderr, flush=True)
    text = "\n".join(out) + "\n"
    (HERE / "unigram.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
