"""plugins and study: the installed plugins, and studies run and reported."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..plugin.registry import default_registry
from .options import Common, workers


def cmd_plugins(args: argparse.Namespace) -> int:
    registry = default_registry()
    print(json.dumps(registry.listing(), indent=2) if args.json else registry.listing_text())
    return 0


def cmd_study_run(args: argparse.Namespace) -> int:
    from ..study.runner import load_study, run_study  # deferred: matplotlib and the rows' code load for studies only

    quiet = Common.of(args).quiet
    study = load_study(args.study, data_root=args.data_root)
    out = args.out or str(Path(args.study).parent / "results")
    rows = run_study(study, out, rerun=args.rerun, workers=args.workers, scheduler=args.scheduler,
                     progress=None if quiet else sys.stderr)
    failed = sum(1 for r in rows if r["error"])
    if failed or not quiet:
        print(f"{len(rows)} rows, {failed} failed; results in {out}", file=sys.stderr)
    return 1 if failed else 0


def cmd_study_report(args: argparse.Namespace) -> int:
    from ..study.runner import report  # deferred: as above

    rows = report(args.results, args.out)
    if not Common.of(args).quiet:
        print(f"{len(rows)} rows from {len(args.results)} files; results in {args.out}", file=sys.stderr)
    return 0


def add_commands(add, common) -> None:
    p = add("plugins", help="list scorers, rewriters and coders")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_plugins)
    p = add("study", help="run a study (a grid of pipelines over datasets) or rebuild its results",
            description="'study run STUDY.toml' (or just 'study STUDY.toml') runs a study; "
                        "'study report RESULTS.jsonl... --out DIR' rebuilds tables and plots from rows.")
    study = p.add_subparsers(dest="study_command", required=True)
    p = study.add_parser("run", parents=[common], help="run a study file")
    p.add_argument("study", metavar="STUDY.toml", help="the study file")
    p.add_argument("--out", help="results folder (default: results/ beside the study file)")
    p.add_argument("--data-root", metavar="DIR",
                   help="look datasets up in DIR (default: $CHUNKPRESS_DATA_ROOT, else the study's data_root)")
    p.add_argument("--workers", type=workers, help="run rows in this many local worker processes (Dask)")
    p.add_argument("--scheduler", help="run rows on the Dask distributed scheduler at this address")
    p.add_argument("--rerun", action="store_true",
                   help="run every row again, even those already in results.jsonl for the same config, input and version")
    p.set_defaults(func=cmd_study_run)
    p = study.add_parser("report", parents=[common], help="rebuild tables and plots from results.jsonl files")
    p.add_argument("results", nargs="+", metavar="RESULTS.jsonl",
                   help="rows of one or more runs; each row once (a later file's replaces an earlier one's)")
    p.add_argument("--out", required=True, help="folder for the CSV, JSON lines, Markdown, LaTeX and plots")
    p.set_defaults(func=cmd_study_report)
