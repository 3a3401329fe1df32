"""Config files: TOML into frozen attrs classes, every mistake a ConfigError naming it."""

import pytest
from chunkpress import ConfigError, PluginError
from chunkpress.config import load_config, preset
from support import DATA


def write(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text)
    return p


def test_defaults(registry):
    cfg = load_config(None, registry)
    assert (cfg.scorer.name, cfg.rewriter.name, cfg.coder.name) == ("mdl", "linked", "combinatorial")
    assert cfg.pretokenizer == "none"
    assert cfg.limits.max_rules is None


def test_full_config(registry, tmp_path):
    cfg = load_config(write(tmp_path, """
[scorer]
name = "repair"
[rewriter]
name = "scan"
[coder]
name = "varint-zstd"
params = { level = 3 }
[limits]
max_rules = 10
min_count = 3
"""), registry)
    assert cfg.scorer.name == "repair" and cfg.coder.params.level == 3
    assert cfg.limits.max_rules == 10 and cfg.limits.min_count == 3
    assert cfg.to_dict()["coder"] == {"name": "varint-zstd", "params": {"level": 3, "order": "frequency"}}


@pytest.mark.parametrize(
    "text,needle",
    [
        ("[scorer]\nname = 'nope'", "unknown scorer 'nope'; available: length-max, mdl, pmi, repair, spmi, wordpiece"),
        ("[coder]\nname = 'varint-zstd'\nparams = { levle = 3 }",
         "unknown coder.params key 'levle' for 'varint-zstd'; allowed: level, order"),
        ("[coder]\nname = 'varint-zstd'\nparams = { level = 99 }", "bad coder.params for 'varint-zstd'"),
        ("[coder]\nname = 'varint-zstd'\nparams = { level = 'high' }", "bad coder.params"),
        ("[coder]\nname = 'chunk-cm'\nparams = { light = 'yes' }",
         "bad coder.params for 'chunk-cm': 'light' must be <class 'bool'> (got 'yes' that is a <class 'str'>)."),
        ("[limits]\nmax_rule = 3", "unknown key limits.'max_rule'; allowed: max_rules, min_count"),
        ("[limits]\nmin_count = 0", "bad [limits]"),
        ("[scorers]\nname = 'mdl'", "unknown section 'scorers'"),
        ("[scorer]\nnam = 'mdl'", "unknown key scorer.'nam'"),
        ("[scorer\n", "invalid TOML"),
    ],
)
def test_errors_name_the_problem(registry, tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(PluginError if "unknown scorer" in needle else ConfigError) as err:
        load_config(path, registry)
    assert needle in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_config_file(registry, tmp_path):
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "absent.toml", registry)


def test_overrides_replace_component_and_merge_limits(registry, tmp_path):
    path = write(tmp_path, "[coder]\nname = 'varint-zstd'\nparams = { level = 5 }\n[limits]\nmin_count = 2")
    cfg = load_config(path, registry, {"coder": "varint-zlib", "limits": {"max_rules": 7}})
    assert cfg.coder.name == "varint-zlib" and cfg.coder.params.level == 9
    assert cfg.limits.max_rules == 7 and cfg.limits.min_count == 2
    same = load_config(path, registry, {"coder": "varint-zstd"})
    assert same.coder.params.level == 5  # same name keeps its params


def test_a_config_that_is_not_utf8_or_has_scalar_limits_is_a_config_error(registry, tmp_path):
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"\xff\xfe[scorer]\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad, registry)
    with pytest.raises(ConfigError, match=r"\[limits\] must be a table"):
        load_config(write(tmp_path, "limits = 5"), registry, {"limits": {"max_rules": 5}})


def test_a_boolean_is_not_a_count(registry, tmp_path):
    with pytest.raises(ConfigError, match="bad \\[limits\\]"):
        load_config(write(tmp_path, "[limits]\nmax_rules = true"), registry)


def test_a_scorer_without_a_stop_rule_needs_a_limit(registry):
    """pmi alone would merge until every word is one symbol: refused up front, not run."""
    from chunkpress.pipeline import Pipeline

    with pytest.raises(ConfigError, match="'pmi' has no stop rule of its own"):
        Pipeline.from_config(None, registry, scorer="pmi").compress(b"some text, some text")
    for limits in ({"max_rules": 10}, {"min_count": 2}):
        assert Pipeline.from_config(None, registry, scorer="pmi", limits=limits).compress(b"some text, some text")


def test_levels_are_presets_and_nine_is_the_smallest_example(registry):
    """-1 ... -9 map to the level table's records; 9 is examples/context-mixing/best.toml."""
    from chunkpress.levels import LEVELS
    from support import ROOT

    assert sorted(LEVELS) == list(range(1, 10)) and all(LEVELS[n].number == n for n in LEVELS)
    assert load_config(None, registry, level=5).coder.name == "bwt-cm"
    assert load_config(None, registry, level=4).coder.name == "varint-lzma"
    assert load_config(None, registry, level=9) == load_config(ROOT / "examples" / "context-mixing" / "best.toml", registry)
    assert load_config(None, registry, {"coder": "varint-zlib"}, level=1).coder.name == "varint-zlib"
    for bad in (0, 10, True, "9"):
        with pytest.raises(ConfigError, match="levels are 1 to 9"):
            load_config(None, registry, level=bad)
    changed = preset(6)
    changed["coder"]["params"]["contexts"] = 1  # a caller's copy: the level stays as it was
    assert preset(6)["coder"]["params"]["contexts"] != 1


