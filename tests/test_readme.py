"""The docs' Python code blocks run as written (the README and every Markdown file beside the
code or the examples it documents), from a folder that sees the repository's examples and test
data (what they write lands there, not in the repository)."""

import pytest
from support import ROOT

DOCS = [ROOT / "README.md", *sorted(p for folder in ("framework", "plugins", "examples")
                                    for p in (ROOT / folder).rglob("*.md"))]
BLOCKS = [(doc, i, block.split("```", 1)[0]) for doc in DOCS
          for i, block in enumerate(doc.read_text().split("```python\n")[1:])]


@pytest.mark.parametrize("doc, index, block", BLOCKS, ids=[f"{d.relative_to(ROOT)}:{i}" for d, i, _ in BLOCKS])
def test_a_doc_s_python_block_runs(doc, index, block, monkeypatch, tmp_path):
    for module in ("brotli", "numcodecs"):
        if f"import {module}" in block or f", {module}," in block:
            pytest.importorskip(module)
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, f"{doc.relative_to(ROOT)} python block {index}", "exec"), {"__name__": f"doc_block_{index}"})


def test_every_doc_is_linked_from_the_readme_or_a_doc_it_links():
    """The README is the front page: every reference file can be reached from it."""
    import re

    seen, todo = {ROOT / "README.md"}, [ROOT / "README.md"]
    while todo:
        doc = todo.pop()
        for link in re.findall(r"\]\(([^)#]+\.md)\)", doc.read_text()):
            target = (doc.parent / link).resolve()
            if target.exists() and target not in seen:
                seen.add(target)
                todo.append(target)
    notes = {p.resolve() for p in DOCS if p.name in ("REFERENCE.md", "API.md", "FORMATS.md", "RELIABILITY.md",
                                                     "GUIDE.md", "TOKENIZERS.md", "FIGURES.md", "NOTES.md")}
    assert not notes - seen, sorted(str(p.relative_to(ROOT)) for p in notes - seen)
