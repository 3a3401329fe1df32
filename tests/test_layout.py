"""The layout shows the architecture: every module is reached by imports a reader can follow."""

import ast
from pathlib import Path

import pytest
from support import ROOT

#: the package-dir mapping of pyproject.toml
PACKAGE_DIRS = {"chunkpress.plugins": ROOT / "plugins", "chunkpress": ROOT / "framework"}


def module_name(path: Path) -> str:
    for package, folder in PACKAGE_DIRS.items():
        if folder in path.parents or path.parent == folder:
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            return ".".join([package, *parts])
    raise ValueError(path)


def module_file(name: str) -> Path | None:
    for package, folder in PACKAGE_DIRS.items():  # the longer prefix first
        if name == package or name.startswith(package + "."):
            rest = name[len(package):].lstrip(".").split(".") if name != package else []
            base = folder.joinpath(*rest)
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if candidate.is_file():
                    return candidate
            return None
    return None


def imports_of(path: Path, packages: bool = True) -> set[Path]:
    """Files of the chunkpress modules ``path`` imports (relative or absolute, at any depth),
    with ``packages`` the packages they are in too (Python imports them first). An import of
    chunkpress that resolves to no file fails the test."""
    tree = ast.parse(path.read_text())
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] + [f"{target}.{a.name}" for a in node.names]
        for name in names:
            if not (name == "chunkpress" or name.startswith("chunkpress.")):
                continue
            file = module_file(name)
            if file is None and name in names[:1]:
                raise AssertionError(f"{path.relative_to(ROOT)}: import of {name} resolves to no file")
            if file is not None:
                found.add(file)
                for parent in file.parents if packages else ():  # importing a module imports its packages
                    if parent == ROOT:
                        break
                    if (parent / "__init__.py").is_file():
                        found.add(parent / "__init__.py")
    return found


def test_every_module_is_reached_from_the_package_or_the_cli():
    from chunkpress.plugin.registry import ROLES, build_registry

    modules = {p for folder in PACKAGE_DIRS.values() for p in folder.rglob("*.py")}
    from chunkpress.engine.ahead import HELPER

    # the package, the command line, the helper process it starts by name, the test kit that
    # plugin authors import on their own, and the modules that the built-in plugins'
    # descriptors name by reference
    registry = build_registry(autoload=False)
    named = {registry.get(role, name).module for role in ROLES for name in registry.names(role)}
    start = [ROOT / "framework" / "__init__.py", ROOT / "framework" / "cli" / "__main__.py", module_file(HELPER),
             ROOT / "framework" / "testing.py", *(module_file(name) for name in sorted(named))]
    seen, todo = set(start), list(start)
    while todo:
        for file in imports_of(todo.pop()):
            if file not in seen:
                seen.add(file)
                todo.append(file)
    missing = sorted(str(p.relative_to(ROOT)) for p in modules - seen)
    assert not missing, f"modules no import reaches: {missing}"


def _imports(path: Path):
    """(line, the module named, its names, relative level, function-local) of each import."""
    tree = ast.parse(path.read_text())
    local = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield node.lineno, node.module or "", [a.name for a in node.names], node.level, id(node) in local
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, [], 0, id(node) in local


def test_the_framework_imports_itself_relatively_and_plugins_use_the_plugin_api():
    """Readers and tools follow the framework's relative imports without knowing the
    package-dir mapping; built-in plugins import the framework as a third party does, through
    ``chunkpress.plugin`` alone (and each other relatively)."""
    wrong = []
    for path in (ROOT / "framework").rglob("*.py"):
        for line, module, _, level, _ in _imports(path):
            if not level and module.startswith("chunkpress"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module} absolutely")
    for path in (ROOT / "plugins").rglob("*.py"):
        depth = len(path.relative_to(ROOT / "plugins").parts) - 1  # a relative import may not leave plugins/
        for line, module, _, level, _ in _imports(path):
            if (level and level > depth) or (not level and module.startswith("chunkpress")
                                              and module != "chunkpress.plugin"):
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {'.' * level}{module}")
    assert not wrong, wrong


def _graph(function_local: bool = True) -> dict[Path, set[Path]]:
    modules = {p for folder in PACKAGE_DIRS.values() for p in folder.rglob("*.py")}
    return {p: {q for q in imports_of(p, packages=False) if q != p} for p in modules}