def test_no_level_compresses_at_the_default_level_and_a_config_file_stands_alone(registry):
    """chunkpress.compress and the CLI run DEFAULT_LEVEL without a level or config; a config
    file is taken as it is (its missing keys default to the paper's method, as before)."""
    import chunkpress
    from chunkpress.config import DEFAULT_LEVEL, compress_level
    from chunkpress.format.container import unpack
    from support import ROOT, read

    assert compress_level(None, None) == DEFAULT_LEVEL and compress_level("c.toml", None) is None
    assert compress_level(None, 2) == 2
    data = read("udhr_arb.txt")
    assert chunkpress.compress(data) == chunkpress.compress(data, level=DEFAULT_LEVEL)
    paper = chunkpress.compress(data, config=ROOT / "examples" / "paper" / "mdl.toml")
    assert unpack(paper)[0].codec == "chunkpress.combinatorial.v1"
    assert load_config(ROOT / "examples" / "paper" / "mdl.toml", registry) == load_config(None, registry)


def test_level_flags_on_the_command_line(tmp_path, capsys):
    from chunkpress.cli import main
    from support import read

    src = tmp_path / "in.txt"
    src.write_bytes(read("udhr_arb.txt"))
    sizes = {}
    for level in (1, 9):
        out = tmp_path / f"l{level}.cpz"
        assert main(["compress", f"-{level}", str(src), "-o", str(out)]) == 0
        sizes[level] = out.stat().st_size
        assert main(["decompress", str(out), "-o", str(tmp_path / f"l{level}.txt")]) == 0
        assert (tmp_path / f"l{level}.txt").read_bytes() == src.read_bytes()
    assert sizes[9] < sizes[1]


@pytest.mark.slow
def test_level_flags_as_zstd_and_xz_take_them(tmp_path):
    """The last level wins (-3 -9 is -9), --fast and --best name the ends, -10 is a one-line
    error that says which levels there are."""
    import subprocess
    import sys

    from chunkpress.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["compress", "-3", "-9", "x"]).level == 9 and parse(["compress", "-9", "-3", "x"]).level == 3
    assert parse(["compress", "--best", "x"]).level == 9 and parse(["compress", "--fast", "x"]).level == 1
    assert parse(["compress", "x"]).level is None
    for argv in (["compress", "-10", "x"], ["-19", "x"], ["-12", "x"], ["-q", "-3", "-22", "x"]):
        run = subprocess.run([sys.executable, "-m", "chunkpress.cli", *argv], capture_output=True, text=True)
        assert run.returncode == 2 and run.stderr.count("\n") == 1, argv  # zstd would take -19 as 19
        assert f"compression levels are -1 to -9 (--fast, --best), not {argv[-2]}" in run.stderr
    helped = subprocess.run([sys.executable, "-m", "chunkpress.cli", "--help"], capture_output=True, text=True)
    for flag in ("-d ", "-c ", "-t ", "-l ", "-r ", "-T ", "[-1..-9]"):
        assert flag in helped.stdout, flag


def test_every_policy_has_a_flag_and_any_param_a_setting(tmp_path):
    """--boundary, --deletion and --param ROLE.KEY=VALUE reach every policy and param a config
    can: the same rules file as the shortcuts (--superword-after, --picky) write, and a coder's
    param in the archive's header."""
    from chunkpress.cli import main
    from chunkpress.pipeline import inspect

    text = tmp_path / "t.txt"
    text.write_bytes((DATA / "alice29.txt").read_bytes()[:60_000])
    common = ["train", str(text), "--pretokenizer", "gpt2", "--vocab-size", "700", "-q"]
    for flags, shortcut in ((["--boundary", "superbpe", "--param", "boundary.after=300"], ["--superword-after", "556"]),
                            (["--deletion", "picky", "--param", "deletion.tau=0.6"], ["--picky", "0.6"])):
        assert main([*common, "--rules", str(tmp_path / "a.rules"), *flags]) == 0
        assert main([*common, "--rules", str(tmp_path / "b.rules"), *shortcut]) == 0
        assert (tmp_path / "a.rules").read_bytes() == (tmp_path / "b.rules").read_bytes()
        (tmp_path / "a.rules").unlink()
        (tmp_path / "b.rules").unlink()
    assert main(["compress", str(text), "--coder", "cm", "--param", "coder.memory=18", "-o", str(tmp_path / "t.cpz"),
                 "-q"]) == 0
    assert inspect((tmp_path / "t.cpz").read_bytes())["params"]["memory"] == 18


@pytest.mark.parametrize(("param", "says"), [("nope=3", "ROLE.KEY=VALUE"), ("coder.memory", "ROLE.KEY=VALUE"),
                                             ("coder.nope=3", "unknown coder.params key 'nope'"),
                                             ("pretokenizer.x=1", "ROLE one of")])
def test_a_param_that_is_no_setting_is_refused_in_one_line(tmp_path, capsys, param, says):
    from chunkpress.cli import main

    (tmp_path / "t.txt").write_bytes(b"some text to compress\n" * 50)
    assert main(["compress", str(tmp_path / "t.txt"), "--coder", "cm", "--param", param, "-o",
                 str(tmp_path / "t.cpz")]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "t.cpz").exists()
