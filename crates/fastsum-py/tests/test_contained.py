"""contained against an oracle computed here: every file's bytes read."""

import hashlib
import os
import random

import pytest

import fastsum


def write(root, rel, content):
    path = os.path.join(os.fsencode(root), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)
    return path


def files_under(root):
    for dirpath, _, names in os.walk(os.fsencode(root)):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                yield p


def oracle(sources, archives):
    """{source path: contained?}, by the bytes of every file on both sides."""
    held = {open(p, "rb").read() for a in archives for p in files_under(a)}
    return {p: open(p, "rb").read() in held for s in sources for p in files_under(s)}


@pytest.fixture
def trees(tmp_path):
    """A seeded source and archive: copies under other names and depths,
    same-size other bytes, first- and last-byte differences, empty files,
    a hard link, a symlink, a newline and invalid UTF-8 in names."""
    rng = random.Random(65)
    src, arc = tmp_path / "src", tmp_path / "arc"
    blobs = [rng.randbytes(rng.choice([1, 100, 4096, 4097, 9000, 70000])) for _ in range(30)]
    for i, blob in enumerate(blobs):
        write(src, b"d%d/f%d" % (i % 5, i), blob)
        kind = i % 5
        if kind == 0:
            write(arc, b"x/y/copy-%d.bin" % i, blob)  # a copy elsewhere
        elif kind == 1:
            write(arc, b"other-%d" % i, bytes([blob[0] ^ 1]) + blob[1:])  # first byte
        elif kind == 2:
            write(arc, b"last-%d" % i, blob[:-1] + bytes([blob[-1] ^ 1]))  # last byte
        elif kind == 3:
            write(arc, b"same\nname-\xff%d" % i, blob)  # odd name, same bytes
        # kind 4: nowhere
    write(src, b"empty", b"")
    write(arc, b"also-empty", b"")
    write(src, b"line\nbreak-\xfe", blobs[0])
    os.link(os.path.join(os.fsencode(src), b"d1/f1"), os.path.join(os.fsencode(src), b"hard"))
    os.symlink(os.path.join(os.fsencode(arc), b"other-1"), os.path.join(os.fsencode(src), b"link"))
    return src, arc


def test_contained_matches_the_oracle_on_a_tree(trees):
    src, arc = trees
    got = {}
    skipped = []
    for v in fastsum.contained(os.fsencode(src), [os.fsencode(arc)]):
        assert v.kind in ("contained", "missing", "skipped"), (v.kind, v.error)
        if v.kind == "skipped":
            skipped.append(v.path)
            continue
        got[v.path] = v.contained
        assert v.size == os.path.getsize(v.path)
        if v.contained:
            assert v.archive == os.fsencode(arc)
            assert open(v.copy, "rb").read() == open(v.path, "rb").read()
    assert got == oracle([src], [arc])
    assert skipped == [os.path.join(os.fsencode(src), b"link")]
    assert any(got.values()) and not all(got.values())


def test_contained_in_a_manifest_of_the_archive_gives_the_same_answer(trees, tmp_path):
    src, arc = trees
    lines = []
    for p in files_under(arc):
        if b"\n" in p or b"\\" in p:
            continue  # md5sum escapes such names; the plain format is enough here
        lines.append(b"%s  %s\n" % (hashlib.sha256(open(p, "rb").read()).hexdigest().encode(), p))
    listed = tmp_path / "SHA256SUMS"
    listed.write_bytes(b"".join(lines))
    plain = [p for p in files_under(arc) if b"\n" not in p and b"\\" not in p]
    held = {open(p, "rb").read() for p in plain}
    want = {p: open(p, "rb").read() in held for p in files_under(src)}
    got = {
        v.path: v.contained
        for v in fastsum.contained(os.fsencode(src), os.fsencode(listed), "sha256")
        if v.kind != "skipped"
    }
    assert got == want


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_a_problem_never_an_answer(trees):
    src, arc = trees
    locked = os.path.join(os.fsencode(src), b"d0/f0")
    os.chmod(locked, 0)
    verdicts = {v.path: v for v in fastsum.contained(os.fsencode(src), os.fsencode(arc))}
    assert verdicts[locked].kind == "problem" and verdicts[locked].error


def test_a_missing_archive_raises_and_close_stops_the_generator(trees, tmp_path):
    src, arc = trees
    with pytest.raises(FileNotFoundError):
        fastsum.contained(src, tmp_path / "nowhere")
    run = fastsum.contained(str(src), [str(arc)])
    first = next(run)
    assert isinstance(first.path, str)
    run.close()
    assert list(run) == []
