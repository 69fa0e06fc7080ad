"""fastsum.dask against the CLI: the cluster's manifest equals `fastsum -r`
byte for byte. A LocalCluster for the quick cases; a real `dask scheduler`
and two `dask worker` processes on 127.0.0.1 for the command and for a
worker killed mid-run."""

import io
import json as jsonlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
import fastsum.dask as fdask  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


def cli():
    for build in ("debug", "release"):
        path = REPO / "target" / build / "fastsum"
        if path.exists():
            return str(path)
    subprocess.run(["cargo", "build", "-q", "-p", "fastsum-cli"], cwd=REPO, check=True)
    return str(REPO / "target" / "debug" / "fastsum")


def run_cli(*args):
    p = subprocess.run([cli(), *map(os.fsencode, args)], capture_output=True)
    # The CLI names itself by argv[0]; the runner says "fastsum".
    return p.returncode, p.stdout, p.stderr.replace(os.fsencode(cli()) + b":", b"fastsum:")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as c, \
            distributed.Client(c) as client:
        yield client


@pytest.fixture
def odd_tree(tmp_path):
    root = tmp_path / "root"
    names = [b"a.txt", b"a/b", b"a b/c", b"back\\slash", b"new\nline", b"non-utf8-\xff",
             b"quote'\"$(x)", b"z/deep/er/still/f", b"big.bin", b"a.b/x"]
    for i in range(40):
        names.append(b"many/%02d/f%d" % (i % 7, i))
    for n in names:
        p = os.path.join(os.fsencode(root), n)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(os.urandom(3_000_000) if n == b"big.bin" else n * 7)
    os.mkfifo(root / "fifo")
    os.mkfifo(root / "many" / "odd fifo'$x")  # its message is quoted as the CLI quotes it
    os.symlink("a.txt", root / "link")
    return root


def run_dask(client, root, algorithm="md5", **kw):
    out, err = io.BytesIO(), io.BytesIO()
    status = fdask.hash_tree(root, client, algorithm, out=out, err=err, **kw)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("algorithm", ["md5", "sha256", "blake3"])
def test_the_manifest_equals_the_clis_byte_for_byte(cluster, odd_tree, algorithm):
    want = run_cli("-a", algorithm, "-r", odd_tree)
    got = run_dask(cluster, str(odd_tree), algorithm)
    assert got[1] == want[1]
    assert got[0] == want[0] == 0
    # The FIFO and the symlink are said on stderr, as the CLI says them.
    assert got[2].splitlines() == want[2].splitlines()


def test_shards_of_very_different_sizes_and_json(cluster, odd_tree):
    want = run_cli("--json", "-r", odd_tree)
    for shard_bytes, shard_files in [(1, 1), (1000, 3), (10 << 20, 7), (1 << 40, 10**6)]:
        got = run_dask(cluster, str(odd_tree), json=True, shard_bytes=shard_bytes,
                       shard_files=shard_files)
        assert got[1] == want[1], (shard_bytes, shard_files)
        assert got[0] == want[0]
    records = [jsonlib.loads(line) for line in want[1].splitlines()]
    assert any(r.get("skipped") == "symbolic link" for r in records)


def test_excludes_and_a_root_spelled_with_a_slash(cluster, odd_tree):
    want = run_cli("-r", "--exclude", "many/", "--exclude", "*.txt", f"{odd_tree}/")
    got = run_dask(cluster, f"{odd_tree}/", exclude=["many/", "*.txt"])
    assert got[1] == want[1] and got[0] == want[0]


def test_a_missing_root_fails_as_the_cli_fails(cluster, tmp_path):
    want = run_cli("-r", tmp_path / "nothing")
    got = run_dask(cluster, str(tmp_path / "nothing"))
    assert got[0] == want[0] == 1
    assert got[1] == want[1] == b""
    assert b"No such file or directory" in got[2] and b"nothing" in got[2]


def test_a_file_that_goes_away_after_listing_is_an_error_line(cluster, odd_tree):
    _, before, _ = run_cli("-r", odd_tree)
    victim = odd_tree / "a" / "b"
    got = run_dask(cluster, str(odd_tree), _after_listing=lambda: victim.unlink())
    assert got[0] == 1
    assert got[1] == b"".join(l for l in before.splitlines(keepends=True)
                               if not l.endswith(b"/a/b\n"))
    assert str(victim).encode() + b": No such file or directory" in got[2]


