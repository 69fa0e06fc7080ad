import os

import pytest


@pytest.fixture
def tree(tmp_path):
    """A small tree with odd names: returns (root, {relative bytes path: content})."""
    files = {
        b"a.txt": b"alpha\n",
        b"b/z": b"zzz" * 1000,
        b"b/empty": b"",
        b"c d/e'f$(x)": b"odd name\n",
        b"nonutf8-\xff\xfe": b"latin bytes\n",
        b"deep/1/2/3/f": bytes(range(256)) * 300,
        b"line\nbreak": b"newline in name\n",
    }
    root = os.fsencode(tmp_path)
    for rel, content in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)
    return tmp_path, files
