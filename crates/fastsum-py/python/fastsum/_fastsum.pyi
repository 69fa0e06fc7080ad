"""The native module (PyO3). Its public names are the package's, typed in
__init__.pyi and re-exported here one by one (mypy.stubtest checks each
against this module at run time); the three private functions are the
Dask runner's tasks (fastsum/dask.py)."""

from typing import Any, Optional

__all__ = [
    "Change",
    "CheckResult",
    "ContainedIterator",
    "DiffIterator",
    "Dupes",
    "FileResult",
    "Group",
    "Hash",
    "TreeIterator",
    "Verdict",
    "__version__",
    "_cuts",
    "_hash_shard",
    "_list",
    "algorithms_available",
    "blake2b",
    "blake3",
    "check",
    "contained",
    "diff",
    "dupes",
    "hash_file",
    "hash_files",
    "hash_tree",
    "md5",
    "new",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3_224",
    "sha3_256",
    "sha3_384",
    "sha3_512",
    "sm3",
    "xxh3",
    "xxh32",
    "xxh64",
    "xxh128",
]

from . import (
    Change as Change,
    CheckResult as CheckResult,
    ContainedIterator as ContainedIterator,
    DiffIterator as DiffIterator,
    Dupes as Dupes,
    FileResult as FileResult,
    Group as Group,
    Hash as Hash,
    TreeIterator as TreeIterator,
    Verdict as Verdict,
    __version__ as __version__,
    algorithms_available as algorithms_available,
    blake2b as blake2b,
    blake3 as blake3,
    check as check,
    contained as contained,
    diff as diff,
    dupes as dupes,
    hash_file as hash_file,
    hash_files as hash_files,
    hash_tree as hash_tree,
    md5 as md5,
    new as new,
    sha1 as sha1,
    sha224 as sha224,
    sha256 as sha256,
    sha384 as sha384,
    sha512 as sha512,
    sha3_224 as sha3_224,
    sha3_256 as sha3_256,
    sha3_384 as sha3_384,
    sha3_512 as sha3_512,
    sm3 as sm3,
    xxh3 as xxh3,
    xxh32 as xxh32,
    xxh64 as xxh64,
    xxh128 as xxh128,
)

# (paths, kinds, sizes, notes): opaque to Python, handed back as it came.
_Listing = tuple[bytes, bytes, bytes, Any]

def _list(
    root: bytes, names: Optional[list[bytes]], exclude: list[str] = ..., follow: bool = False
) -> _Listing: ...
def _cuts(
    listing: _Listing, shard_bytes: int, shard_files: int
) -> list[tuple[int, int, bytes, bytes, int]]: ...
def _hash_shard(
    listing: _Listing,
    start: int,
    end: int,
    algorithm: str = "md5",
    json: bool = False,
    threads: Optional[int] = None,
    offset: Optional[int] = None,
) -> tuple[bytes, bytes, int, int]: ...