def test_no_module_imports_itself_through_others():
    """No circle in the import graph, function-local imports included."""
    graph = _graph()
    state: dict[Path, int] = {}
    circles = []

    def visit(node: Path, trail: list[Path]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(" -> ".join(str(p.relative_to(ROOT)) for p in trail[trail.index(nxt):] + [nxt]))
            elif not state.get(nxt):
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    assert not circles, circles


#: modules the lower floors (format, text, engine, plugin) must not import: the floors above
UPPER = ("framework/__init__.py", "framework/pipeline.py", "framework/blockmode.py", "framework/compressor.py",
         "framework/decompressor.py", "framework/streams.py", "framework/cli", "framework/study")


def test_the_lower_floors_do_not_import_the_upper_ones():
    wrong = []
    for floor in ("format", "text", "engine", "plugin"):
        for path in (ROOT / "framework" / floor).rglob("*.py"):
            for target in imports_of(path, packages=False):
                name = str(target.relative_to(ROOT))
                if any(name == up or name.startswith(up + "/") for up in UPPER):
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not wrong, wrong


def test_no_module_takes_another_module_s_private_name():
    wrong = []
    for folder in PACKAGE_DIRS.values():
        for path in folder.rglob("*.py"):
            for line, module, names, level, _ in _imports(path):
                for name in names:
                    if name.startswith("_") and not name.startswith("__"):
                        wrong.append(f"{path.relative_to(ROOT)}:{line} takes {name} from {'.' * level}{module}")
    assert not wrong, wrong


def test_a_function_local_import_says_why():
    """An import inside a function defers a heavy or optional dependency, and says which on its
    line or the line above; any other import belongs at the top of the module."""
    silent = []
    for folder in PACKAGE_DIRS.values():
        for path in folder.rglob("*.py"):
            lines = path.read_text().splitlines()
            for line, module, _, _, local in _imports(path):
                above = line - 2
                while above > 0 and lines[above].strip().startswith(("import ", "from ")) or not lines[above].strip():
                    above -= 1  # a run of imports (blank lines between) says it once, above the first
                said = "#" in lines[line - 1] or lines[above].strip().startswith("#")
                if local and not said:
                    silent.append(f"{path.relative_to(ROOT)}:{line} {module}")
    assert not silent, silent


def test_rooms_a_newcomer_can_live_in():
    """No module over 600 lines, the command line at most 800 in all, the README at most 400."""
    big = [f"{p.relative_to(ROOT)}: {n}" for folder in PACKAGE_DIRS.values() for p in folder.rglob("*.py")
           if (n := len(p.read_text().splitlines())) > 600]
    assert not big, big
    assert sum(len(p.read_text().splitlines()) for p in (ROOT / "framework" / "cli").glob("*.py")) <= 800
    assert len((ROOT / "README.md").read_text().splitlines()) <= 400


@pytest.mark.slow
def test_types_are_visible_to_mypy_after_the_readme_s_install(tmp_path):
    """A user's script type-checks against the installed package (py.typed): after the
    README's install (an editable install in setuptools' strict mode, which links the files
    into site-packages instead of hiding them behind an import hook) mypy finds chunkpress."""
    import subprocess
    import sys

    pytest.importorskip("mypy")
    script = "import chunkpress\nreveal_type(chunkpress.compress)\nchunkpress.compress(b'x', level='nine')\n"
    run = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "-c", script],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "Revealed type is \"def (data: bytes" in run.stdout, run.stdout + run.stderr
    assert 'Argument "level" to "compress" has incompatible type "str"' in run.stdout, run.stdout


def test_no_function_takes_more_than_16_parameters_or_runs_over_100_lines():
    """State passes as named records (numba takes named tuples), and long loops are split into
    named phases: a reader never meets 38 positional arrays or a 240-line kernel."""
    too_big = []
    for folder in PACKAGE_DIRS.values():
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = node.args
                    params = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
                    lines = node.end_lineno - node.lineno + 1
                    if params > 16 or lines > 100:
                        too_big.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({params} parameters, "
                                       f"{lines} lines)")
    assert not too_big, too_big
