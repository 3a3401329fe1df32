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


def imports_of(path: Path) -> set[Path]:
    """Files of the chunkpress modules ``path`` imports (relative or absolute, at any depth).
    An import of chunkpress that resolves to no file fails the test."""
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
                for parent in file.parents:  # importing a module imports its packages
                    if parent == ROOT:
                        break
                    if (parent / "__init__.py").is_file():
                        found.add(parent / "__init__.py")
    return found


def test_every_module_is_reached_from_the_package_or_the_cli():
    modules = {p for folder in PACKAGE_DIRS.values() for p in folder.rglob("*.py")}
    # the package, the command line, and the test kit that plugin authors import on their own
    start = [ROOT / "framework" / "__init__.py", ROOT / "framework" / "cli.py", ROOT / "framework" / "testing.py"]
    seen, todo = set(start), list(start)
    while todo:
        for file in imports_of(todo.pop()):
            if file not in seen:
                seen.add(file)
                todo.append(file)
    missing = sorted(str(p.relative_to(ROOT)) for p in modules - seen)
    assert not missing, f"modules no import reaches: {missing}"


def test_inside_the_package_imports_are_relative():
    """Readers and tools follow relative imports without knowing the package-dir mapping."""
    absolute = []
    for folder in PACKAGE_DIRS.values():
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("chunkpress"):
                    absolute.append(f"{path.relative_to(ROOT)}:{node.lineno}")
                if isinstance(node, ast.Import) and any(a.name.startswith("chunkpress") for a in node.names):
                    absolute.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not absolute, absolute


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
