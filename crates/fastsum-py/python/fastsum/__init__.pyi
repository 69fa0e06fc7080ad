"""Type stubs for fastsum (the native module is fastsum._fastsum).

scripts/tests/python holds them to the built package with mypy.stubtest:
every name, its kind and its signature as it is at run time. The classes
are native (PyO3): none can be subclassed (@final)."""

import os
from collections.abc import Iterable, Iterator
from typing import Optional, Union, final

from typing_extensions import Buffer

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
    "algorithms_available",
    "algorithms_guaranteed",
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

_StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_PathOut = Union[str, bytes]

__version__: str
algorithms_available: frozenset[str]
algorithms_guaranteed: frozenset[str]

@final
class Hash:
    """A running hash with hashlib's interface."""

    @property
    def name(self) -> str: ...
    @property
    def digest_size(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    def update(self, data: Buffer) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> Hash: ...

def new(name: str, data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def md5(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha1(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha224(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha256(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha384(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha512(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def blake2b(
    data: Optional[Buffer] = None, *, digest_size: int = 64, usedforsecurity: bool = True
) -> Hash: ...
def blake3(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def xxh32(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def xxh64(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def xxh3(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def xxh128(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sm3(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha3_224(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha3_256(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha3_384(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...
def sha3_512(data: Optional[Buffer] = None, *, usedforsecurity: bool = True) -> Hash: ...

@final
class FileResult:
    """One file: its digest, or the error that kept it from being hashed."""

    path: _PathOut
    digest: Optional[str]
    size: Optional[int]
    error: Optional[OSError]
    skipped: Optional[str]
    @property
    def ok(self) -> bool: ...

def hash_file(
    path: _StrOrBytesPath, algorithm: str = "md5", *, part_size: Optional[int] = None
) -> str: ...
def hash_files(
    paths: Iterable[_StrOrBytesPath],
    algorithm: str = "md5",
    threads: Optional[int] = None,
    *,
    part_size: Optional[int] = None,
) -> list[FileResult]: ...

@final
class TreeIterator(Iterator[FileResult]):
    def __next__(self) -> FileResult: ...
    def close(self) -> None: ...

def hash_tree(
    root: _StrOrBytesPath,
    algorithm: str = "md5",
    *,
    exclude: Iterable[str] = ...,
    follow: bool = False,
    cache: Optional[_StrOrBytesPath] = None,
    threads: Optional[int] = None,
    part_size: Optional[int] = None,
) -> TreeIterator: ...

@final
class CheckResult:
    path: _PathOut
    status: str
    error: Optional[OSError]
    @property
    def ok(self) -> bool: ...

def check(
    manifest: _StrOrBytesPath,
    algorithm: Optional[str] = None,
    *,
    root: Optional[_StrOrBytesPath] = None,
    threads: Optional[int] = None,
) -> list[CheckResult]: ...

@final
class Change:
    kind: str
    path: _PathOut
    old_path: Optional[_PathOut]
    new_path: Optional[_PathOut]
    old_digest: Optional[str]
    new_digest: Optional[str]
    size: Optional[int]
    error: Optional[str]

@final
class DiffIterator(Iterator[Change]):
    def __next__(self) -> Change: ...
    def close(self) -> None: ...

def diff(
    old: _StrOrBytesPath,
    new: _StrOrBytesPath,
    algorithm: Optional[str] = None,
    *,
    all: bool = False,
    exclude: Iterable[str] = ...,
    follow: bool = False,
    threads: Optional[int] = None,
    download: bool = False,
) -> DiffIterator: ...

@final
class Group:
    size: int
    digest: str
    algorithm: str
    paths: list[_PathOut]
    def __len__(self) -> int: ...

@final
class Dupes:
    groups: list[Group]
    unique: list[_PathOut]
    problems: list[tuple[_PathOut, str]]
    def __iter__(self) -> Iterator[Group]: ...
    def __len__(self) -> int: ...

def dupes(
    paths: Union[_StrOrBytesPath, Iterable[_StrOrBytesPath]],
    algorithm: str = "xxh128",
    *,
    min_size: int = 0,
    max_size: Optional[int] = None,
    empty: bool = False,
    hard_links: bool = False,
    verify: bool = False,
    unique: bool = False,
    exclude: Iterable[str] = ...,
    follow: bool = False,
    threads: Optional[int] = None,
) -> Dupes: ...

@final
class Verdict:
    kind: str
    path: _PathOut
    size: Optional[int]
    archive: Optional[_PathOut]
    copy: Optional[_PathOut]
    error: Optional[str]
    @property
    def contained(self) -> bool: ...

@final
class ContainedIterator(Iterator[Verdict]):
    def __next__(self) -> Verdict: ...
    def close(self) -> None: ...

def contained(
    sources: Union[_StrOrBytesPath, Iterable[_StrOrBytesPath]],
    archives: Union[_StrOrBytesPath, Iterable[_StrOrBytesPath]],
    algorithm: Optional[str] = None,
    *,
    exclude: Iterable[str] = ...,
    one_file_system: bool = False,
    verify: bool = False,
    threads: Optional[int] = None,
    download: bool = False,
) -> ContainedIterator: ...
