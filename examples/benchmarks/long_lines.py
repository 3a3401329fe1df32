"""One long line, and one large model: the fifth hostile round's cases as whole processes.

Each case is a fresh ``chunkpress`` process as a user runs it (numba cache warm), timed three
times in turn with its peer where one exists; wall seconds are medians, peak RSS the largest.
The round's bounds are stated beside each row:

* ``train --learner pathpiece`` on one line of 10,000 and 40,000 random letters (metaspace
  pre-tokens: the line is one word): the larger at most 4x + 2 s of the smaller;
* ``train --learner mdl-prune`` on 1 MB of one byte: at most 60 s;
* ``encode`` with sentencepiece's BPE read by ``import-spm`` (the best-pair search) on 20,000
  and 200,000 letters: the larger at most 15x + 1 s of the smaller; sentencepiece itself on the
  same line beside it;
* ``import-spm`` of a model with a 7,999-byte piece (the longest sentencepiece loads): at most 5 s;
* ``import-spm`` of a model with 300,000 extra random pieces, each a rule for every prefix.

    .venv/bin/python examples/benchmarks/long_lines.py [--corpus DIR]

Writes examples/benchmarks/long_lines.md and prints it.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import random
import struct
import sys
import tempfile
from pathlib import Path

from processes import CHUNKPRESS, medians, run

HERE = Path(__file__).parent
REPEATS = 3
SPM_ENCODE = ("import sys, sentencepiece as s; p = s.SentencePieceProcessor(model_file=sys.argv[1]); "
              "p.encode(open(sys.argv[2], encoding='utf-8').read())")


def _field(number: int, wire: int, payload: bytes) -> bytes:
    def varint(value: int) -> bytes:
        out = bytearray()
        while True:
            out.append(value & 0x7F | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                return bytes(out)
    return varint(number << 3 | wire) + (varint(len(payload)) + payload if wire == 2 else payload)


def piece(text: str, score: float) -> bytes:
    """A ModelProto piece (repeated field 1 may come anywhere in the message), of type normal."""
    body = _field(1, 2, text.encode()) + _field(2, 5, struct.pack("<f", score)) + _field(3, 0, b"\x01")
    return _field(1, 2, body)


def letters(n: int, seed: int = 5) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(97, 123) for _ in range(n))


def case(commands: list[list[str]]) -> tuple[list[float], int]:
    """(median seconds of each command, the largest peak RSS in MB among them)."""
    peak = max(run(cmd)[1] for cmd in commands)  # one warm-up run each, which also gives the RSS
    return medians(commands, REPEATS), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="../shared/corpus")
    a = ap.parse_args()
    import sentencepiece as spm

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for n in (10_000, 40_000):
            (t / f"line{n}.txt").write_bytes(letters(n))
        (t / "one_byte.txt").write_bytes(b"a" * 1_000_000)
        train = [[*CHUNKPRESS, "train", str(t / f"line{n}.txt"), "--learner", "pathpiece", "--pretokenizer",
                  "metaspace", "--vocab-size", "300", "--rules", str(t / "p.rules"), "-q", "-f"] for n in (10_000, 40_000)]
        (small, large), peak = case(train)
        rows.append(("pathpiece, one line of 10,000 / 40,000 letters", f"{small:.2f} / {large:.2f}", peak,
                     f"≤ {4 * small + 2:.2f} s", large <= 4 * small + 2))
        (mdl,), peak = case([[*CHUNKPRESS, "train", str(t / "one_byte.txt"), "--learner", "mdl-prune", "--pretokenizer",
                              "metaspace", "--vocab-size", "300", "--rules", str(t / "m.rules"), "-q", "-f"]])
        rows.append(("mdl-prune, 1 MB of one byte", f"{mdl:.2f}", peak, "≤ 60 s", mdl <= 60))

        source = Path(a.corpus) / "alice29.txt"
        spm.SentencePieceTrainer.train(input=str(source), model_prefix=str(t / "bpe"), vocab_size=1000,
                                       model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
                                       remove_extra_whitespaces=False, minloglevel=2)
        run([*CHUNKPRESS, "import-spm", str(t / "bpe.model"), "-o", str(t / "bpe.rules"), "-q", "-f"])
        for n in (20_000, 200_000):
            (t / f"bp{n}.txt").write_bytes(letters(n, seed=7))
        ours = [[*CHUNKPRESS, "encode", str(t / f"bp{n}.txt"), "--rules", str(t / "bpe.rules"), "-o",
                 str(t / "ids.bin"), "-f", "-q"] for n in (20_000, 200_000)]
        theirs = [[sys.executable, "-c", SPM_ENCODE, str(t / "bpe.model"), str(t / f"bp{n}.txt")] for n in (20_000, 200_000)]
        (small, large, spm_small, spm_large), peak = case(ours + theirs)
        rows.append(("best-pair (import-spm BPE), 20,000 / 200,000 letters", f"{small:.2f} / {large:.2f}", peak,
                     f"≤ {15 * small + 1:.2f} s", large <= 15 * small + 1))
        rows.append(("sentencepiece BPE, the same lines (peer)", f"{spm_small:.2f} / {spm_large:.2f}", None, "", None))

        plain = (t / "bpe.model").read_bytes()
        (t / "long_piece.model").write_bytes(plain + piece("\u2581" + "ab" * 3998, -30.0))  # 7,999 bytes
        (long_import,), peak = case([[*CHUNKPRESS, "import-spm", str(t / "long_piece.model"), "-o",
                                      str(t / "l.rules"), "-q", "-f"]])
        rows.append(("import-spm, a piece of 7,999 bytes", f"{long_import:.2f}", peak, "≤ 5 s", long_import <= 5))
        rng = random.Random(1)
        words = sorted({"\u2581Q" + "".join(chr(rng.randrange(97, 123)) for _ in range(rng.randint(3, 13)))
                        for _ in range(300_000)})
        (t / "many.model").write_bytes(plain + b"".join(piece(w, -12.0) for w in words))
        (many,), peak = case([[*CHUNKPRESS, "import-spm", str(t / "many.model"), "-o", str(t / "many.rules"),
                               "-q", "-f"]])
        rows.append((f"import-spm, {len(words):,} extra random pieces", f"{many:.2f}", peak, "", None))

    lines = ["# One long line, and one large model", "",
             f"Written by `examples/benchmarks/long_lines.py` on {datetime.date.today()}; {platform.machine()}, "
             f"Python {platform.python_version()}. Whole processes, warm numba cache, median of {REPEATS} runs in "
             "turn; peak RSS the largest of a case's processes.", "",
             "| case | seconds | peak RSS MB | bound | within |", "|---|---:|---:|---|---|"]
    for name, seconds, peak, bound, ok in rows:
        lines.append(f"| {name} | {seconds} | {'' if peak is None else f'{peak:,}'} | {bound} | "
                     f"{'' if ok is None else 'yes' if ok else '**no**'} |")
    text = "\n".join(lines) + "\n"
    (HERE / "long_lines.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
