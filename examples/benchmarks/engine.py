"""Engine benchmark: whole learning runs timed against `xz -9` on the same file, in the same run.

Run from the project root (needs ../shared/corpus or --corpus):

    .venv/bin/python examples/benchmarks/engine.py [--corpus DIR] [--cases mdl-1MB,repair-10MB,...]

Every case runs in a fresh child process (so peak RSS is its own). Each child warms numba's
on-disk cache on a tiny input first, so timings exclude compilation (measured separately as
"cold start"). Writes examples/benchmarks/engine.md and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def measure(cmd: list[str]) -> tuple[dict | None, float, int, str]:
    """Run ``cmd`` and return its own peak RSS via wait4."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
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
    args = parser.parse_args()
    corpus = Path(args.corpus)
    rows = []
    cold, cold_wall, _, _ = measure([sys.executable, "-c",
                                     "import chunkpress.pipeline as cp; cp.Pipeline.from_config().fit(b'abc abc abc')"])
    for name in args.cases.split(","):
        file, overrides, against = CASES[name]
        path = corpus / file
        xz = xz_seconds(path)
        result, wall, rss, err = measure([sys.executable, "-c", CHILD, str(path), json.dumps(overrides)])
        if result is None:
            rows.append(f"| {name} | failed: {err.strip().splitlines()[-1] if err.strip() else '?'} |||||||")
            continue
        hf = ""
        if against == "hf":
            hf_result, _, hf_rss, hf_err = measure([sys.executable, "-c", HF_CHILD, str(path), "32768"])
            hf = f"{hf_result['seconds']:.1f} s ({hf_rss} MB)" if hf_result else "not installed"
        rows.append(
            f"| {name} | {result['seconds']:.1f} s | {xz:.1f} s | {result['seconds'] / xz:.2f} | {rss:,} MB "
            f"| {result['rules']:,} | {result['N']:,} | {result['total_bits'] or ''} | {hf} |"
        )
        print(rows[-1], flush=True)
    header = (
        f"Engine benchmark ({platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}; `xz -9 -T1` timed in the same run).\n\n"
        "| case | chunkpress | xz -9 | ratio | peak RSS | rules | final N | final total bits | HF tokenizers train |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
    )
    text = header + "\n".join(rows) + f"\n\nCold start (import + compile or load cached kernels + tiny fit): {cold_wall:.1f} s\n"
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
