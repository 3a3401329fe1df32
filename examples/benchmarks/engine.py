"""Engine benchmark: whole learning runs timed against `xz -9` on the same file, in the same run.

Run from the project root (needs ../shared/corpus or --corpus):

    .venv/bin/python examples/benchmarks/engine.py [--corpus DIR] [--cases mdl-1MB,repair-10MB,...]
        [--repeats N] [--before DIR]

Every case runs in a fresh child process (so peak RSS is its own). Each child warms numba's
on-disk cache on a tiny input first, so timings exclude compilation (measured separately as
"cold start"). Times are medians of ``--repeats`` runs. ``--before DIR``: a folder holding an
older ``chunkpress`` package (e.g. a checkout's framework/ copied to DIR/chunkpress and its
plugins/ to DIR/chunkpress/plugins); each case then runs with it too, interleaved with the
current code, and the table gives both times and whether the results are identical. Writes
examples/benchmarks/engine.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
CASES = {
    # name: (file, pipeline overrides, compare-against)
    "mdl-1MB": ("en_mix_1MB.txt", {"scorer": "mdl"}, "xz"),
    "mdl-10MB": ("en_mix_10MB.txt", {"scorer": "mdl"}, "xz"),
    "repair-10MB": ("en_mix_10MB.txt", {"scorer": "repair"}, "xz"),
    "bpe-gpt2-32k-10MB": ("en_mix_10MB.txt",
                          {"scorer": "repair", "pretokenizer": "gpt2", "limits": {"max_rules": 32768 - 256}}, "hf"),
    "mdl-100MB": ("en_mix_100MB.txt", {"scorer": "mdl"}, "xz"),
}

CHILD = r"""
import json, sys, time
import chunkpress.pipeline as cp
path, overrides = sys.argv[1], json.loads(sys.argv[2])
pipe = cp.Pipeline.from_config(**overrides)
pipe.fit(b"warm up the compiled kernels " * 20, trace=False)
data = open(path, "rb").read()
t = time.perf_counter()
result = pipe.fit(data, trace=overrides.get("scorer") == "mdl")
seconds = time.perf_counter() - t
last = result.trace[-1] if len(result.trace) else None
print(json.dumps({"seconds": seconds, "rules": len(result.rules), "N": len(result.symbols),
                  "total_bits": int(last["total_bits"]) if last is not None else None}))
"""

HF_CHILD = r"""
import json, sys, time
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
path, vocab = sys.argv[1], int(sys.argv[2])
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
t = time.perf_counter()
tok.train([path], trainer)
print(json.dumps({"seconds": time.perf_counter() - t, "vocab": tok.get_vocab_size()}))
"""


def measure(cmd: list[str], package: str | None = None) -> tuple[dict | None, float, int, str]:
    """Run ``cmd`` and return its own peak RSS via wait4; ``package``: a folder put first on
    its PYTHONPATH (an older chunkpress)."""
    env = dict(os.environ, PYTHONPATH=package) if package else None
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    try:
        parsed = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        parsed = None
    return parsed, wall, usage.ru_maxrss // 1024, err.decode()[-400:]


def xz_seconds(path: Path) -> float:
    t = time.perf_counter()
    subprocess.run(["xz", "-9", "-k", "-c", "-T1", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[1] / "data"))
    parser.add_argument("--cases", default="mdl-1MB,repair-10MB,bpe-gpt2-32k-10MB,mdl-10MB")
    parser.add_argument("--out", default=str(HERE / "engine.md"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--before", help="a folder holding an older chunkpress package, timed in the same run")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    rows = []
    cold, cold_wall, _, _ = measure([sys.executable, "-c",
                                     "import chunkpress.pipeline as cp; cp.Pipeline.from_config().fit(b'abc abc abc')"])
    for name in args.cases.split(","):
        file, overrides, against = CASES[name]
        path = corpus / file
        xz = statistics.median(xz_seconds(path) for _ in range(args.repeats))
        child = [sys.executable, "-c", CHILD, str(path), json.dumps(overrides)]
        if args.before:
            measure(child[:3] + [str(corpus / "alice29.txt"), child[4]], args.before)  # its kernels compiled once
        runs, before = [], []
        for _ in range(args.repeats):  # interleaved: both see the same machine
            runs.append(measure(child))
            if args.before:
                before.append(measure(child, args.before))
        result, _, rss, err = runs[0]
        if result is None:
            rows.append(f"| {name} | failed: {err.strip().splitlines()[-1] if err.strip() else '?'} |||||||||")
            continue
        seconds = statistics.median(r[0]["seconds"] for r in runs)
        was = ""
        if before and all(b[0] for b in before):
            then = statistics.median(b[0]["seconds"] for b in before)
            same = all(b[0] | {"seconds": 0} == result | {"seconds": 0} for b in before)
            was = f"{then:.1f} s | {seconds / then:.2f} | {'yes' if same else 'NO'} | "
        elif args.before:
            was = "failed | | | "
        hf = ""
        if against == "hf":
            hf_result, _, hf_rss, hf_err = measure([sys.executable, "-c", HF_CHILD, str(path), "32768"])
            hf = f"{hf_result['seconds']:.1f} s ({hf_rss} MB)" if hf_result else "not installed"
        rows.append(
            f"| {name} | {seconds:.1f} s | {was}{xz:.1f} s | {seconds / xz:.2f} | {rss:,} MB "
            f"| {result['rules']:,} | {result['N']:,} | {result['total_bits'] or ''} | {hf} |"
        )
        print(rows[-1], flush=True)
    header = (
        f"Engine benchmark ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}; `xz -9 -T1` timed in the same run; medians of {args.repeats} runs"
        f"{'; before: ' + args.before + ', interleaved with the current code' if args.before else ''}).\n\n"
        f"| case | chunkpress | {'before | now / before | same result | ' if args.before else ''}xz -9 | ratio "
        "| peak RSS | rules | final N | final total bits | HF tokenizers train |\n"
        f"|---|---|{'---|---|---|' if args.before else ''}---|---|---|---|---|---|---|\n"
    )
    text = header + "\n".join(rows) + f"\n\nCold start (import + compile or load cached kernels + tiny fit): {cold_wall:.1f} s\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
