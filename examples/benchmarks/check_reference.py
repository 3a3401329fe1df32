"""Compare a chunkpress run with a reference-program CSV, row by row.

    .venv/bin/python examples/benchmarks/check_reference.py ../shared/corpus/en_mix_1MB.txt \
        ../shared/reference/en_mix_1MB.mdl.csv [--scorer mdl] [--rewriter linked]

Runs the scorer on the text (for non-mdl scorers up to the reference's last m), then reports the
first differing row (if any), the number of identical leading rules, and the final dictionary
size and total against the reference's.
"""

from __future__ import annotations

import argparse
import sys
import time

from chunkpress.pipeline import Pipeline
from chunkpress.study.traceio import read_trace_csv

COLUMNS = ["m", "total_bits", "m_bits", "rules_bits", "n_bits", "counts_bits", "string_bits", "s0", "s1", "k01"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("text")
    parser.add_argument("reference")
    parser.add_argument("--scorer", default="mdl")
    parser.add_argument("--rewriter", default="linked")
    args = parser.parse_args()
    ref = read_trace_csv(args.reference)
    limits = {} if args.scorer == "mdl" else {"max_rules": int(ref["m"][-1]) - 256}
    pipe = Pipeline.from_config(scorer=args.scorer, rewriter=args.rewriter, limits=limits)
    data = open(args.text, "rb").read()
    t = time.perf_counter()
    ours = pipe.fit(data).trace
    seconds = time.perf_counter() - t
    n = min(len(ours), len(ref))
    same_rules = n
    first_diff = None
    for i in range(n):
        if ours["s0"][i] != ref["s0"][i] or ours["s1"][i] != ref["s1"][i]:
            same_rules = i
            break
    for i in range(n):
        bad = [c for c in COLUMNS if ours[c][i] != ref[c][i]]
        if abs(ours["loss"][i] - ref["loss"][i]) > 0.005 + 1e-9:
            bad.append("loss")
        if bad:
            first_diff = (i, bad)
            break
    print(f"{args.scorer} on {args.text}: {len(ours):,} rows (reference {len(ref):,}), {seconds:.1f} s")
    print(f"identical leading rules: {same_rules:,}")
    print("first differing row:", "none" if first_diff is None and len(ours) == len(ref) else first_diff)
    fm, ft, rm, rt = int(ours["m"][-1]), int(ours["total_bits"][-1]), int(ref["m"][-1]), int(ref["total_bits"][-1])
    print(f"final m {fm:,} vs {rm:,} ({100 * (fm - rm) / rm:+.4f}%), final total {ft:,} vs {rt:,} ({100 * (ft - rt) / rt:+.4f}%)")
    return 0 if first_diff is None and len(ours) == len(ref) else 1


if __name__ == "__main__":
    sys.exit(main())