def test_a_shard_starts_at_its_cut_and_refuses_an_offset_that_lies(odd_tree):
    """A shard task reads its paths from the byte offset its cut gives; an
    offset inside a path, past the end, or notes out of order is refused,
    never a manifest of other paths."""
    from fastsum import _fastsum

    listing = _fastsum._list(os.fsencode(odd_tree), None, [], False)
    cuts = _fastsum._cuts(listing, 1 << 40, 7)
    assert len(cuts) > 3
    paths = listing[0].split(b"\0")
    whole = b""
    for start, end, first, last, offset in cuts:
        assert listing[0][offset:].startswith(first + b"\0")
        assert (paths[start], paths[end - 1]) == (first, last)
        given = _fastsum._hash_shard(listing, start, end, "md5", False, 1, offset)
        scanned = _fastsum._hash_shard(listing, start, end, "md5", False, 1)
        assert given == scanned
        whole += given[0]
    assert whole == run_cli("-r", odd_tree)[1]
    start, end, _, _, offset = cuts[2]
    for bad in (offset + 1, len(listing[0]) + 5, len(listing[0])):
        with pytest.raises(ValueError, match="not a listing"):
            _fastsum._hash_shard(listing, start, end, "md5", False, 1, bad)
    # The last cut's offset given to a shard of more items than remain.
    last_offset = cuts[-1][4]
    with pytest.raises(ValueError, match="not a listing"):
        _fastsum._hash_shard(listing, cuts[1][0], cuts[-1][1], "md5", False, 1, last_offset)
    notes = listing[3]
    assert len(notes) >= 2
    shuffled = (listing[0], listing[1], listing[2], list(reversed(notes)))
    with pytest.raises(ValueError, match="not a listing"):
        _fastsum._hash_shard(shuffled, start, end, "md5", False, 1, offset)
    with pytest.raises(ValueError, match="not a listing"):
        _fastsum._cuts((listing[0][:-1], listing[1], listing[2], notes), 1 << 40, 7)


def test_a_file_that_becomes_a_fifo_after_listing_is_an_error_not_a_wait(cluster, odd_tree):
    """Between listing and hashing a file is replaced by a FIFO with no
    writer: its shard must not wait for one (the worker would hang) nor
    answer the empty digest: the line is an error and the run ends."""
    target = odd_tree / "a.txt"

    def swap():
        target.unlink()
        os.mkfifo(target)

    status, out, err = run_dask(cluster, odd_tree, _after_listing=swap)
    assert status == 1
    assert b"a.txt: not a regular file\n" in err
    assert b" a.txt\n" not in out and b"/a.txt\n" not in out
    _, out_cli, _ = run_cli("-r", odd_tree)
    # Everything else is the CLI's (the CLI now skips the FIFO).
    assert out == out_cli


def test_an_unknown_algorithm_is_refused_before_any_task(cluster, odd_tree):
    with pytest.raises(ValueError, match="valid"):
        run_dask(cluster, str(odd_tree), "md6")


@pytest.fixture
def real_cluster(tmp_path):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1."""
    bindir = Path(sys.executable).parent
    env = dict(os.environ, FASTSUM_DASK_SHARD_DELAY="0.4")
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen(
        [bindir / "dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", sched_file],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    deadline = time.monotonic() + 60
    while not sched_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    address = jsonlib.loads(sched_file.read_text())["address"]
    assert address.startswith("tcp://127.0.0.1:")
    for _ in range(2):
        procs.append(subprocess.Popen(
            [bindir / "dask", "worker", address, "--nthreads", "1", "--host", "127.0.0.1",
             "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True))
    with distributed.Client(address) as client:
        client.wait_for_workers(2, timeout=60)
    try:
        yield address, procs
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def test_the_command_on_a_real_cluster_survives_a_killed_worker(real_cluster, odd_tree):
    address, procs = real_cluster
    want = run_cli("-a", "sha1", "-r", odd_tree)
    run = subprocess.Popen(
        [sys.executable, "-m", "fastsum.dask", "--scheduler", address, "-a", "sha1",
         "-r", odd_tree, "--shard-files", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # 14 shards of 0.4 s on two workers: kill one while tasks run.
    time.sleep(1.5)
    assert run.poll() is None, "the run ended before a worker could be killed"
    os.killpg(procs[1].pid, signal.SIGKILL)
    out, err = run.communicate(timeout=120)
    assert out == want[1]
    assert run.returncode == 0, err


def test_an_unreachable_scheduler_is_one_line_and_status_2(tmp_path):
    # Once a traceback after 30 s; now one line after --timeout.
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "fastsum.dask", "--scheduler", f"tcp://127.0.0.1:{port}",
         "-r", str(tmp_path), "--timeout", "2"],
        capture_output=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert run.stdout == b""
    lines = run.stderr.decode().splitlines()
    assert len(lines) == 1 and "cannot reach the scheduler" in lines[0], run.stderr
    assert "Traceback" not in run.stderr.decode()
    assert time.monotonic() - started < 30
