"""The Python examples of README.md and docs/GUIDE.md, run.

Each ```python block runs (exec) in a fresh directory made by
scripts/docs-fixture, the one the pages' console examples run in, plus
what the Python blocks name beyond it: a SHA256SUMS of site/, a copy
new/ of site/ with index.html edited, and zeros.img (20 MB of zeros).
A block followed (after blank lines) by a ```text block prints exactly
that text; its own asserts are the other checks. The
pages say the package runs on CPython 3.9+, so the blocks must too:
CI's interpreter may be newer, so the blocks are also parsed with 3.9's
grammar.
"""

import ast
import contextlib
import hashlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[3]
PAGES = ["README.md", "docs/GUIDE.md"]


def blocks():
    found = []
    for page in PAGES:
        path = TOP / page
        if not path.is_file():  # an sdist, without the repository around it
            continue
        text = path.read_text(encoding="utf-8")
        pattern = r"^```python\n(.*?)^```\n(?:\n*^```text\n(.*?)^```)?"
        for m in re.finditer(pattern, text, re.M | re.S):
            line = text.count("\n", 0, m.start()) + 1
            found.append(pytest.param(m.group(1), m.group(2), id=f"{page}:{line}"))
    return found


def fixture(tmp_path):
    work = tmp_path / "work"
    subprocess.run(["sh", str(TOP / "scripts/docs-fixture"), str(work)], check=True)
    with open(work / "SHA256SUMS", "w") as sums:
        for name in ["site/img/logo.png", "site/index.html", "site/style.css"]:
            digest = hashlib.sha256((work / name).read_bytes()).hexdigest()
            sums.write(f"{digest}  {name}\n")
    shutil.copytree(work / "site", work / "new")
    (work / "new/index.html").write_text("<h1>Hi</h1>\n")
    (work / "zeros.img").write_bytes(bytes(20_000_000))
    return work


@pytest.mark.skipif(not (TOP / "scripts/docs-fixture").is_file(), reason="not in a checkout")
@pytest.mark.parametrize("source,prints", blocks())
def test_the_pages_python_examples_run(source, prints, tmp_path, monkeypatch):
    tree = ast.parse(source, feature_version=(3, 9))
    for node in ast.walk(tree):  # 3.11+ only, whatever the grammar says
        if isinstance(node, ast.Attribute) and node.attr == "file_digest":
            assert not (isinstance(node.value, ast.Name) and node.value.id == "hashlib"), (
                "hashlib.file_digest is Python 3.11+; the package supports 3.9"
            )
    monkeypatch.chdir(fixture(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<example>", "exec"), {})
    if prints is not None:
        assert out.getvalue() == prints


def test_the_pages_have_python_examples():
    if not all((TOP / page).is_file() for page in PAGES):
        pytest.skip("not in a checkout: README.md and docs/GUIDE.md are not beside the package")
    assert len(blocks()) >= 2
