"""What a study publishes: timings without compile time, the OS's peak memory per row, the
machine, configs never averaged together, data found through --data-root, and the tables and
plots a paper takes."""

import json
import mmap
import os
import signal
import time

import chunkpress
import pytest
from chunkpress.cli import main
from chunkpress.plugin.registry import build_registry
from chunkpress.study.runner import WARM_UP_BYTES, load_study, report, run_study
from support import DATA

#: what each test coder's first call in a process costs, as a kernel's compilation does
COMPILE_SECONDS = 1.5
_compiled: set = set()


def _first_call_compiles(what: str) -> None:
    if what not in _compiled:
        time.sleep(COMPILE_SECONDS)
        _compiled.add(what)


class _TestCoders:
    """Coders with a property to observe, built on raw-zlib: one that "compiles" on its first
    call, one that maps 300 MB, one whose process dies, all on a full dataset only (not on the
    warm-up's sample)."""

    @staticmethod
    @chunkpress.hookimpl
    def register_coders():
        base = build_registry(autoload=False).get("coder", "raw-zlib")
        zlib = base.implementation()

        class Compiling(zlib):
            codec_id = "test.compiling.v1"

            def encode(self, rules, symbols, **kw):
                _first_call_compiles("encode")
                return super().encode(rules, symbols, **kw)

            def decode(self, payload, **kw):
                _first_call_compiles("decode")
                return super().decode(payload, **kw)

        class Hungry(zlib):
            codec_id = "test.hungry.v1"

            def encode(self, rules, symbols, **kw):
                if len(symbols) > WARM_UP_BYTES:
                    pages = mmap.mmap(-1, 300 << 20)
                    for offset in range(0, 300 << 20, mmap.PAGESIZE):
                        pages[offset] = 1
                    pages.close()
                return super().encode(rules, symbols, **kw)

        class Dying(zlib):
            codec_id = "test.dying.v1"

            def encode(self, rules, symbols, **kw):
                if len(symbols) > WARM_UP_BYTES:
                    os.kill(os.getpid(), signal.SIGKILL)
                return super().encode(rules, symbols, **kw)

        return [chunkpress.CoderInfo(name=name, codec_id=cls.codec_id, factory=cls, params=base.params_class(),
                                     summary=name, version="1")
                for name, cls in (("compiling", Compiling), ("hungry", Hungry), ("dying", Dying))]


@pytest.fixture(scope="module")
def test_registry():
    return build_registry(extra_plugins=[_TestCoders], autoload=False)


def _study(tmp_path, coders, repeats=1, datasets=None) -> object:
    datasets = datasets or {"alice": DATA / "alice29.txt"}
    lines = [f"[study]\nname = 't'\nrepeats = {repeats}\n[datasets]"]
    lines += [f"{k} = '{v}'" for k, v in datasets.items()]
    lines += ["[base]\nlimits = { max_rules = 0 }", "[grid]", f"'coder.name' = {json.dumps(coders)}"]
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    return load_study(tmp_path / "s.toml")


def test_no_repeat_holds_the_first_call_s_compile_time(tmp_path, test_registry):
    """The first call of a coder in a process costs 1.5 s (as numba's compilation does); the
    warm-up pays it before any timing, so all three repeats time the coding alone."""
    _compiled.clear()
    rows = run_study(_study(tmp_path, ["compiling"], repeats=3), tmp_path / "out", test_registry, progress=None)
    assert [r["error"] for r in rows] == [""] * 3
    for column in ("encode_seconds", "decode_seconds"):
        times = [r[column] for r in rows]
        assert max(times) < COMPILE_SECONDS / 2, (column, times)
        assert max(times) <= 2 * min(times) + 0.05, (column, times)


def test_each_row_s_peak_memory_is_its_own_process_s(tmp_path, test_registry):
    """A coder that maps 300 MB outside Python's allocator shows it in its row's peak RSS, and
    the row after it starts from the driver's memory again."""
    rows = run_study(_study(tmp_path, ["hungry", "raw-zlib"]), tmp_path / "out", test_registry, progress=None)
    hungry, plain = (r["peak_rss_bytes"] for r in rows)
    assert hungry - plain > 250e6, (hungry, plain)


def test_a_row_whose_process_dies_is_an_error_row_and_the_study_goes_on(tmp_path, test_registry):
    rows = run_study(_study(tmp_path, ["dying", "raw-zlib"]), tmp_path / "out", test_registry, progress=None)
    assert "measuring process died (signal 9, SIGKILL)" in rows[0]["error"]
    assert rows[1]["error"] == "" and rows[1]["verified"] is True


