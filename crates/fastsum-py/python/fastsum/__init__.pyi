"""Type stubs for fastsum (the native module is fastsum._fastsum)."""

import os
from collections.abc import Iterable, Iterator
from typing import Optional, Union

from typing_extensions import Buffer

StrOrBytesPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
PathOut = Union[str, bytes]

__version__: str
algorithms_available: frozenset[str]
algorithms_guaranteed: frozenset[str]

class Hash:
    """A running hash with hashlib's interface."""

    @property
    def name(self) -> str: ...
    @property
    def digest_size(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    def update(self, data: Buffer, /) -> None: ...
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

class FileResult:
    """One file: its digest, or the error that kept it from being hashed."""

    path: PathOut
    digest: Optional[str]
    size: Optional[int]
    error: Optional[OSError]
    skipped: Optional[str]
    @property
    def ok(self) -> bool: ...

def hash_file(path: StrOrBytesPath, algorithm: str = "md5") -> str: ...
def hash_files(
    paths: Iterable[StrOrBytesPath], algorithm: str = "md5", threads: Optional[int] = None
) -> list[FileResult]: ...

class TreeIterator(Iterator[FileResult]):
    def __next__(self) -> FileResult: ...
    def close(self) -> None: ...

def hash_tree(
    root: StrOrBytesPath,
    algorithm: str = "md5",
    *,
    exclude: Iterable[str] = (),
    follow: bool = False,
    cache: Optional[StrOrBytesPath] = None,
    threads: Optional[int] = None,
) -> TreeIterator: ...

class CheckResult:
    path: PathOut
    status: str
    error: Optional[OSError]
    @property
    def ok(self) -> bool: ...

def check(
    manifest: StrOrBytesPath,
    algorithm: Optional[str] = None,
    *,
    root: Optional[StrOrBytesPath] = None,
    threads: Optional[int] = None,
) -> list[CheckResult]: ...

class Change:
    kind: str
    path: PathOut
    old_path: Optional[PathOut]
    new_path: Optional[PathOut]
    old_digest: Optional[str]
    new_digest: Optional[str]
    size: Optional[int]
    error: Optional[str]

class DiffIterator(Iterator[Change]):
    def __next__(self) -> Change: ...
    def close(self) -> None: ...

def diff(
    old: StrOrBytesPath,
    new: StrOrBytesPath,
    algorithm: Optional[str] = None,
    *,
    all: bool = False,
    exclude: Iterable[str] = (),
    follow: bool = False,
    threads: Optional[int] = None,
) -> DiffIterator: ...

class Group:
    size: int
    digest: str
    algorithm: str
    paths: list[PathOut]
    def __len__(self) -> int: ...

class Dupes:
    groups: list[Group]
    unique: list[PathOut]
    problems: list[tuple[PathOut, str]]
    def __iter__(self) -> Iterator[Group]: ...
    def __len__(self) -> int: ...

def dupes(
    paths: Union[StrOrBytesPath, Iterable[StrOrBytesPath]],
    algorithm: str = "xxh128",
    *,
    min_size: int = 0,
    max_size: Optional[int] = None,
    empty: bool = False,
    hard_links: bool = False,
    verify: bool = False,
    unique: bool = False,
    exclude: Iterable[str] = (),
    follow: bool = False,
    threads: Optional[int] = None,
) -> Dupes: ...
