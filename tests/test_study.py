"""The study runner: a reduced study end to end, rows and files checked."""

import csv
import json

import pytest
from chunkpress import ConfigError
from chunkpress.cli import main
from chunkpress.study.runner import load_study, run_study
from support import DATA, ROOT

STUDY = f"""
[study]
name = "mini"
repeats = 2

[datasets]
arabic = "{DATA / 'udhr_arb.txt'}"
chinese = "{DATA / 'udhr_cmn_hans.txt'}"

[base]
scorer = "repair"
limits = {{ max_rules = 100 }}

[grid]
"coder.name" = ["combinatorial", "varint-zstd"]
"pretokenizer.name" = ["none", "gpt2"]

[[variants]]
name = "zstd alone"
"coder.name" = "raw-zstd"
"limits.max_rules" = 0
"""


def test_reduced_study_end_to_end(tmp_path, registry):
    path = tmp_path / "study.toml"
    path.write_text(STUDY)
    study = load_study(path)
    assert len(study.variants) == 5 and study.repeats == 2
    rows = run_study(study, tmp_path / "out", registry, progress=None)
    assert len(rows) == 2 * 5 * 2
    for name in ("results.csv", "results.jsonl", "results.md", "factor.png"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    with open(tmp_path / "out" / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 20
    good = table
    assert all(r["verified"] == "True" and not r["error"] for r in good)
    assert all(float(r["archive_bytes"]) == float(r["header_bytes"]) + float(r["payload_bytes"]) for r in good)
    assert all(0 < float(r["factor"]) and float(r["learn_seconds"]) >= 0 for r in good)
    # the OS's peak for the measuring process: at least the interpreter with numpy and numba
    assert all(int(r["peak_rss_bytes"]) > 20e6 for r in good)
    assert all(r["machine.cpu"] and r["versions.numba"] and r["config.scorer.name"] == "repair" for r in good)
    one = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert len(one["config_hash"]) == 16 and one["versions"]["chunkpress"]
    # real types: ints as ints, objects as objects
    assert all(type(one[c]) is int for c in ("archive_bytes", "header_bytes", "payload_bytes", "rules", "repeat"))
    assert one["config"]["limits"]["max_rules"] == 100 and one["versions"]["coder:combinatorial"]["distribution"]
    assert one["machine"]["python"].split()[-1].count(".") == 2 and one["machine"]["cores"] >= 1
    assert {r["variant"] for r in good} >= {"repair, combinatorial, gpt2", "zstd alone"}
    zstd = [r for r in good if r["variant"] == "zstd alone"]
    assert all(r["rules"] == "0" and float(r["dictionary_bytes"]) == 0 for r in zstd)
    # variants that differ only in their coder share one learned dictionary
    same_fit = [r for r in good if r["dataset"] == "arabic" and r["repeat"] == "0" and r["pretokenizer"] == "none"]
    assert len({r["learn_seconds"] for r in same_fit if r["rules"] != "0"}) == 1
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| arabic | zstd alone |" in md
    # two repeats: every time shows its median and (min–max)
    line = next(x for x in md.splitlines() if x.startswith("| arabic | zstd alone |"))
    assert line.count("–") == 3 and line.count("(") == 3
    tex = (tmp_path / "out" / "results.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex and "zstd alone" in tex
    archives, tokens = tex.split("\\end{table}")[:2]  # sizes and times, then the tokenizer metrics
    assert archives.count(" \\\\\n") == 11 and tokens.count(" \\\\\n") == 11 and "R\\'{e}nyi" in tokens
    for stem in ("factor", "size_time"):
        assert (tmp_path / "out" / f"{stem}.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
        assert (tmp_path / "out" / f"{stem}.pdf").read_bytes().startswith(b"%PDF")


def test_study_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[study]\nname = 'x'\nrepeat = 2\n[datasets]\na = 'a.txt'\n")
    with pytest.raises(ConfigError, match="unknown key study.'repeat'"):
        load_study(bad)
    bad.write_text("[study]\nname = 'x'\n")
    with pytest.raises(ConfigError, match="at least one entry in \\[datasets\\]"):
        load_study(bad)


def test_study_cli(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(f"[datasets]\nd = '{DATA / 'udhr_cmn_hans.txt'}'\n[grid]\n'scorer.name' = ['mdl', 'repair']\n")
    assert main(["study", str(path), "--out", str(tmp_path / "r")]) == 0
    assert "6 rows, 0 failed" in capsys.readouterr().err  # three repeats unless the study says
    assert (tmp_path / "r" / "results.md").exists()


def test_study_report_merges_results_from_several_machines(tmp_path, capsys):
    """Two halves of a grid run apart (as on two machines), plus a repeated row and a line cut
    short: `study report` rebuilds one table holding each row once."""
    import csv

    halves = []
    for i, scorers in enumerate((["mdl", "repair"], ["repair", "pmi"])):
        path = tmp_path / f"s{i}.toml"
        path.write_text(f"[datasets]\nd = '{DATA / 'udhr_cmn_hans.txt'}'\n[base.limits]\nmax_rules = 50\n"
                        f"[grid]\n'scorer.name' = {scorers!r}\n")
        assert main(["study", str(path), "--out", str(tmp_path / f"r{i}")]) == 0
        halves.append(tmp_path / f"r{i}" / "results.jsonl")
    with open(halves[1], "a") as f:
        f.write('{"dataset": "d", "vari')  # an interrupted run's last line
    assert main(["study", "report", *map(str, halves), "--out", str(tmp_path / "all")]) == 0
    assert "9 rows from 2 files" in capsys.readouterr().err  # three cells of three repeats
    with open(tmp_path / "all" / "results.csv") as f:
        table = list(csv.DictReader(f))
    assert sorted(r["scorer"] for r in table) == ["mdl"] * 3 + ["pmi"] * 3 + ["repair"] * 3
    assert (tmp_path / "all" / "results.md").read_text().split("Tokenizer metrics")[0].count("| d |") == 3
    assert main(["study", "report", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "x")]) == 5


def test_trace_plots(tmp_path, registry):
    from chunkpress.pipeline import Pipeline
    from chunkpress.study.plots import plot_factor_vs_size, plot_stacked_parts

    data = (DATA / "udhr_arb.txt").read_bytes()
    trace = Pipeline.from_config(registry=registry).fit(data).trace
    plot_stacked_parts(trace, tmp_path / "s.png", "udhr")
    plot_factor_vs_size({"udhr": (trace, len(data)), "half": (trace[: len(trace) // 2], len(data))}, tmp_path / "f.png")
    for name in ("s.png", "f.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_study_variant_reuses_a_rules_file(tmp_path, registry):
    from chunkpress.format.rulesfile import dump_rules
    from chunkpress.pipeline import Pipeline

    pipe = Pipeline.from_config(registry=registry, scorer="repair", limits={"max_rules": 300})
    result = pipe.fit((DATA / "alice29.txt").read_bytes())
    (tmp_path / "alice.rules").write_bytes(dump_rules(result.rules, {}))
    study = tmp_path / "s.toml"
    study.write_text(f"[datasets]\nzh = '{DATA / 'udhr_cmn_hans.txt'}'\n"
                     "[[variants]]\nname = 'alice dictionary'\nrules = 'alice.rules'\n")
    rows = run_study(load_study(study), tmp_path / "out", registry, progress=None)
    assert len(rows) == 3 and not rows[0]["error"] and rows[0]["verified"]
    assert rows[0]["rules"] == 300  # the archive carries the reused dictionary


def _count_calls(monkeypatch, owner, name, calls):
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)


@pytest.mark.parametrize("coder", ["combinatorial", "varint-zstd", "cm"])
def test_inspect_and_a_study_row_decode_each_archive_once(monkeypatch, registry, coder):
    """One unpack, one decode (and, for combinatorial, one encode: its canonical check) per
    archive, whether it is inspected or measured in a study row."""
    from chunkpress.format import container
    from chunkpress.pipeline import Pipeline, inspect
    from chunkpress.study.runner import measure

    data = (ROOT / "tests" / "data" / "udhr_arb.txt").read_bytes()
    params = {"memory": 18} if coder == "cm" else {}
    config = {"scorer": {"name": "repair"}, "coder": {"name": coder, "params": params}, "limits": {"max_rules": 200}}
    archive = Pipeline.from_config(None, registry=registry, scorer="repair", coder=config["coder"],
                                   limits={"max_rules": 200}).compress(data)
    cls = registry.get("coder", coder).implementation()
    calls: dict = {}
    _count_calls(monkeypatch, container, "unpack", calls)
    _count_calls(monkeypatch, cls, "decode", calls)
    _count_calls(monkeypatch, cls, "encode", calls)
    assert inspect(archive, registry)["rules"] == 200
    assert calls == {"unpack": 1, "decode": 1}
    calls.clear()
    from chunkpress.config import config_from_dict

    measured, _ = measure(config_from_dict(config, registry), None, data, registry)
    assert measured["verified"] is True and measured["dictionary_bytes"] > 0
    assert calls == {"unpack": 1, "decode": 1, "encode": 1}


def test_a_broken_variant_or_a_missing_dataset_stops_the_study_before_any_row(tmp_path, registry):
    from chunkpress import PluginError

    path = tmp_path / "study.toml"
    path.write_text(STUDY + '\n[[variants]]\nname = "broken"\n"coder.name" = "no-such-coder"\n')
    with pytest.raises(PluginError, match="variant 'broken'.*unknown coder 'no-such-coder'"):
        run_study(load_study(path), tmp_path / "out", registry, progress=None)
    path.write_text(STUDY.replace("udhr_cmn_hans.txt", "no_such_file.txt"))
    with pytest.raises(ConfigError, match="dataset 'chinese' not found"):
        run_study(load_study(path), tmp_path / "out", registry, progress=None)
    assert not (tmp_path / "out" / "results.jsonl").exists() or not (tmp_path / "out" / "results.jsonl").read_text()


def test_an_interrupted_study_resumes_with_the_missing_rows_only(tmp_path, registry, monkeypatch):
    """Rows are appended as they finish; after Ctrl-C a rerun runs only the rest, and the final
    tables hold every row once. --rerun runs everything again."""
    import io

    from chunkpress.study import runner

    path = tmp_path / "study.toml"
    path.write_text(STUDY)
    study = load_study(path)
    real = runner.run_variant
    calls = []

    def interrupted(*args, **kwargs):
        if len(calls) == 7:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_variant", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_study(study, tmp_path / "out", registry, progress=None)
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) == 7
    monkeypatch.setattr(runner, "run_variant", real)
    ran = []
    monkeypatch.setattr(runner, "run_variant", lambda *a, **k: ran.append(1) or real(*a, **k))
    log = io.StringIO()
    rows = run_study(study, tmp_path / "out", registry, progress=log)
    assert len(rows) == 20 and len(ran) == 13
    assert "7 of 20 rows were already in" in log.getvalue()
    with open(tmp_path / "out" / "results.csv") as fh:
        table = list(csv.DictReader(fh))
    keys = [(r["dataset"], r["variant"], r["repeat"]) for r in table]
    assert len(table) == 20 and len(set(keys)) == 20
    ran.clear()
    run_study(study, tmp_path / "out", registry, progress=None, rerun=True)
    assert len(ran) == 20


def test_a_study_with_failed_rows_exits_non_zero(tmp_path, capsys, monkeypatch):
    from chunkpress.study import runner

    path = tmp_path / "s.toml"
    path.write_text(f"[datasets]\nd = '{DATA / 'udhr_cmn_hans.txt'}'\n[grid]\n'scorer.name' = ['repair']\n")

    def failing(*args, **kwargs):
        row = {c: "" for c in runner.COLUMNS}
        row.update(dataset="d", variant="v", repeat=0, config_hash="x", error="FormatError: boom")
        return row

    monkeypatch.setattr(runner, "run_variant", failing)
    assert main(["study", str(path), "--out", str(tmp_path / "r")]) == 1
    assert "3 rows, 3 failed" in capsys.readouterr().err


@pytest.mark.slow
def test_a_study_on_two_dask_workers_resumes_and_matches(tmp_path, registry):
    """12 rows on 2 local Dask worker processes: every row verified and present once; a rerun
    after losing some rows runs only those."""
    pytest.importorskip("distributed")
    import io
    import json as _json

    path = tmp_path / "study.toml"
    path.write_text(STUDY.replace("repeats = 2", "repeats = 1").replace(
        '"pretokenizer.name" = ["none", "gpt2"]', '"pretokenizer.name" = ["none", "gpt2", "whitespace"]'))
    study = load_study(path)
    out = tmp_path / "out"
    rows = run_study(study, out, registry, progress=None, workers=2)
    assert len(rows) == 14 and all(r["verified"] is True and not r["error"] for r in rows)
    lines = (out / "results.jsonl").read_text().splitlines()
    (out / "results.jsonl").write_text("\n".join(lines[:9]) + "\n")  # as if interrupted after 9
    log = io.StringIO()
    again = run_study(study, out, registry, progress=log, workers=2)
    assert "9 of 14 rows were already in" in log.getvalue()
    keys = [(r["dataset"], r["variant"], r["repeat"]) for r in again]
    assert len(set(keys)) == 14
    final = [_json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(final) == 14 and len({(r["dataset"], r["variant"]) for r in final}) == 14


#: lines of a results.jsonl that are not rows, the last one cut short (no newline at the end)
_NOT_ROWS = [
    b"[1, 2, 3]", b'"a string"', b"42", b"null",              # not an object
    b"[" * 100_000 + b"]" * 100_000,                          # nested past reason
    b'{"dataset": "\xff\xfe"}',                               # not UTF-8
    b'{"dataset": 5, "variant": [], "repeat": "x"}',          # wrong types
    b'{"dataset": "arabic", "variant": "v", "repeat": 0, "config_hash": "h", "versions": "[1]"}',
    b'{"dataset": "arabic", "variant": "v", "repeat": 1e400, "config_hash": "h"}',
    b'{"dataset": "arabic", "variant": "v", "repeat": 0}',    # a column missing
    b'{"dataset": "arabic", "variant"',                       # cut short
]


def test_a_resume_over_lines_that_are_not_rows_keeps_them(tmp_path, registry, capsys):
    """A results.jsonl is data from elsewhere: a line that is not a row is skipped on resume
    (the study runs and exits 0) and by report, never a traceback; and it is never lost: it
    stays in the file, a warning names it, and results.unread.jsonl holds a copy. A line cut
    short (no newline at the end) is not joined to the next row."""
    path = tmp_path / "study.toml"
    path.write_text(STUDY.replace("repeats = 2", "repeats = 1").replace('"pretokenizer.name" = ["none", "gpt2"]',
                                                                        '"pretokenizer.name" = ["none"]'))
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_bytes(b"\n".join(_NOT_ROWS))
    assert main(["study", str(path), "--out", str(out), "-q"]) == 0
    assert "results.jsonl: lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ... are not a result row" in capsys.readouterr().err
    lines = (out / "results.jsonl").read_bytes().splitlines()
    n = len(_NOT_ROWS)
    assert lines[:n] == _NOT_ROWS and (out / "results.unread.jsonl").read_bytes() == b"\n".join(_NOT_ROWS) + b"\n"
    rows = [json.loads(x) for x in lines[n:]]
    assert len(rows) == 6 and all(r["verified"] is True for r in rows)
    assert main(["study", "report", str(out / "results.jsonl"), "--out", str(tmp_path / "merged")]) == 0
    assert main(["study", str(path), "--out", str(out), "-q"]) == 0  # resumed again: still there, once
    again = (out / "results.jsonl").read_bytes().splitlines()
    assert again[:n] == _NOT_ROWS and all(again.count(line) == 1 for line in _NOT_ROWS)
    assert len(again) == n + 6


_TEXT = b"some words, some more words\n" * 20
_BAD_STUDIES = {
    "study-not-a-table": 'study = 5\n[datasets]\na = "in.txt"\n',
    "study-name-not-a-string": '[study]\nname = 5\n[datasets]\na = "in.txt"\n',
    "study-datasets-not-a-table": 'datasets = ["in.txt"]\n',
    "study-dataset-not-a-path": '[datasets]\na = 5\n',
    "study-grid-not-a-table": 'grid = [1]\n[datasets]\na = "in.txt"\n',
    "study-variants-not-an-array": '[datasets]\na = "in.txt"\n[variants]\nname = "x"\n',
    "study-variants-not-tables": 'variants = [5]\n[datasets]\na = "in.txt"\n',
    "study-variant-name-not-a-string": '[datasets]\na = "in.txt"\n[[variants]]\nname = 5\n',
    "study-base-not-a-table": 'base = 5\n[datasets]\na = "in.txt"\n',
}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("chunkpress: error: "), err
    return err[0]


@pytest.mark.parametrize("name", sorted(_BAD_STUDIES))
def test_a_study_file_of_the_wrong_types_is_a_config_error(tmp_path, capsys, name):
    (tmp_path / "in.txt").write_bytes(_TEXT)
    (tmp_path / "s.toml").write_text(_BAD_STUDIES[name])
    assert main(["study", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")]) == 2
    _one_line_error(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("line", [
    b'{"dataset": "a", "variant"', b"[1, 2, 3]", b"[" * 100_000 + b"]" * 100_000, b'{"dataset": "\xff\xfe"}',
    b'{"dataset": 5, "variant": [], "repeat": "x"}',
    b'{"dataset": "a", "variant": "v", "repeat": 0, "config_hash": "h", "versions": "[1]"}',
])
def test_a_report_of_lines_that_are_not_rows_says_so_in_one_line(tmp_path, capsys, line):
    (tmp_path / "r.jsonl").write_bytes(line + b"\n")
    assert main(["study", "report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "out")]) == 5
    assert "no result rows" in _one_line_error(capsys)


def test_out_naming_a_file_is_an_input_error(tmp_path, capsys):
    row = json.dumps({"dataset": "a", "variant": "v", "repeat": 0, "config_hash": "h", "factor": 2.0, "error": "",
                      "archive_bytes": 10})
    (tmp_path / "r.jsonl").write_text(row + "\n")
    (tmp_path / "outfile").write_bytes(b"x")
    assert main(["study", "report", str(tmp_path / "r.jsonl"), "--out", str(tmp_path / "outfile")]) == 5
    assert "it is a file" in _one_line_error(capsys)
    (tmp_path / "in.txt").write_bytes(_TEXT)
    (tmp_path / "s.toml").write_text('[datasets]\na = "in.txt"\n[base]\nscorer = "repair"\nlimits = { max_rules = 5 }\n')
    assert main(["study", str(tmp_path / "s.toml"), "--out", str(tmp_path / "outfile")]) == 5
    assert "it is a file" in _one_line_error(capsys)
    assert (tmp_path / "outfile").read_bytes() == b"x"


def test_the_held_out_example_s_committed_results_are_what_the_code_makes_now(registry):
    """examples/held-out commits its results: its cheapest rows, measured again by the code as
    it stands, give the committed sizes and tokens, and the metrics table says which text each
    dictionary was learned from (the reused one's, not the row's dataset)."""
    from chunkpress.study.rows import read_rows
    from chunkpress.study.runner import measure, trained_on, variant_config

    example = ROOT / "examples" / "held-out"
    study = load_study(example / "study.toml")
    committed = {(row["dataset"], row["variant"]): row for _, row in read_rows(example / "results" / "results.jsonl")}
    data = (DATA / "udhr_arb.txt").read_bytes()
    for variant in study.variants:
        config, rules_path = variant_config(variant, registry, where=variant.name)
        row, _ = measure(config, rules_path, data, registry)
        kept = committed[("udhr_arb", variant.name)]
        assert (row["archive_bytes"], row["tokens"]) == (kept["archive_bytes"], kept["tokens"]), variant.name
        assert kept["trained_on"] == trained_on(rules_path, "udhr_arb")
    table = (example / "results" / "results.md").read_text()
    assert "| alice29 | en_mix_1MB.txt | en_mix_1MB mdl dictionary |" in table


@pytest.mark.slow
def test_the_latex_tables_are_ascii_and_compile_with_plain_pdflatex(tmp_path, registry):
    """Rényi's alpha, accented names and dashes are written as macros: the .tex is ASCII, which
    pdflatex reads with no package but booktabs (run where pdflatex is installed). Bold marks
    a best value only where a column has one and a group has more than one value."""
    import shutil
    import subprocess

    from chunkpress.study.tables import latex_table

    rows = []
    for variant, tokens, used in (("a", 100, 40), ("b", 90, 50)):
        rows.append({"dataset": "Rényi – naïve", "variant": variant, "config_hash": variant, "repeat": 0,
                     "error": "", "archive_bytes": tokens * 3, "bits_per_byte": 2.0, "tokens": tokens,
                     "bytes_per_token": 3.0 + tokens / 100, "vocab_used": used, "learn_seconds": 0.1,
                     "encode_seconds": 0.1, "decode_seconds": 0.1, "peak_rss_bytes": 10**8})
    tex = latex_table(rows, "Study μ")
    assert tex.isascii() and r"$\alpha$" in tex and r"R\'{e}nyi" in tex and r"na\"{i}ve" in tex
    assert r"\textbf{90}" in tex and r"\textbf{40}" not in tex and r"\textbf{50}" not in tex  # tokens used: no best
    alone = latex_table(rows[:1], "one variant")
    assert r"\textbf" not in alone
    if shutil.which("pdflatex") is None:
        return
    (tmp_path / "t.tex").write_text(tex)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}"
                                      "\\input{t.tex}\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
