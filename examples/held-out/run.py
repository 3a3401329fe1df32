"""Learn on one corpus, measure on another: mdl rules of en_mix_1MB evaluated on alice29.

    .venv/bin/python examples/held-out/run.py [--corpus DIR]
    .venv/bin/chunkpress study examples/held-out/study.toml

The script learns mdl rules on en_mix_1MB (saved as en_mix_1MB.rules beside this file), records
the code length of alice29 under the first r rules for every r (held-out curve), and plots the
compression factor of both against the dictionary size (curves.png), with a summary in
held-out.md. The study then compresses alice29 and the UDHR texts with that dictionary, next to
a dictionary learned on each text itself.
"""

import argparse
from pathlib import Path

import numpy as np
from chunkpress.format.rulesfile import dump_rules
from chunkpress.pipeline import Pipeline
from chunkpress.study.plots import plot_factor_vs_size
from chunkpress.text.tokenizer import Tokenizer

HERE = Path(__file__).parent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(HERE.resolve().parent / "data"))
    args = parser.parse_args()
    train = (Path(args.corpus) / "en_mix_1MB.txt").read_bytes()
    alice = (HERE.parents[1] / "tests" / "data" / "alice29.txt").read_bytes()
    pipe = Pipeline.from_config(scorer="mdl")
    result = pipe.fit(train)
    (HERE / "en_mix_1MB.rules").write_bytes(dump_rules(result.rules, {"config": pipe.config.to_dict(),
                                                                     "learned_from": "en_mix_1MB.txt"}))
    curve = Tokenizer(result.rules).code_length_curve(alice)
    own = pipe.fit(alice).trace
    plot_factor_vs_size(
        {"en_mix_1MB (training)": (result.trace, len(train)), "alice29 (held out)": (curve, len(alice)),
         "alice29, own mdl dictionary": (own, len(alice))},
        HERE / "curves.png", "mdl rules learned on en_mix_1MB, measured on alice29",
    )
    best = int(np.argmin(curve["total_bits"]))
    lines = [
        f"- Training: {len(result.rules):,} mdl rules on en_mix_1MB, final {int(result.trace['total_bits'][-1]):,} bits "
        f"(factor {8 * len(train) / result.trace['total_bits'][-1]:.4f}).",
        f"- alice29 under those rules: {int(curve['total_bits'][0]):,} bits with none, lowest {int(curve['total_bits'][best]):,} "
        f"bits at m = {int(curve['m'][best]):,} (factor {8 * len(alice) / curve['total_bits'][best]:.4f}), "
        f"{int(curve['total_bits'][-1]):,} bits with all (factor {8 * len(alice) / curve['total_bits'][-1]:.4f}).",
        f"- alice29 with its own mdl dictionary: {int(own['total_bits'][-1]):,} bits at m = {int(own['m'][-1]):,} "
        f"(factor {8 * len(alice) / own['total_bits'][-1]:.4f}).",
    ]
    (HERE / "held-out.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
