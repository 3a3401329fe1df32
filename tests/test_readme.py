"""The README's Python code blocks run as written, from a folder that sees the repository's
examples and test data (what they write lands there, not in the repository)."""

import pytest

from support import ROOT

BLOCKS = [b.split("```", 1)[0] for b in (ROOT / "README.md").read_text().split("```python\n")[1:]]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, monkeypatch, tmp_path):
    block = BLOCKS[index]
    for module in ("brotli", "numcodecs"):
        if f"import {module}" in block or f", {module}," in block:
            pytest.importorskip(module)
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, f"README.md python block {index}", "exec"), {"__name__": f"readme_block_{index}"})
