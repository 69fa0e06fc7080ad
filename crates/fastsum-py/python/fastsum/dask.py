"""Hash a tree too big for one host on a Dask cluster (``distributed``).

    fastsum.dask.hash_tree(root, client=None, algorithm="md5", *, exclude=(),
                           follow=False, json=False, shard_bytes=256 MiB,
                           shard_files=20000, out=None, err=None) -> exit status
    python -m fastsum.dask --scheduler ADDRESS -r ROOT [-a ALGO] [--json] > MANIFEST

The output is byte-identical to ``fastsum -r ROOT`` on one host (same
order, same escaping, the same records in ``--json``), written as it is
known. How:

1. The client reads the root's own entries (one ``readdir``) and sorts them
   as the walk does; the listing itself is done by tasks (about four per
   worker), each walking a run of consecutive top-level entries in
   fastsum's sorted order on a worker.
2. As each listing comes back (in order), it is cut into shards of
   consecutive files, balanced by bytes (``shard_bytes``) and by count
   (``shard_files``), and each shard becomes a task that runs fastsum's own
   pipeline (every core of its worker, the SIMD lanes) on the shared file
   system and returns its exact output bytes.
3. Shards are consecutive runs of the sorted walk, so their outputs,
   written in shard order, are the single-host output: no record is held
   in the client beyond the shards that finished ahead of an earlier one.

A file that cannot be read is an error line, as in the CLI (exit 1). A task
that fails is retried by Dask (``retries``); a worker that dies has its
tasks rescheduled. A shard that still cannot be done is named on stderr
with its first and last path, and the exit status is 2: never a manifest
that silently lacks files.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, Optional, Tuple, Union

from . import _fastsum

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["hash_tree", "main"]

_StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# A listing as `_fastsum._list` returns it and the other tasks take it back:
# (paths, kinds, sizes, notes), opaque to Python.
_Listing = Tuple[bytes, bytes, bytes, Any]
# Where a listing is cut: (start, end, first path, last path, byte offset of
# the first path).
_Cut = Tuple[int, int, bytes, bytes, int]
# What a shard task returns: (stdout, stderr, files failed, symlinks left out).
_ShardOutput = Tuple[bytes, bytes, int, int]


def _list_task(root: bytes, names: Optional[list[bytes]], exclude: Iterable[str],
               follow: bool) -> _Listing:
    return _fastsum._list(root, names, list(exclude), follow)


def _cuts_task(listing: _Listing, shard_bytes: int, shard_files: int) -> list[_Cut]:
    """Where a listing is cut into shards: (start, end, first path, last
    path). Computed next to the listing, so the client never fetches it."""
    return _fastsum._cuts(listing, shard_bytes, shard_files)


def _shard_task(listing: _Listing, start: int, end: int, algorithm: str, json: bool,
                threads: Optional[int], offset: int) -> _ShardOutput:
    # A test hook: tests slow shards down to kill a worker mid-run.
    delay = float(os.environ.get("FASTSUM_DASK_SHARD_DELAY", "0") or 0)
    if delay:
        import time

        time.sleep(delay)
    return _fastsum._hash_shard(listing, start, end, algorithm, json, threads, offset)


def _sort_key(name: bytes, is_dir: bool) -> bytes:
    # The walk's order: a directory's name sorts as if it ended in "/".
    return name + b"/" if is_dir else name


def _top_level(root: bytes, follow: bool, jobs_wanted: int) -> list[list[bytes]]:
    """The root's entries in the walk's order, grouped into about
    ``jobs_wanted`` listing jobs of consecutive entries (a job per entry
    would cost the scheduler more than the listing: a few ms a task)."""
    entries: list[tuple[bytes, bytes, bool]] = []
    with os.scandir(root) as it:
        for e in it:
            try:
                is_dir = e.is_dir(follow_symlinks=follow)
            except OSError:
                is_dir = False
            entries.append((_sort_key(e.name, is_dir), e.name, is_dir))
    entries.sort()
    per_job = max(1, -(-len(entries) // max(1, jobs_wanted)))
    names = [name for _, name, _ in entries]
    return [names[i:i + per_job] for i in range(0, len(names), per_job)]


def hash_tree(root: _StrOrBytesPath, client: Optional[Client] = None, algorithm: str = "md5", *,
              exclude: Iterable[str] = (), follow: bool = False, json: bool = False,
              shard_bytes: int = 256 << 20, shard_files: int = 20000,
              threads: Optional[int] = None, retries: int = 3,
              out: Optional[BinaryIO] = None, err: Optional[BinaryIO] = None,
              _after_listing: Optional[Callable[[], object]] = None) -> int:
    """Hashes ``root`` on the cluster ``client`` talks to (the default
    client if None), writing ``fastsum -r``'s output to ``out`` (bytes;
    stdout by default) and its messages to ``err``; returns the exit
    status the CLI would (0 all hashed, 1 some file failed, 2 a shard
    could not be done)."""
    from distributed import default_client, wait  # the [dask] extra

    client = client or default_client()
    out = out or sys.stdout.buffer
    err = err or sys.stderr.buffer
    root_b = os.fsencode(root)
    excludes = list(exclude)
    _fastsum.new(algorithm)  # an unknown name fails here, before any task
    jobs: list[tuple[bytes, Optional[list[bytes]]]]
    if os.path.isdir(root_b):
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        jobs = [(root_b, names) for names in _top_level(root_b, follow, 4 * workers)]
    else:
        jobs = [(root_b, None)]  # a file, or a missing root: the walk says which
    listings = [client.submit(_list_task, r, names, excludes, follow, pure=False,
                              retries=retries) for r, names in jobs]
    cuts = [client.submit(_cuts_task, listing, shard_bytes, shard_files, pure=False,
                          retries=retries) for listing in listings]
    shards: list[tuple[Any, bytes, bytes]] = []  # (future, first path, last path), in order
    failed_listings: list[tuple[Optional[list[bytes]], BaseException]] = []
    # The listings stay on the workers: the client fetches only where they
    # are cut, and each shard task takes its slice of the listing there.
    # One gather for every cut that worked, not a round trip each.
    wait(cuts)
    good = [(listing, cut) for listing, cut in zip(listings, cuts) if cut.status == "finished"]
    for cut, (_, names) in zip(cuts, jobs):
        if cut.status != "finished":
            failed_listings.append((names, cut.exception()))
    planned = list(zip([listing for listing, _ in good],
                       client.gather([cut for _, cut in good])))
    if _after_listing:
        _after_listing()  # tests change the tree between listing and hashing
    for listing, ranges in planned:
        for start, end, first, last, offset in ranges:
            future = client.submit(_shard_task, listing, start, end, algorithm, json, threads,
                                   offset, pure=False, retries=retries)
            shards.append((future, first, last))
    failures = symlinks = 0
    missing: list[tuple[bytes, bytes, BaseException]] = []
    done = 0
    while done < len(shards):
        # Wait for the next shard in order, then take it and every shard
        # after it that is also finished, in one gather.
        wait([shards[done][0]])
        batch: list[tuple[Any, bytes, bytes]] = []
        while done + len(batch) < len(shards) and \
                shards[done + len(batch)][0].status in ("finished", "error"):
            batch.append(shards[done + len(batch)])
        fine = [f for f, _, _ in batch if f.status == "finished"]
        results = iter(client.gather(fine))
        for future, first, last in batch:
            if future.status != "finished":
                missing.append((first, last, future.exception()))
                continue
            stdout, stderr, failed, links = next(results)
            out.write(stdout)
            err.write(stderr)
            failures += failed
            symlinks += links
            future.release()
        out.flush()
        done += len(batch)
    if symlinks and not json:
        what = "symbolic link" if symlinks == 1 else "symbolic links"
        err.write(f"fastsum: {symlinks} {what} left out (-L follows them)\n".encode())
    for names, e in failed_listings:
        shown = b", ".join(names or [root_b]).decode(errors="replace")
        # The root as its bytes say (a bytes root is not shown as b'...',
        # a name that is not UTF-8 cannot fail the message's encoding).
        where = root_b.decode(errors="replace")
        err.write(f"fastsum: {where}: listing of {shown} could not be done: {e}\n".encode())
    for first, last, e in missing:
        err.write(b"fastsum: shard " + first + b" .. " + last
                  + f" could not be done: {e}\n".encode())
    if failed_listings or missing:
        err.write(b"fastsum: the manifest is incomplete\n")
        err.flush()
        return 2
    err.flush()
    return 1 if failures else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m fastsum.dask",
        description="fastsum -r on a Dask cluster: the same manifest as one host's run.")
    ap.add_argument("--scheduler", required=True, help="the scheduler's address (tcp://HOST:PORT)")
    ap.add_argument("-r", "--recursive", dest="root", required=True, metavar="ROOT",
                    help="the tree to hash (on a file system every worker sees)")
    ap.add_argument("-a", "--algorithm", default="md5")
    ap.add_argument("--json", action="store_true", help="JSON Lines, as fastsum --json")
    ap.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    ap.add_argument("-L", "--follow", action="store_true")
    ap.add_argument("--shard-bytes", type=int, default=256 << 20)
    ap.add_argument("--shard-files", type=int, default=20000)
    ap.add_argument("--timeout", type=float, default=30, metavar="SECONDS",
                    help="how long to try to reach the scheduler (default 30)")
    args = ap.parse_args(argv)
    from distributed import Client

    try:
        client = Client(args.scheduler, timeout=args.timeout)
    except (OSError, TimeoutError) as e:
        # A traceback tells a user nothing they can act on.
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"python -m fastsum.dask: cannot reach the scheduler at {args.scheduler}"
              f" within {args.timeout:g} s: {why}", file=sys.stderr)
        return 2
    with client:
        return hash_tree(os.fsdecode(args.root), client, args.algorithm,
                         exclude=args.exclude, follow=args.follow, json=args.json,
                         shard_bytes=args.shard_bytes, shard_files=args.shard_files)


if __name__ == "__main__":
    sys.exit(main())