def _row(**values) -> str:
    row = {"study": "s", "dataset": "alice", "variant": "bpe", "repeat": 0, "archive_bytes": 100, "factor": 2.0,
           "learn_seconds": 1.0, "encode_seconds": 0.1, "decode_seconds": 0.1, "error": "", "verified": True}
    row.update(values)
    return json.dumps(row) + "\n"


def test_a_report_never_averages_two_configs_under_one_variant_name(tmp_path):
    (tmp_path / "a.jsonl").write_text(_row(config_hash="1111aaaa2222bbbb", rules=1000, archive_bytes=500))
    (tmp_path / "b.jsonl").write_text(_row(config_hash="3333cccc4444dddd", rules=300, archive_bytes=700))
    rows = report([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], tmp_path / "out")
    assert len(rows) == 2
    md = (tmp_path / "out" / "results.md").read_text()
    assert "| alice | bpe #1111aaaa | 500 |" in md and "| alice | bpe #3333cccc | 700 |" in md
    assert "650" not in md and "600" not in md
    assert "bpe \\#1111aaaa" in (tmp_path / "out" / "results.tex").read_text()


def test_rows_of_an_older_version_are_read_with_real_types(tmp_path):
    """Numbers as text and objects as JSON text (how results were written before) are read
    as numbers and objects, and keep their identity for resuming."""
    old = {"study": "s", "dataset": "alice", "variant": "v", "repeat": "0", "header_bytes": "122",
           "archive_bytes": "900", "config": json.dumps({"coder": {"name": "cm"}}),
           "versions": json.dumps({"chunkpress": "0.1.0"}), "config_hash": "abcd", "error": "",
           "peak_memory_bytes": 5}
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
    (row,) = report([tmp_path / "old.jsonl"], tmp_path / "out")
    assert row["header_bytes"] == 122 and row["archive_bytes"] == 900 and row["repeat"] == 0
    assert row["config"] == {"coder": {"name": "cm"}} and row["versions"]["chunkpress"] == "0.1.0"
    written = json.loads((tmp_path / "out" / "results.jsonl").read_text())
    assert written["header_bytes"] == 122 and written["config"]["coder"]["name"] == "cm"


def test_styles_stay_distinct_for_any_number_of_variants():
    from chunkpress.study.plots import styles

    drawn = styles(250)
    assert len({(s.color, str(s.marker)) for s in drawn}) == 250
    assert len({(s.color, s.hatch) for s in drawn}) == 250


def test_a_factor_plot_of_twelve_variants_draws_twelve_different_bars(tmp_path):
    """examples/context-mixing's plot once drew two variants in the same blue."""
    pytest.importorskip("matplotlib")
    text = "".join(_row(variant=f"v{i}", config_hash=f"{i:016x}") for i in range(12))
    (tmp_path / "r.jsonl").write_text(text)
    report([tmp_path / "r.jsonl"], tmp_path / "out")
    svg = (tmp_path / "out" / "factor.svg").read_text()
    assert svg.count("<g id=\"patch_") >= 12
    fills = {part.split(";")[0] for part in svg.split("fill: ")[1:] if part.startswith("#")}
    assert len(fills) >= 10


def test_datasets_are_found_through_data_root_or_its_environment_variable(tmp_path, monkeypatch, capsys):
    study = tmp_path / "study.toml"
    study.write_text("[study]\nname = 'roots'\ndata_root = 'nowhere'\n[datasets]\narb = 'udhr_arb.txt'\n"
                     "[base]\ncoder = 'raw-zlib'\nlimits = { max_rules = 0 }\n")
    monkeypatch.delenv("CHUNKPRESS_DATA_ROOT", raising=False)
    assert main(["study", str(study), "--out", str(tmp_path / "a"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "dataset 'arb' not found" in err and "study.data_root" in err and len(err.splitlines()) == 1
    assert main(["study", "run", str(study), "--data-root", str(DATA), "--out", str(tmp_path / "b"), "-q"]) == 0
    monkeypatch.setenv("CHUNKPRESS_DATA_ROOT", str(DATA))
    assert main(["study", str(study), "--out", str(tmp_path / "c"), "-q"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "c" / "results.jsonl").read_text().splitlines()]
    assert rows[0]["input_blake2b"] and rows[0]["verified"] is True
    assert capsys.readouterr().err == ""
