"""hash_file, hash_files and hash_tree against a hashlib loop."""

import gc
import hashlib
import os
import signal
import threading
import time
import _thread

import pytest

import fastsum


def tasks():
    return len(os.listdir("/proc/self/task"))


def test_hash_file_and_its_errors(tree, tmp_path):
    root, files = tree
    assert fastsum.hash_file(root / "a.txt") == hashlib.md5(b"alpha\n").hexdigest()
    assert fastsum.hash_file(os.fsencode(root / "b" / "z"), "sha256") == hashlib.sha256(
        files[b"b/z"]).hexdigest()
    with pytest.raises(FileNotFoundError) as e:
        fastsum.hash_file(root / "missing")
    assert e.value.errno == 2 and e.value.filename == str(root / "missing")
    with pytest.raises(IsADirectoryError) as e:
        fastsum.hash_file(root / "b")
    assert e.value.filename == str(root / "b")
    with pytest.raises(ValueError, match="valid"):
        fastsum.hash_file(root / "a.txt", "md6")


@pytest.mark.parametrize("threads", [None, 1, 2])
@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "blake2b"])
def test_hash_files_equals_a_hashlib_loop_in_input_order(tree, threads, name):
    root, files = tree
    paths = [os.path.join(os.fsencode(root), rel) for rel in sorted(files, reverse=True)]
    paths = [os.fsdecode(p) for p in paths]  # str, with surrogates for the non-UTF-8 name
    results = fastsum.hash_files(paths, name, threads=threads)
    assert [r.path for r in results] == paths
    for r in results:
        assert r.ok and r.error is None
        assert r.digest == hashlib.new(name, open(r.path, "rb").read()).hexdigest()
        assert r.size == os.path.getsize(r.path)


def test_one_bad_file_never_hides_the_others(tree):
    root, _ = tree
    given = [root / "a.txt", str(root / "missing"), os.fsencode(root / "b"), root / "b" / "z"]
    results = fastsum.hash_files(given)
    assert [r.path for r in results] == given
    assert results[0].digest == hashlib.md5(b"alpha\n").hexdigest()
    assert isinstance(results[1].error, FileNotFoundError) and results[1].digest is None
    assert results[1].error.filename == str(root / "missing")
    assert isinstance(results[2].error, IsADirectoryError)
    assert results[2].error.filename == os.fsencode(root / "b")
    assert results[3].ok
    with pytest.raises(TypeError):
        fastsum.hash_files(str(root))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_a_permission_error(tree):
    root, _ = tree
    os.chmod(root / "a.txt", 0)
    (result,) = fastsum.hash_files([root / "a.txt"])
    assert isinstance(result.error, PermissionError)


def walk_oracle(root):
    """Every regular file under root, as bytes, in byte order, with hashlib digests."""
    out = []
    for dirpath, dirs, names in os.walk(os.fsencode(root)):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                out.append(p)
    return sorted(out)


def test_hash_tree_streams_sorted_paths_with_true_digests(tree):
    root, files = tree
    os.mkfifo(root / "fifo")
    os.symlink("a.txt", root / "link")
    got = list(fastsum.hash_tree(root, "sha1"))
    hashed = [r for r in got if r.ok]
    want = walk_oracle(root)
    assert [os.fsencode(r.path) for r in hashed] == want
    for r in hashed:
        assert r.digest == hashlib.sha1(open(r.path, "rb").read()).hexdigest()
    # str root: str paths where they decode, bytes where they do not.
    kinds = {os.fsencode(r.path): type(r.path) for r in hashed}
    assert kinds[os.path.join(os.fsencode(root), b"nonutf8-\xff\xfe")] is bytes
    assert kinds[os.path.join(os.fsencode(root), b"a.txt")] is str
    skipped = {os.path.basename(os.fsencode(r.path)): r.skipped for r in got if not r.ok}
    assert skipped == {b"fifo": "fifo", b"link": "symbolic link"}
    # bytes root: bytes paths.
    assert all(isinstance(r.path, bytes) for r in fastsum.hash_tree(os.fsencode(root)))
    # -L follows the link.
    followed = [r for r in fastsum.hash_tree(root, follow=True) if r.ok]
    assert len(followed) == len(hashed) + 1


def test_hash_tree_excludes_and_cache(tree, tmp_path_factory):
    root, _ = tree
    kept = [r.path for r in fastsum.hash_tree(root, exclude=["b/", "*.txt"])]
    assert not any("/b/" in str(p) or str(p).endswith(".txt") for p in kept)
    assert kept
    with pytest.raises(ValueError):
        fastsum.hash_tree(root, exclude=["a/**/["])
    cache = tmp_path_factory.mktemp("cache") / "sums.sqlite"
    first = [(r.path, r.digest) for r in fastsum.hash_tree(root, "sha256", cache=cache)]
    assert cache.exists()
    again = [(r.path, r.digest) for r in fastsum.hash_tree(root, "sha256", cache=cache)]
    assert first == again
    # The cache never answers for an edited file.
    with open(root / "a.txt", "ab") as f:
        f.write(b"more")
    os.utime(root / "a.txt", ns=(1, 1))
    edited = dict((r.path, r.digest) for r in fastsum.hash_tree(root, "sha256", cache=cache))
    assert edited[str(root / "a.txt")] == hashlib.sha256(b"alpha\nmore").hexdigest()


@pytest.fixture
def big_tree(tmp_path):
    for d in range(40):
        sub = tmp_path / f"d{d:02}"
        sub.mkdir()
        for f in range(100):
            (sub / f"f{f:03}").write_bytes(b"%d-%d" % (d, f) * 50)
    return tmp_path


def test_a_generator_stopped_early_leaves_no_thread(big_tree):
    before = tasks()
    for _ in range(5):
        gen = fastsum.hash_tree(big_tree, threads=2)
        first = next(gen)
        assert first.ok
        gen.close()
        with pytest.raises(StopIteration):
            next(gen)
        gen = fastsum.hash_tree(big_tree, threads=2)
        next(gen)
        del gen
        gc.collect()
    deadline = time.monotonic() + 5
    while tasks() > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert tasks() == before


def test_ctrl_c_stops_a_long_hash_files_promptly(tmp_path):
    fifo = tmp_path / "slow"
    os.mkfifo(fifo)
    stop = threading.Event()

    def slow_writer():
        with open(fifo, "wb", buffering=0) as f:
            while not stop.wait(0.05):
                f.write(b"x")

    writer = threading.Thread(target=slow_writer)
    writer.start()
    # Python's own Ctrl-C handler, whatever this process inherited: a
    # process started in the background by a shell without job control
    # inherits SIGINT ignored, and then interrupt_main() does nothing.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            fastsum.hash_files([fifo])
        assert time.monotonic() - started < 3
    finally:
        signal.signal(signal.SIGINT, inherited)
        stop.set()
        writer.join()


def test_the_iterators_are_exported_as_the_stubs_name_them(tree):
    # __init__.pyi types hash_tree and diff with these classes
    # (mypy.stubtest holds the stubs to the package's names).
    root, _ = tree
    walk = fastsum.hash_tree(root)
    assert isinstance(walk, fastsum.TreeIterator)
    walk.close()
    changes = fastsum.diff(root, root)
    assert isinstance(changes, fastsum.DiffIterator)
    assert list(changes) == []
