"""Plugins: built-ins through the same path as third-party ones, entry points, failures."""

import sys
import textwrap

import chunkpress
import numpy as np
import pytest
from chunkpress import PluginError
from chunkpress.pipeline import Pipeline
from chunkpress.plugin.registry import build_registry, builtin_plugins
from support import ROOT, decompress


def fake_distribution(tmp_path, name, entry_points: dict, modules: dict):
    """A ``*.dist-info`` with entry points plus module files, importable from tmp_path."""
    dist = tmp_path / f"{name}-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (dist / "entry_points.txt").write_text(f"[chunkpress]\n{lines}\n")
    for mod, source in modules.items():
        (tmp_path / f"{mod}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for mod in [m for m in sys.modules if m.startswith("cp_test_")]:
        del sys.modules[mod]


def test_builtins_are_registered(registry):
    assert set(registry.names("scorer")) >= {"mdl", "repair", "pmi", "spmi"}
    assert set(registry.names("rewriter")) >= {"scan", "linked"}
    assert set(registry.names("coder")) >= {"varint-zstd", "varint-zlib", "varint-lzma"}
    providers = {p for (_, _), p in registry.providers.items()}
    assert providers == {m.__name__ for m in builtin_plugins()}
    assert registry.failures == ()


def test_example_plugin_through_entry_point(on_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin-dice"))
    fake_distribution(on_path, "chunkpress_dice", {"dice": "chunkpress_dice"}, {})
    reg = build_registry(autoload=True)
    assert "dice" in reg.names("scorer")
    assert reg.providers[("scorer", "dice")].startswith("dice")
    cfg = on_path / "dice.toml"
    cfg.write_text("[scorer]\nname = 'dice'\nparams = { at_least = 3 }\n[limits]\nmax_rules = 50\n")
    pipe = Pipeline.from_config(cfg, registry=reg)
    data = (ROOT / "tests" / "data" / "udhr_arb.txt").read_bytes()
    result = pipe.fit(data)
    assert 0 < len(result.rules) <= 50
    assert (result.trace["k01"][:-1] >= 3).all()
    assert decompress(pipe.compress(data), reg) == data


@pytest.mark.parametrize("name", ["dice", "jaccard", "tscore"])
def test_third_party_scorers_pick_the_brute_force_best_pair(on_path, monkeypatch, name):
    """The example plugin's scorers, installed through an entry point and compiled into the
    engine's loop, pass the plugin authors' kit: the fused loop, the scan rewriter and a
    brute-force scan of all pairs merge the same pairs."""
    from chunkpress.testing import check_scorer

    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin-dice"))
    fake_distribution(on_path, "chunkpress_dice", {"dice": "chunkpress_dice"}, {})
    reg = build_registry(autoload=True)
    check_scorer(name, {"at_least": 3}, registry=reg, data=(ROOT / "tests" / "data" / "udhr_arb.txt").read_bytes())


def test_autoload_can_be_disabled(on_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin-dice"))
    fake_distribution(on_path, "chunkpress_dice", {"dice": "chunkpress_dice"}, {})
    monkeypatch.setenv("CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert "dice" not in build_registry().names("scorer")


def test_broken_plugin_is_reported_not_fatal(on_path):
    fake_distribution(
        on_path, "cp_broken", {"broken": "cp_test_broken", "raising": "cp_test_raising"},
        {
            "cp_test_broken": "raise ImportError('missing dependency foo')\n",
            "cp_test_raising": """
                import chunkpress
                @chunkpress.hookimpl
                def register_scorers():
                    raise RuntimeError('boom')
            """,
        },
    )
    reg = build_registry(autoload=True)
    errors = {f.plugin.split()[0]: f.error for f in reg.failures}
    assert "missing dependency foo" in errors["broken"]
    assert "boom" in errors["raising"]
    assert "mdl" in reg.names("scorer")


def test_duplicate_name_names_both_providers(on_path):
    fake_distribution(on_path, "cp_dup", {"dup": "cp_test_dup"}, {"cp_test_dup": """
        import chunkpress
        from chunkpress.plugins.scorers.repair import RepairScorer
        @chunkpress.hookimpl
        def register_scorers():
            return [chunkpress.ScorerInfo(name="mdl", factory=RepairScorer, summary="impostor")]
    """})
    reg = build_registry(autoload=True)  # not fatal: everything else stays usable
    assert "repair" in reg.names("scorer")
    with pytest.raises(PluginError) as err:
        reg.get("scorer", "mdl")
    assert "chunkpress.plugins.scorers" in str(err.value) and "dup" in str(err.value)
    assert any("'mdl' is provided more than once" in f.error for f in reg.failures)


def test_plugins_command_lists_a_conflict_and_other_commands_name_both(on_path, monkeypatch, capsys):
    """One duplicate third-party plugin: `chunkpress plugins` still lists what is installed and
    shows the conflict; a command that uses the name fails with both providers named."""
    from chunkpress.cli import main
    from chunkpress.plugin import registry as registry_module

    fake_distribution(on_path, "cp_dup2", {"dup2": "cp_test_dup2"}, {"cp_test_dup2": """
        import chunkpress
        from chunkpress.plugins.coders.combinatorial import CombinatorialCoder
        class Again(CombinatorialCoder):
            codec_id = "example.again.v1"
        @chunkpress.hookimpl
        def register_coders():
            return [chunkpress.CoderInfo(name="cm", factory=Again, summary="impostor", version="1")]
    """})
    monkeypatch.setattr(registry_module, "_default", None)
    monkeypatch.setenv("CHUNKPRESS_DISABLE_PLUGIN_AUTOLOAD", "0")
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "combinatorial" in out and "FAILED" in out and "'cm' is provided more than once" in out
    src = on_path / "in.txt"
    src.write_bytes(b"hello hello hello")
    assert main(["compress", str(src), "--coder", "cm", "-o", str(on_path / "x.cpz")]) == 3
    err = capsys.readouterr().err
    assert "chunkpress.plugins.coders" in err and "dup2" in err
    monkeypatch.setattr(registry_module, "_default", None)


def test_unknown_plugin_lists_available(registry):
    with pytest.raises(PluginError, match="unknown coder .gzip.; available: bwt-cm, chunk-cm, chunk-cm-v1, chunk-cm-v2, "
                       "chunk-cm-v3, chunk-cm-v4, chunk-cm-v5, cm, "
                       "combinatorial, raw-bz2, raw-lzma"):
        registry.get("coder", "gzip")


def test_misspelled_hook_is_caught():
    class Typo:
        @chunkpress.hookimpl
        def register_scorer(self):
            return []

    with pytest.raises(PluginError, match="unknown hook"):
        build_registry(extra_plugins=[Typo()], autoload=False)


def test_descriptors_validate_with_one_error_type():
    """Every field a plugin gets wrong is a PluginError naming the field."""
    with pytest.raises(PluginError, match="invalid name"):
        chunkpress.ScorerInfo(name="bad name!", factory=dict, summary="x")
    with pytest.raises(PluginError, match="factory must be callable"):
        chunkpress.ScorerInfo(name="ok", factory=3, summary="x")
    with pytest.raises(PluginError, match="summary must be a string"):
        chunkpress.ScorerInfo(name="ok", factory=dict, summary=3)
    with pytest.raises(PluginError, match="version must be a string"):
        chunkpress.CoderInfo(name="ok", factory=dict, summary="x", version=1, codec_id="a.b")
    with pytest.raises(PluginError, match="params must be an attrs class"):
        chunkpress.ScorerInfo(name="ok", factory=dict, summary="x", params=dict)


def test_packages_list_every_package():
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {v: k for k, v in conf["package-dir"].items()}
    for folder, package in dirs.items():
        assert (ROOT / folder / "__init__.py").exists()
        assert package in conf["packages"]
        for sub in (ROOT / folder).rglob("__init__.py"):
            rel = sub.parent.relative_to(ROOT / folder).parts
            assert ".".join((package, *rel)) in conf["packages"]


def _readme_block(marker: str) -> str:
    """The plugin guide's python code block that contains ``marker``."""
    text = (ROOT / "framework" / "plugin" / "GUIDE.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    return next(b for b in blocks if marker in b)


@pytest.fixture
def brotli_registry(on_path):
    pytest.importorskip("brotli")
    fake_distribution(on_path, "cp_test_brotli", {"brotli": "cp_test_brotli"},
                      {"cp_test_brotli": _readme_block("class VarintBrotli")})
    reg = build_registry(autoload=True)
    assert reg.failures == ()
    return reg


def test_readme_coder_installs_through_entry_points_and_round_trips(brotli_registry, tmp_path):
    """The plugin-authors example is one file; as a plugin it compresses, decompresses,
    describes itself (studies see its dictionary), and references an external dictionary."""
    from chunkpress.pipeline import decode_archive, inspect

    reg = brotli_registry
    assert reg.get("coder", "varint-brotli").codec_id == "example.varint-brotli.v1"
    data = (ROOT / "tests" / "data" / "alice29.txt").read_bytes()
    pipe = Pipeline.from_config(None, registry=reg, scorer="repair", coder="varint-brotli",
                                limits={"max_rules": 500})
    archive = pipe.compress(data)
    assert decompress(archive, reg) == data
    info = inspect(archive, reg)
    assert info["codec"] == "example.varint-brotli.v1" and info["rules"] == 500
    assert 500 < info["dictionary_bytes"] < info["payload_bytes"]
    fit = pipe.fit(data, trace=False)
    referenced = pipe.encode(fit.rules, fit.symbols, data, reference=True)
    assert len(referenced) < len(archive)
    assert decode_archive(referenced, reg, rules=fit.rules).data() == data


def test_a_plugin_decoder_cannot_allocate_past_the_memory_limit(brotli_registry, monkeypatch):
    """A crafted payload whose brotli frame expands to 256 MB, under a 64 MB limit: the
    command line's address-space cap stops the plugin's uncapped brotli.decompress with a
    FormatError (a library call checks before it allocates and never caps its process)."""
    import brotli
    from chunkpress.format import container
    from chunkpress.format.leb128 import encode_varints
    from chunkpress.plugins.coders.varint import split_model

    model, _ = split_model(np.zeros((0, 2), np.int64), np.arange(4))
    first = brotli.compress(model)
    payload = encode_varints([len(first)]) + first + brotli.compress(bytes(256 << 20), quality=1)
    header = container.Header(codec="example.varint-brotli.v1", params={"quality": 11}, length=4,
                              blake2b=container.checksum(b"abcd"), rules=None)
    from chunkpress.format.limits import address_space_cap

    monkeypatch.setenv("CHUNKPRESS_MAX_MEMORY", str(64 << 20))
    with address_space_cap(), pytest.raises(chunkpress.FormatError, match="more memory than the limit"):
        decompress(container.pack(header, payload), brotli_registry)


def test_a_factory_must_return_its_roles_base_class(on_path):
    fake_distribution(on_path, "cp_test_duck", {"duck": "cp_test_duck"}, {"cp_test_duck": """
        import chunkpress

        class Duck:  # encode/decode, but no chunkpress.Coder
            def __init__(self, params): pass

        @chunkpress.hookimpl
        def register_coders():
            return [chunkpress.CoderInfo(name="duck", codec_id="example.duck.v1", factory=Duck,
                                         summary="not a Coder", version="1")]
    """})
    reg = build_registry(autoload=True)
    with pytest.raises(PluginError, match="not a chunkpress.plugin.Coder subclass"):
        Pipeline.from_config(None, registry=reg, coder="duck").compress(b"some text")


def test_hookspec_scorer_example_runs_compiled():
    """The scorer example in the hook spec is real code: it compiles and merges."""
    import textwrap

    import chunkpress.plugin.hookspecs as hookspecs
    from chunkpress.engine.learner import fit
    from chunkpress.engine.stops import Limits
    from chunkpress.plugins.rewriters.linked import LinkedRewriter

    code = textwrap.dedent(hookspecs.register_scorers.__doc__.split("smoothed PMI::")[1].split("Expose the")[0])
    ns: dict = {}
    exec(code, ns)
    scorer = ns["SmoothedPmi"](ns["SmoothedParams"](alpha=0.5, at_least=3))
    result = fit((ROOT / "tests" / "data" / "udhr_arb.txt").read_bytes(), scorer, LinkedRewriter(),
                 Limits(max_rules=30))
    assert len(result.rules) == 30 and (result.trace["k01"][:-1] >= 3).all()


def test_hookspec_coder_and_rewriter_examples_work():
    """The coder and rewriter examples in the hook specs round-trip through the pipeline."""
    import textwrap
    import types

    import chunkpress.plugin.hookspecs as hookspecs

    module = types.ModuleType("cp_test_doc_examples")
    for hook, marker in [(hookspecs.register_coders, "baseline)::"), (hookspecs.register_rewriters, "one::")]:
        exec(textwrap.dedent(hook.__doc__.split(marker)[1]), module.__dict__)
    reg = build_registry(extra_plugins=[module], autoload=False)
    data = (ROOT / "tests" / "data" / "udhr_arb.txt").read_bytes()
    archive = Pipeline.from_config(None, registry=reg, scorer="repair", rewriter="loud-scan", coder="raw-u32",
                                   limits={"max_rules": 5}).compress(data)
    assert decompress(archive, reg) == data


def test_merges_is_a_concrete_segmenter_and_learner_the_framework_never_names(registry):
    """The merge replay and the merge engine are registered as concrete classes that say what
    they are (replays_merges, bottom_up); the framework reads those, never compares names."""
    import re

    from chunkpress.plugin import LEARNS_BY_MERGES, REPLAYS_MERGES, Learner, Segmenter

    segmenter = registry.get("segmenter", REPLAYS_MERGES).implementation()
    learner = registry.get("learner", LEARNS_BY_MERGES).implementation()
    assert segmenter is not Segmenter and issubclass(segmenter, Segmenter) and segmenter.replays_merges
    assert learner is not Learner and issubclass(learner, Learner) and learner.bottom_up
    assert not any(registry.get("segmenter", n).implementation().replays_merges
                   for n in registry.names("segmenter") if n != REPLAYS_MERGES)
    compared = re.compile(r"[!=]= *(REPLAYS_MERGES|LEARNS_BY_MERGES)|(REPLAYS_MERGES|LEARNS_BY_MERGES) *[!=]=")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "framework").rglob("*.py")
             for n, line in enumerate(p.read_text().splitlines(), 1) if compared.search(line)]
    assert not found, found
