"""The first 30 rules of each scorer side by side, as strings (as the paper shows them), with
the final dictionary size and code length. Run from the project root:

    .venv/bin/python examples/scorers/first_rules.py [--corpus DIR]

Writes examples/scorers/rules.md.
"""

import argparse
from pathlib import Path

from chunkpress.format.expand import expand
from chunkpress.pipeline import Pipeline

HERE = Path(__file__).parent
SCORERS = ["mdl", "repair", "spmi", "pmi"]


def show(chunk: bytes) -> str:
    text = chunk.decode("utf-8", errors="replace").replace("\r", "\\r").replace("\n", "\\n")
    return "`" + text.replace("|", "\\|").replace("`", "'").replace(" ", "␣") + "`"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=str(HERE.resolve().parent / "data"))
    args = parser.parse_args()
    out = []
    for name, path in (("alice29.txt", HERE.parents[1] / "tests" / "data" / "alice29.txt"),
                       ("en_mix_1MB.txt", Path(args.corpus) / "en_mix_1MB.txt")):
        data = path.read_bytes()
        runs = {}
        for scorer in SCORERS:
            limits = {} if scorer == "mdl" else {"max_rules": 2744}
            runs[scorer] = Pipeline.from_config(scorer=scorer, limits=limits).fit(data)
        out.append(f"### {name}\n")
        out.append("| # | " + " | ".join(SCORERS) + " |")
        out.append("|---|" + "---|" * len(SCORERS))
        for i in range(30):
            cells = [show(expand(runs[s].rules, [256 + i])) if i < len(runs[s].rules) else "" for s in SCORERS]
            out.append(f"| {i + 1} | " + " | ".join(cells) + " |")
        out.append("| final m | " + " | ".join(f"{int(runs[s].trace['m'][-1]):,}" for s in SCORERS) + " |")
        finals = (f"{int(runs[s].trace['total_bits'][-1]):,}" for s in SCORERS)
        out.append("| final code length (bits) | " + " | ".join(finals) + " |")
        out.append("")
    (HERE / "rules.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
