"""chunk-cm's payload at -9's dictionary, file by file: how chunk-cm's model variants were compared
(examples/chunk-cm/NOTES.md). The dictionary is learned once a file and kept (``--cache``), so
a run times and sizes the coder alone, in this process; whole-process times are levels.py's.

    .venv/bin/python examples/benchmarks/chunk_cm_payloads.py FILE ... [--label L] [--save-base]

Prints each file's payload bytes, its change against the saved baseline (``--save-base`` stores
this run's as the baseline) and the coder's seconds, then the geomean of the changes. After
editing the model, run with a fresh ``NUMBA_CACHE_DIR``: numba keys its cache by the kernel's
own file, not by the constants it imports.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from chunkpress.pipeline import Pipeline


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--label", default="run")
    ap.add_argument("--cache", default="/tmp/chunk_cm_payloads")
    ap.add_argument("--save-base", action="store_true")
    args = ap.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    base_file = cache / "base.json"
    base = json.loads(base_file.read_text()) if base_file.exists() else {}
    pipe = Pipeline.from_config(level=9)
    coder = pipe.build_coder()
    logs, results = [], {}
    for f in map(Path, args.files):
        fitted = cache / f"{f.name}.npz"
        if not fitted.exists():
            result = pipe.fit(f.read_bytes(), trace=False)
            np.savez(fitted, rules=result.rules, symbols=result.symbols)
        z = np.load(fitted)
        t = time.perf_counter()
        size = len(coder.encode(z["rules"], z["symbols"]))
        seconds = time.perf_counter() - t
        results[f.name] = size
        was = base.get(f.name, size)
        logs.append(np.log(size / was))
        print(f"{f.name[:24]:24s} {size:11,d} {100 * (size / was - 1):+8.3f}% {seconds:7.2f} s")
    print(f"{args.label}: geomean {100 * (np.exp(np.mean(logs)) - 1):+.3f}%")
    if args.save_base:
        base_file.write_text(json.dumps({**base, **results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
