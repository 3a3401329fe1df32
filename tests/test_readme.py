"""The README's Python code blocks run as written, from the repository root."""

import pytest

from support import ROOT

BLOCKS = [b.split("```", 1)[0] for b in (ROOT / "README.md").read_text().split("```python\n")[1:]]


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, monkeypatch):
    block = BLOCKS[index]
    for module in ("brotli", "numcodecs"):
        if f"import {module}" in block or f", {module}," in block:
            pytest.importorskip(module)
    monkeypatch.chdir(ROOT)
    exec(compile(block, f"README.md python block {index}", "exec"), {"__name__": f"readme_block_{index}"})
