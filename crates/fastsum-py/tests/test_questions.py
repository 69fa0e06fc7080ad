"""check, diff and dupes against oracles computed here with hashlib."""

import hashlib
import os
import shutil
from collections import defaultdict

import pytest

import fastsum


def write(root, rel, content):
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def test_check_reports_ok_failed_and_missing_in_list_order(tree, tmp_path_factory):
    root, files = tree
    lines = []
    for rel, content in sorted(files.items()):
        if b"\n" in rel:
            continue  # md5sum escapes such names; the plain format is enough here
        lines.append(b"%s  %s\n" % (hashlib.sha256(content).hexdigest().encode(), rel))
    lines.append(b"%s  gone\n" % hashlib.sha256(b"").hexdigest().encode())
    manifest = tmp_path_factory.mktemp("m") / "SHA256SUMS"
    manifest.write_bytes(b"".join(lines))
    write(root, b"a.txt", b"changed\n")
    with pytest.raises(ValueError, match=r"need the algorithm argument \(sha256, blake3"):
        fastsum.check(manifest, root=root)  # 64 digits: sha256, blake3 or blake2b-256?
    crc = tmp_path_factory.mktemp("m") / "CRCS"
    crc.write_bytes(b"363a3020  a.txt\n")  # rhash --simple: 8 digits, xxh32 or crc32b?
    with pytest.raises(ValueError, match=r"algorithm argument \(xxh32 or crc32b\)"):
        fastsum.check(crc, root=root)
    results = fastsum.check(manifest, "sha256", root=root)
    status = {os.path.basename(os.fsencode(r.path)): r.status for r in results}
    assert status[b"a.txt"] == "failed"
    assert status[b"gone"] == "error"
    assert isinstance(results[-1].error, FileNotFoundError)
    assert all(s == "ok" for n, s in status.items() if n not in (b"a.txt", b"gone"))
    assert [r.ok for r in results].count(True) == len(results) - 2


def test_diff_between_two_trees_matches_an_oracle(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    for i in range(30):
        write(old, b"d%d/f%d" % (i % 3, i), b"content %d\n" % i)
    shutil.copytree(old, new)
    write(new, b"d0/f0", b"modified\n")                       # modified
    os.remove(os.path.join(new, "d1", "f1"))                 # removed
    write(new, b"added/x\xff", b"brand new\n")                # added, non-UTF-8
    os.rename(os.path.join(new, "d2", "f2"), os.path.join(new, "moved-f2"))  # moved
    got = sorted((c.kind, c.old_path and os.fsencode(c.old_path),
                  c.new_path and os.fsencode(c.new_path)) for c in fastsum.diff(old, new))
    # The oracle: relative paths and bytes of both sides, and their
    # directories (a directory one side lacks is added or removed, its
    # path ending in /).
    def side(root):
        out, dirs = {}, set()
        for dirpath, subdirs, names in os.walk(os.fsencode(root)):
            for n in names:
                p = os.path.join(dirpath, n)
                out[os.path.relpath(p, os.fsencode(root))] = open(p, "rb").read()
            for d in subdirs:
                dirs.add(os.path.relpath(os.path.join(dirpath, d), os.fsencode(root)) + b"/")
        return out, dirs
    (a, a_dirs), (b, b_dirs) = side(old), side(new)
    want = [("added", None, d) for d in b_dirs - a_dirs]
    want += [("removed", d, None) for d in a_dirs - b_dirs]
    gone = {k: v for k, v in a.items() if k not in b}
    came = {k: v for k, v in b.items() if k not in a}
    for k in sorted(set(a) & set(b)):
        if a[k] != b[k]:
            want.append(("modified", k, k))
    for k, v in sorted(gone.items()):
        match = [n for n, w in sorted(came.items()) if w == v]
        if match:
            want.append(("moved", k, match[0]))
            del came[match[0]]
        else:
            want.append(("removed", k, None))
    want += [("added", None, k) for k in sorted(came)]
    assert got == sorted(want)
    assert list(fastsum.diff(old, old)) == []


def test_diff_of_a_manifest_against_a_tree_and_closing_early(tmp_path):
    tree = tmp_path / "t"
    for i in range(5):
        write(tree, b"f%d" % i, b"%d" % i)
    manifest = tmp_path / "MD5SUMS"
    manifest.write_text("".join(
        f"{hashlib.md5(b'%d' % i).hexdigest()}  f{i}\n" for i in range(4)) +
        f"{hashlib.md5(b'x').hexdigest()}  gone\n")
    kinds = sorted((c.kind, c.path) for c in fastsum.diff(manifest, tree))
    assert kinds == [("added", "f4"), ("removed", "gone")]
    gen = fastsum.diff(manifest, tree)
    next(gen)
    gen.close()


def test_dupes_equals_grouping_by_bytes(tmp_path):
    contents = [b"one" * 100, b"two" * 100, b"three", b"", b"unique"]
    for i in range(12):
        write(tmp_path, b"dir%d/file%d" % (i % 4, i), contents[i % 4])
    write(tmp_path, b"solo", contents[4])
    write(tmp_path, b"same-size-other", b"owt" * 100)
    os.link(os.path.join(tmp_path, "solo"), os.path.join(tmp_path, "solo-link"))
    found = fastsum.dupes(tmp_path, "sha256", unique=True)
    groups = sorted(sorted(os.fsencode(p) for p in g.paths) for g in found)
    oracle = defaultdict(list)
    for dirpath, _, names in os.walk(os.fsencode(tmp_path)):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.getsize(p) > 0:
                oracle[open(p, "rb").read()].append(p)
    by_inode = lambda ps: len({os.stat(p).st_ino for p in ps})
    want = sorted(sorted(ps) for ps in oracle.values() if by_inode(ps) >= 2)
    assert groups == want
    for g in found:
        content = open(g.paths[0], "rb").read()
        assert g.digest == hashlib.sha256(content).hexdigest()
        assert g.size == len(content) and g.algorithm == "sha256"
    assert sorted(os.path.basename(os.fsencode(p)) for p in found.unique) == [
        b"same-size-other", b"solo", b"solo-link"]
    with_empty = fastsum.dupes([tmp_path], empty=True)
    assert len(with_empty) == len(found) + 1
    assert found.problems == []


def test_a_missing_operand_raises_file_not_found_everywhere(tmp_path):
    # diff once gave OSError with errno None (missed by `except
    # FileNotFoundError`), dupes raised nothing.
    missing = str(tmp_path / "missing")
    write(tmp_path, b"here/a", b"a\n")
    here = str(tmp_path / "here")
    for call in (lambda: list(fastsum.diff(missing, here)),
                 lambda: list(fastsum.diff(here, missing)),
                 lambda: fastsum.dupes([missing]),
                 lambda: fastsum.dupes([here, missing]),
                 lambda: fastsum.hash_file(missing)):
        with pytest.raises(FileNotFoundError) as e:
            call()
        assert e.value.errno == 2 and e.value.filename.endswith("missing"), e.value
    # A file inside an operand that cannot be read stays a problem record.
    assert fastsum.dupes([here]) is not None
